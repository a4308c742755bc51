import { randomUUID } from 'node:crypto';
import { pendingCallsOf, readHeldBatch } from '../approvals/held-batch.js';
import { readInterruptedTurn } from '../approvals/interrupted-turn.js';
import { forkLogOf } from '../context/fork-log.js';
import { replaySessionEvents } from '../context/replay.js';
import type { PluginManager } from '../hooks/plugin-manager.js';
import type { PendingToolCall } from '../kernel/approval-types.js';
import { checkBudgetConfig, checkModelIds } from '../kernel/config-validation.js';
import { AgentError, toAgentError } from '../kernel/error.js';
import { settleWithin } from '../kernel/settle.js';
import type { ForkOptions, Message, SessionConfig } from '../kernel/types.js';
import { MetadataKey } from '../log/metadata-keys.js';
import type { SessionClaim, SessionEventPayload } from '../ports/storage.js';
import type { ToolHandler } from '../ports/tool.js';
import { type AgentRuntime, SessionState } from '../turn/session-state.js';
import { checkForkArguments, forkTurnNotFound, writeFork } from './fork.js';
import { heldCallIds, loadSessionLog, restoredState } from './saved-session.js';
import { Session } from './session.js';
import { releaseSessionClaim } from './session-close.js';
import { SessionController, type SessionSlot } from './session-controller.js';

/** A saved session as `Agent.readSession` reads it, without opening it. */
export interface SessionSnapshot {
  sessionId: string;
  /** The history as a resume would rebuild it (after compactions); unanswered trailing calls stay open. */
  messages: Message[];
  /** The calls a suspended turn waits on, decided or not; empty when no turn is suspended. */
  pendingApprovals: PendingToolCall[];
  /** Each user message is one turn. */
  turnCount: number;
  /**
   * True when the log's last turn has not ended: it runs now (here or in another process), or a crash cut it,
   * and then `resumeSession(id)` and `continue()` run the rest of it (`Session.interruptedTurn()`).
   */
  unfinishedTurn: boolean;
}

/**
 * The built runtime: it holds the registries and up to `maxActiveSessions` active sessions (default 1,
 * 0006 §7). Its calls reject with AgentError for mistakes (SESSION_BUSY, SESSION_NOT_FOUND, SESSION_CLOSED, ...).
 */
export class Agent {
  /** Replaced as a whole by `replaceTools` (never changed in place): a running turn keeps the one it began with. */
  private runtime: AgentRuntime;
  private readonly pluginManager: PluginManager;
  /** The active sessions; each holds one of the `maxActiveSessions` slots. */
  private readonly active = new Set<SessionController>();
  /** Ids of sessions being set up: each holds a slot too, until it is active or its setup failed. */
  private readonly reserved = new Set<string>();
  private shuttingDown: Promise<void> | undefined;
  private readonly slot: SessionSlot;

  /** Checks and compiles a new tool set, and answers the runtime with it (see `replaceTools`). */
  private readonly withTools: ((tools: readonly ToolHandler[]) => AgentRuntime) | undefined;

  /** Made by `AgentBuilder.build()`. */
  constructor(options: {
    runtime: AgentRuntime;
    pluginManager: PluginManager;
    withTools?: (tools: readonly ToolHandler[]) => AgentRuntime;
  }) {
    this.runtime = options.runtime;
    this.withTools = options.withTools;
    this.pluginManager = options.pluginManager;
    const agent = this;
    this.slot = {
      release(controller) {
        agent.active.delete(controller);
      },
      get isShutDown() {
        return agent.shuttingDown !== undefined;
      },
      get runtime() {
        return agent.runtime;
      },
    };
  }

  /**
   * Replaces the tools the model is offered (an MCP server's changed list, say), checked as `build()` checks
   * them: INVALID_CONFIG or NAME_CONFLICT, and nothing changes, for a bad set. Turns that start from now on use
   * the new tools; a turn already running keeps the ones it started with.
   */
  replaceTools(tools: readonly ToolHandler[]): void {
    this.assertOpen();
    if (this.withTools === undefined) {
      throw new AgentError({ code: 'INVALID_CONFIG', message: 'this agent was not made by AgentBuilder' });
    }
    this.runtime = this.withTools(tools);
  }

