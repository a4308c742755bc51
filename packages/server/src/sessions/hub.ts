import {
  type Agent,
  type AgentError,
  isAgentError,
  type Message,
  type PendingToolCall,
  type RunningTurn,
  type Session,
  type SessionStorage,
  type TurnRunOptions,
} from '@youyou/agent';
import { HttpError } from '../http/errors.js';
import { eventLogOf, type SessionEventLog } from './event-log.js';
import type { HeldElicitationChange } from './held-elicitations.js';
import type { ServerEventPayload, SessionJournal } from './journal.js';
import { SessionRetention } from './retention.js';
import { savedTenantOf, TENANT_METADATA_KEY, tenantMemoryNamespace } from './tenants.js';

interface OpenSession {
  session: Session;
  idleTimer: NodeJS.Timeout | undefined;
}

/**
 * The sessions the server holds on its agent: opened on demand (new or resumed), each turn's events pumped
 * into the session's journal, and closed after `idleMs` without a running turn so their slots free up.
 */
export class SessionHub {
  private readonly open = new Map<string, OpenSession>();
  private readonly opening = new Map<string, Promise<OpenSession>>();
  /** The journals and tenants of the sessions met here, and when they are forgotten. */
  private readonly retention: SessionRetention;
  private readonly pumped = new WeakSet<RunningTurn>();
  /** The turns this hub started to continue a cut turn on its own (see `autoContinue`). */
  private readonly continuations = new WeakSet<RunningTurn>();
  private readonly pumps = new Set<Promise<void>>();
  /** The turn each question still held was announced in. */
  private readonly elicitationTurns = new Map<string, string>();
  private readonly log: SessionEventLog | undefined;

  constructor(
    private readonly options: {
      agent: Agent;
      /** The run options of a tenant's turns (its spend limit): a cut turn continued here runs with them too. */
      turnOptionsOf: (tenant: string) => Promise<TurnRunOptions | undefined>;
      storage: SessionStorage | undefined;
      idleMs: number;
      journalCapacity: number;
      journalRetentionMs: number;
      /** The bytes all journals may keep together (see journal-budget.ts). */
      journalMaxBytes: number;
      /** The `Retry-After` of a 429 SERVER_BUSY, in seconds. */
      busyRetryAfterSeconds: number;
      /** Whether a session taken with a turn a crash cut continues that turn at once (else on request). */
      autoContinue: boolean;
    },
  ) {
    this.log = eventLogOf(options.storage);
    this.retention = new SessionRetention({
      open: this.open,
      opening: this.opening,
      journalCapacity: options.journalCapacity,
      journalRetentionMs: options.journalRetentionMs,
      journalMaxBytes: options.journalMaxBytes,
    });
  }

  /** Creates a session owned by `tenant`; the tenant is saved in its log before anyone can see the id. */
  async create(tenant: string, config: { modelId?: string }): Promise<string> {
    const sessionConfig = { ...config, memoryNamespace: tenantMemoryNamespace(tenant) };
    const session = await this.withSlot(() => this.options.agent.newSession(sessionConfig));
    const sessionId = session.id;
    try {
      await this.options.storage?.saveEvent(sessionId, {
        timestamp: new Date(),
        payload: { type: 'metadata', key: TENANT_METADATA_KEY, value: tenant },
      });
    } catch (error) {
      await session.close().catch(() => undefined);
      await this.options.storage?.deleteSession(sessionId).catch(() => undefined);
      throw error;
    }
    this.retention.keepTenant(sessionId, tenant);
    const entry: OpenSession = { session, idleTimer: undefined };
    this.open.set(sessionId, entry);
    this.scheduleIdleClose(sessionId, entry);
    return sessionId;
  }

  /** The tenant that owns a session, or undefined when the session does not exist (here or in the storage). */
  async ownerOf(sessionId: string): Promise<string | undefined> {
    const known = this.retention.tenantOf(sessionId);
    if (known !== undefined) return known;
    const storage = this.options.storage;
    if (storage === undefined) return undefined;
    const tenant = await savedTenantOf(storage, this.log, sessionId);
    if (tenant !== undefined) {
      this.retention.keepTenant(sessionId, tenant);
      // Kept for the requests that follow (a listing's sessions, a tail): while open, or for the retention.
      if (!this.open.has(sessionId)) this.retention.forgetLater(sessionId);
    }
    return tenant;
  }

  /** Checks that `tenant` owns the session; another tenant's session is SESSION_NOT_FOUND, so ids do not leak. */
  async authorize(tenant: string, sessionId: string): Promise<void> {
    if ((await this.ownerOf(sessionId)) !== tenant) {
      throw new HttpError({
        status: 404,
        code: 'SESSION_NOT_FOUND',
        message: `session '${sessionId}' does not exist`,
      });
    }
  }