  /** Starts a new session; SessionStart runs and the memories are loaded. */
  async newSession(config: SessionConfig = {}): Promise<Session> {
    this.assertOpen();
    if (typeof config !== 'object' || config === null) {
      throw new AgentError({
        code: 'INVALID_INPUT',
        message:
          'newSession takes { modelId?, systemPromptOverride?, memoryNamespace?, budget?, fallbackModels? }',
      });
    }
    for (const key of Object.keys(config)) {
      if (!['modelId', 'systemPromptOverride', 'memoryNamespace', 'budget', 'fallbackModels'].includes(key)) {
        throw new AgentError({
          code: 'INVALID_INPUT',
          message: `newSession takes { modelId?, systemPromptOverride?, memoryNamespace?, budget?, fallbackModels? }; '${key}' is not one of them`,
        });
      }
    }
    checkMemoryNamespace(config.memoryNamespace);
    const budget = checkBudgetConfig('newSession budget', config.budget, 'INVALID_INPUT');
    const fallbackModels = checkModelIds('newSession fallbackModels', config.fallbackModels, 'INVALID_INPUT');
    for (const modelId of fallbackModels ?? []) this.runtime.models.resolve(modelId);
    if (config.modelId !== undefined && (typeof config.modelId !== 'string' || config.modelId === '')) {
      throw new AgentError({ code: 'INVALID_INPUT', message: 'modelId must be a non-empty string' });
    }
    if (config.systemPromptOverride !== undefined && typeof config.systemPromptOverride !== 'string') {
      throw new AgentError({ code: 'INVALID_INPUT', message: 'systemPromptOverride must be a string' });
    }
    const model = this.runtime.models.resolve(config.modelId ?? this.runtime.config.defaultModel);
    const sessionId = randomUUID();
    this.reserveSlot(sessionId);
    let claim: SessionClaim | undefined;
    try {
      // Each step below is awaited only when it has something to do: a storage that makes no claims, no memory
      // storage, no SessionStart handler (a host's usual set-up) cost no call, promise or tick.
      if (this.runtime.sessionStorage?.acquireSession !== undefined)
        claim = await this.claimSession(sessionId);
      const state = new SessionState({
        runtime: this.runtime,
        sessionId,
        model,
        systemPromptOverride: config.systemPromptOverride,
        claim,
        memoryNamespace: config.memoryNamespace,
        budget,
        fallbackModels,
      });
      const sessionConfig: SessionConfig = { modelId: model.info.id };
      if (config.systemPromptOverride !== undefined)
        sessionConfig.systemPromptOverride = config.systemPromptOverride;
      if (config.memoryNamespace !== undefined) sessionConfig.memoryNamespace = config.memoryNamespace;
      if (budget !== undefined) sessionConfig.budget = budget;
      if (fallbackModels !== undefined) sessionConfig.fallbackModels = [...fallbackModels];
      await state.log.append({ type: 'metadata', key: MetadataKey.sessionConfig, value: sessionConfig });
      if (state.memory !== undefined) state.memories = await this.loadMemories(state);
      if (this.runtime.hooks.has('SessionStart')) await this.runSessionStart(sessionId, model.info.id);
      return new Session(this.activate(state));
    } catch (error) {
      if (this.reserved.has(sessionId)) {
        await releaseSessionClaim({ claim, sessionId, config: this.runtime.config });
        this.reserved.delete(sessionId);
      }
      throw error;
    }
  }

  /**
   * Rebuilds a saved session (0006 §8.1): its context, counters and memories; SessionStart does not run. Its
   * memories are those of `options.memoryNamespace`, else of the namespace it was created with.
   */
  async resumeSession(sessionId: string, options: { memoryNamespace?: string } = {}): Promise<Session> {
    this.assertOpen();
    if (typeof sessionId !== 'string' || sessionId === '') {
      throw new AgentError({ code: 'INVALID_INPUT', message: 'resumeSession takes a non-empty session id' });
    }
    checkMemoryNamespace(options.memoryNamespace);
    const storage = this.runtime.sessionStorage;
    if (storage === undefined) {
      throw new AgentError({
        code: 'SESSION_NOT_FOUND',
        message: `session '${sessionId}' cannot be resumed: no session storage is registered`,
      });
    }
    this.reserveSlot(sessionId);
    return this.openReserved(sessionId, options.memoryNamespace);
  }

  /**
   * Forks a saved session: a new session (its own id, its usage from zero) whose history is the source's context
   * as it stood when the turn `atTurnId` ended (the whole history by default), rewinds and compactions honoured;
   * its log links to the source and the source's log to it (`forkSourceOf`, `forkLinksOf`), and nothing else of
   * the source changes. A turn rewound away or summarised in the source can still be forked at. The fork is
   * opened like a resumed session (it needs a free slot: close the source first when only one is allowed) and
   * SessionStart runs for it. Rejects with SESSION_NOT_FOUND, TURN_NOT_FOUND for a turn the source's log does
   * not hold, SESSION_BUSY, INVALID_INPUT, STORAGE_ERROR.
   */
  async forkSession(sessionId: string, options?: ForkOptions): Promise<Session> {
    this.assertOpen();
    const atTurnId = checkForkArguments(sessionId, options);
    const storage = this.runtime.sessionStorage;
    if (storage === undefined) {
      throw new AgentError({
        code: 'SESSION_NOT_FOUND',
        message: `session '${sessionId}' cannot be forked: no session storage is registered`,
      });
    }
    const source = this.activeSession(sessionId);
    // What the source holds here but has not written yet belongs to the history being forked.
    await source?.state.log.flush();
    const log = forkLogOf(await this.loadLog(sessionId), atTurnId);
    if (log === undefined) throw forkTurnNotFound(sessionId, atTurnId ?? '');
    const forkId = randomUUID();
    this.reserveSlot(forkId);
    try {
      await writeFork({
        storage,
        forkId,
        sourceId: sessionId,
        atTurnId,
        log,
        // An open source writes the link through its own log, after what it still has queued.
        appendToSource: source === undefined ? undefined : (payload) => source.state.log.append(payload),
      });
    } catch (error) {
      this.reserved.delete(forkId);
      throw error;
    }
    const fork = await this.openReserved(forkId, undefined);
    await this.runSessionStart(forkId, fork.modelId);
    return fork;
  }

  /** Opens a saved session whose slot is reserved: its context, counters, memories; frees the slot on failure. */
  private async openReserved(sessionId: string, memoryNamespace: string | undefined): Promise<Session> {
    let claim: SessionClaim | undefined;
    try {
      // Claimed before the log is read, so that this read sees everything the previous holder wrote.
      if (this.runtime.sessionStorage?.acquireSession !== undefined)
        claim = await this.claimSession(sessionId);
      const payloads = await this.loadLog(sessionId);
      const state = restoredState({ runtime: this.runtime, sessionId, payloads, claim, memoryNamespace });
      if (state.memory !== undefined) state.memories = await this.loadMemories(state);
      return new Session(this.activate(state));
    } catch (error) {
      if (this.reserved.has(sessionId)) {
        await releaseSessionClaim({ claim, sessionId, config: this.runtime.config });
        this.reserved.delete(sessionId);
      }
      throw error;
    }
  }

  /**
   * The payloads of a session's saved log (resuming, reading and forking replay payloads alone), by the storage's
   * `loadPayloads` when it has one: SESSION_NOT_FOUND for an unknown id (or without storage), STORAGE_ERROR.
   */
  private loadLog(sessionId: string): Promise<SessionEventPayload[]> {
    return loadSessionLog(this.runtime.sessionStorage, sessionId);
  }

  /**
   * Reads a saved session's history without opening it: no slot, no lease, no hooks, nothing written, so it
   * works while a turn of the session runs here or in another process. The messages are the context a resume
   * would rebuild, except that calls still unanswered at the end of the log stay open (they may be running);
   * `pendingApprovals` are the calls a suspended turn waits on. SESSION_NOT_FOUND for an unknown id.
   */
  async readSession(sessionId: string): Promise<SessionSnapshot> {
    this.assertOpen();
    if (typeof sessionId !== 'string' || sessionId === '') {
      throw new AgentError({ code: 'INVALID_INPUT', message: 'readSession takes a non-empty session id' });
    }
    const payloads = await this.loadLog(sessionId);
    const heldBatch = readHeldBatch(payloads);
    const replayed = replaySessionEvents(payloads, { held: heldCallIds(heldBatch), keepTrailingCalls: true });
    return {
      sessionId,
      messages: replayed.messages,
      pendingApprovals: heldBatch === undefined ? [] : pendingCallsOf(heldBatch),
      turnCount: replayed.turnCount,
      unfinishedTurn: heldBatch === undefined && readInterruptedTurn(payloads) !== undefined,
    };
  }