  /** The session's live object, resuming it on the agent when it is not active. */
  async session(sessionId: string): Promise<Session> {
    const entry = this.open.get(sessionId);
    if (entry !== undefined) {
      this.touch(sessionId, entry);
      return entry.session;
    }
    let pending = this.opening.get(sessionId);
    if (pending === undefined) {
      pending = this.resume(sessionId);
      this.opening.set(sessionId, pending);
      pending
        .finally(() => {
          this.opening.delete(sessionId);
          // A resume that failed (busy, held elsewhere) leaves what it learnt to be forgotten.
          if (!this.open.has(sessionId)) this.retention.forgetLater(sessionId);
        })
        .catch(() => undefined);
    }
    const opened = await pending;
    this.touch(sessionId, opened);
    return opened.session;
  }

  /**
   * The session's messages and pending approvals: from its live object when it is open here, else read from
   * the storage without opening it (no slot, no lease), so a reader never waits on a turn in another process.
   */
  async history(
    sessionId: string,
  ): Promise<{ messages: Message[]; pendingApprovals: PendingToolCall[]; unfinishedTurn: boolean }> {
    const session = this.activeSession(sessionId);
    if (session !== undefined) {
      return {
        messages: session.messages(),
        pendingApprovals: session.pendingApprovals(),
        unfinishedTurn: session.isTurnRunning || session.interruptedTurn() !== undefined,
      };
    }
    const snapshot = await this.options.agent.readSession(sessionId);
    return {
      messages: snapshot.messages,
      pendingApprovals: snapshot.pendingApprovals,
      unfinishedTurn: snapshot.unfinishedTurn,
    };
  }

  /** The session's active object, or undefined when it is not active on the agent. */
  activeSession(sessionId: string): Session | undefined {
    const entry = this.open.get(sessionId);
    return entry?.session;
  }

  /**
   * The session's journal (created empty on first use). A journal made for a session not open here (a tail,
   * a status) is forgotten after the retention like a closed session's: its first stream subscribes at once.
   */
  journal(sessionId: string): SessionJournal {
    return this.retention.journal(sessionId);
  }

  /**
   * Adds an event of the server's own (`server.*`) to the session's journal, so that the session's streams,
   * and only its, carry it in order with the agent's. It belongs to `turnId`, else to the running turn here.
   */
  announce(sessionId: string, turnId: string | undefined, payload: ServerEventPayload): string {
    const entry = this.journal(sessionId).append({
      sessionId,
      turnId: turnId ?? this.activeSession(sessionId)?.currentTurn?.turnId ?? '',
      timestamp: new Date(),
      sequence: 0,
      payload,
    });
    return entry.turnId;
  }

  /** Announces an MCP server's question held for the session's client, or settled, on the session's stream. */
  announceElicitation(change: HeldElicitationChange): void {
    if (change.kind === 'held') {
      const turnId = this.announce(change.sessionId, change.turnId, {
        type: 'server.elicitation_held',
        ...change.view,
      });
      this.elicitationTurns.set(change.view.id, turnId);
      return;
    }
    // The settling goes with the turn the question was announced in, whichever runs now.
    const turnId = change.turnId ?? this.elicitationTurns.get(change.id);
    this.elicitationTurns.delete(change.id);
    this.announce(change.sessionId, turnId, {
      type: 'server.elicitation_settled',
      id: change.id,
      reason: change.reason,
      action: change.action,
    });
  }

  /** Relays every event of `turn` into the session's journal, once per turn whoever asks. */
  track(sessionId: string, turn: RunningTurn): void {
    if (this.pumped.has(turn)) return;
    this.pumped.add(turn);
    const journal = this.journal(sessionId);
    const entry = this.open.get(sessionId);
    if (entry?.idleTimer !== undefined) clearTimeout(entry.idleTimer);
    const pump = (async () => {
      for await (const event of turn.events()) journal.append(event);
    })()
      .catch(() => undefined)
      .finally(() => {
        this.pumps.delete(pump);
        // A follow-up or steered message may have started the next turn as this one ended.
        const session = this.activeSession(sessionId);
        const next = session?.currentTurn;
        if (next !== undefined && next !== turn) this.track(sessionId, next);
        else {
          const current = this.open.get(sessionId);
          if (current !== undefined) this.scheduleIdleClose(sessionId, current);
        }
      });
    this.pumps.add(pump);
  }

  /** Cancels running turns, waits for their events to be relayed, and closes every open session. */
  async close(): Promise<void> {
    for (const entry of this.open.values()) {
      if (entry.idleTimer !== undefined) clearTimeout(entry.idleTimer);
      entry.session.currentTurn?.cancel();
    }
    await Promise.allSettled([...this.pumps]);
    await Promise.allSettled([...this.open.values()].map((entry) => entry.session.close()));
    this.open.clear();
    this.retention.stop();
  }