  /**
   * Cancels the running turns, closes every active session the full way (SessionEnd, memory extraction),
   * then shuts the plugins down in reverse order. Never rejects and never hangs; later calls are no-ops.
   */
  shutdown(): Promise<void> {
    this.shuttingDown ??= this.runShutdown();
    return this.shuttingDown;
  }

  private async runShutdown(): Promise<void> {
    // The sessions close side by side: every wait inside close is bounded, and this bound covers a hook
    // or a provider that ignores its signal.
    const bound = this.runtime.config.toolTimeoutMs * 4;
    await Promise.all(
      [...this.active].map((controller) => settleWithin(controller.close({ cancelRunning: true }), bound)),
    );
    await this.pluginManager.shutdownAll();
  }

  private assertOpen(): void {
    if (this.shuttingDown !== undefined) {
      throw new AgentError({ code: 'SESSION_CLOSED', message: 'the agent has been shut down' });
    }
  }

  private reserveSlot(sessionId: string): void {
    const limit = this.runtime.config.maxActiveSessions;
    if (this.reserved.has(sessionId) || this.activeSession(sessionId) !== undefined) {
      throw new AgentError({
        code: 'SESSION_BUSY',
        message: `session '${sessionId}' is already active on this agent: use its Session, or close it first`,
      });
    }
    if (this.active.size + this.reserved.size >= limit) {
      throw new AgentError({
        code: 'SESSION_BUSY',
        message:
          limit === 1
            ? 'another session is active: close it (or let its running turn end) before starting one'
            : `${limit} sessions are active (maxActiveSessions): close one before starting another`,
      });
    }
    this.reserved.add(sessionId);
  }

  /** The active session of this id, if any (the set is walked, not copied). */
  private activeSession(sessionId: string): SessionController | undefined {
    for (const active of this.active) if (active.state.id === sessionId) return active;
    return undefined;
  }

  private activate(state: SessionState): SessionController {
    // shutdown() may have begun while the session was being set up; it must not come back alive.
    this.assertOpen();
    const controller = new SessionController({ state, slot: this.slot });
    this.reserved.delete(state.id);
    this.active.add(controller);
    return controller;
  }

  /** The storage's claim on the session, when it makes claims; its AgentError (SESSION_BUSY) passes through. */
  private async claimSession(sessionId: string): Promise<SessionClaim | undefined> {
    const storage = this.runtime.sessionStorage;
    if (storage?.acquireSession === undefined) return undefined;
    try {
      return await storage.acquireSession(sessionId);
    } catch (error) {
      throw toAgentError(error, 'STORAGE_ERROR', `claiming session '${sessionId}' failed`);
    }
  }

  private async loadMemories(state: SessionState) {
    const memory = state.memory;
    if (memory === undefined) return [];
    try {
      return await memory.load();
    } catch (error) {
      this.runtime.config.onBackgroundError(toAgentError(error, 'STORAGE_ERROR', 'loading memories failed'));
      return [];
    }
  }

  private async runSessionStart(sessionId: string, modelId: string): Promise<void> {
    const { hooks, config } = this.runtime;
    if (!hooks.has('SessionStart')) return;
    const outcome = await hooks.dispatch({
      event: 'SessionStart',
      sessionId,
      data: { modelId },
      timeoutMs: config.toolTimeoutMs,
    });
    for (const error of outcome.errors) config.onBackgroundError(error);
  }
}

/** A session's memory namespace, when given, is a non-empty string of at most 256 characters. */
function checkMemoryNamespace(namespace: unknown): void {
  if (namespace === undefined) return;
  if (typeof namespace !== 'string' || namespace === '' || namespace.length > 256) {
    throw new AgentError({
      code: 'INVALID_INPUT',
      message: 'memoryNamespace must be a non-empty string of at most 256 characters',
    });
  }
}