  private async resume(sessionId: string): Promise<OpenSession> {
    const tenant = await this.ownerOf(sessionId);
    if (tenant === undefined) {
      throw new HttpError({
        status: 404,
        code: 'SESSION_NOT_FOUND',
        message: `session '${sessionId}' does not exist`,
      });
    }
    // Named on every resume: a session saved before tenants had namespaces would otherwise read the default one.
    const options = { memoryNamespace: tenantMemoryNamespace(tenant) };
    const session = await this.withSlot(() => this.options.agent.resumeSession(sessionId, options));
    const entry: OpenSession = { session, idleTimer: undefined };
    this.open.set(sessionId, entry);
    if (this.options.autoContinue && session.interruptedTurn() !== undefined) {
      // The process that takes the session runs the rest of its cut turn; followers see it in the journal.
      // Should it not start, the session still opens: the cut turn waits for POST …/continue.
      const turn = await this.options
        .turnOptionsOf(tenant)
        .then((turnOptions) => session.continue(turnOptions))
        .catch(() => undefined);
      if (turn !== undefined) {
        this.continuations.add(turn);
        this.track(sessionId, turn);
      }
    }
    return entry;
  }

  /** Whether `turn` is a cut turn this hub continued on its own: a message sent meanwhile follows it. */
  isContinuation(turn: RunningTurn | undefined): boolean {
    return turn !== undefined && this.continuations.has(turn);
  }

  /**
   * With `autoContinue`, opens the session here if it can, so that a cut turn is continued for the client
   * that follows it; a session held by another process (or no free slot) is left where it is.
   */
  async takeForFollower(sessionId: string): Promise<void> {
    if (!this.options.autoContinue || this.open.has(sessionId)) return;
    try {
      await this.session(sessionId);
    } catch (error) {
      if (isSessionBusy(error) || (error instanceof HttpError && error.status === 429)) return;
      throw error;
    }
  }

  /**
   * Opens a session on the agent. When every slot is taken, the session idle the longest (no turn running)
   * is closed and the open retried once; when every slot runs a turn, the answer is 429 SERVER_BUSY with
   * `Retry-After`: a slot frees up as soon as a turn ends, so the same request succeeds later.
   */
  private async withSlot(open: () => Promise<Session>): Promise<Session> {
    try {
      return await open();
    } catch (error) {
      if (!isOutOfSlots(error)) throw error;
    }
    if (await this.evictIdle()) {
      try {
        return await open();
      } catch (error) {
        if (!isOutOfSlots(error)) throw error;
      }
    }
    const seconds = this.options.busyRetryAfterSeconds;
    throw new HttpError({
      status: 429,
      code: 'SERVER_BUSY',
      message: `every session slot of this server runs a turn; retry in ${seconds} s (Retry-After)`,
      headers: { 'retry-after': String(seconds) },
    });
  }

  /** Closes the open session idle the longest; false when every open session has a turn running. */
  private async evictIdle(): Promise<boolean> {
    for (const [sessionId, entry] of this.open) {
      // A suspended session may go too: its held calls are in the log and it resumes where it was.
      if (entry.session.isTurnRunning) continue;
      if (entry.idleTimer !== undefined) clearTimeout(entry.idleTimer);
      this.open.delete(sessionId);
      await entry.session.close().catch(() => undefined);
      this.retention.forgetLater(sessionId);
      return true;
    }
    return false;
  }

  private touch(sessionId: string, entry: OpenSession): void {
    // Map order is the eviction order: the most recently used session goes last.
    this.open.delete(sessionId);
    this.open.set(sessionId, entry);
    if (entry.session.isTurnRunning) return;
    this.scheduleIdleClose(sessionId, entry);
  }

  private scheduleIdleClose(sessionId: string, entry: OpenSession): void {
    if (entry.idleTimer !== undefined) clearTimeout(entry.idleTimer);
    entry.idleTimer = setTimeout(() => {
      entry.idleTimer = undefined;
      if (entry.session.isTurnRunning || this.open.get(sessionId) !== entry) return;
      this.open.delete(sessionId);
      entry.session.close().catch(() => undefined);
      this.retention.forgetLater(sessionId);
    }, this.options.idleMs);
    entry.idleTimer.unref();
  }
}

/** Whether an error means the agent has no free session slot right now. */
export function isSessionBusy(error: unknown): boolean {
  return isAgentError(error) && error.code === 'SESSION_BUSY';
}

/**
 * A SESSION_BUSY of the agent itself: its `maxActiveSessions` slots are taken (or the session is still
 * closing on it). A storage's SESSION_BUSY (another process holds the session's lease) is not one.
 */
function isOutOfSlots(error: unknown): boolean {
  return isSessionBusy(error) && (error as AgentError).sourceComponent === 'agent';
}
