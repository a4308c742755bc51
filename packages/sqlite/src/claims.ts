import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { AgentError, isAgentError, type SessionClaim } from '@youyou/agent';
import { checkSessionId } from '@youyou/agent/storage';
import type { SqliteClaimOptions, SqliteConnection } from './connection.js';
import { invalidConfig } from './errors.js';

export type { SqliteClaimOptions } from './connection.js';

/**
 * A claim on a session (`acquireSession`): while it is held, every other storage instance — in this
 * process or another one on the same file — is refused the session with AgentError SESSION_BUSY. It is
 * renewed on a timer; it frees up when released, when its ttl passes without a renewal, or at once when
 * its holder was a process of this host that no longer runs. A claim found taken over is lost: `signal`
 * aborts and this storage refuses to write that session's events (SESSION_BUSY) until it is released.
 */
export interface SqliteSessionClaim extends SessionClaim {
  readonly sessionId: string;
  /** True once the claim was lost (see above). */
  readonly lost: boolean;
  /** Aborts, with AgentError SESSION_BUSY as its reason, when the claim is lost. */
  readonly signal: AbortSignal;
}

type ClaimRow = [owner: string, host: string, pid: number, token: string, expiresAt: number];

const SQL = {
  holder: 'SELECT owner, host, pid, token, expires_at FROM session_claims WHERE session_id = ?',
  take: `INSERT INTO session_claims (session_id, owner, host, pid, token, acquired_at, expires_at)
    VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (session_id) DO UPDATE SET owner = excluded.owner, host = excluded.host, pid = excluded.pid,
      token = excluded.token, acquired_at = excluded.acquired_at, expires_at = excluded.expires_at`,
  renew: 'UPDATE session_claims SET expires_at = ? WHERE session_id = ? AND token = ?',
  release: 'DELETE FROM session_claims WHERE session_id = ? AND token = ?',
  token: 'SELECT token FROM session_claims WHERE session_id = ?',
} as const;

function busy(sessionId: string, detail: string): AgentError {
  return new AgentError({
    code: 'SESSION_BUSY',
    message: `session '${sessionId}' is ${detail}`,
    sourceComponent: 'storage',
  });
}

function checkDuration(name: string, value: unknown, minimum: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < minimum) {
    throw invalidConfig(`${name} must be an integer of at least ${minimum} ms, got ${String(value)}`);
  }
  return value;
}

/** True when `pid` names no running process of this host (a crashed holder's claim need not wait its ttl). */
function processIsGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    // EPERM: it runs, under another user.
    return (error as { code?: unknown }).code === 'ESRCH';
  }
}

/** The claims one storage instance holds, with their renewal timers. */
export class ClaimManager {
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  readonly ttlMs: number;
  readonly heartbeatMs: number;
  readonly #connection: SqliteConnection;
  readonly #onBackgroundError: (error: AgentError) => void;
  /** Held and lost claims by session id; a lost one stays until released, so its session stays fenced. */
  readonly #held = new Map<string, HeldClaim>();
  readonly #releaseListeners: ((sessionId: string) => void)[] = [];

  constructor(options: {
    connection: SqliteConnection;
    claims: SqliteClaimOptions | undefined;
    onBackgroundError: (error: AgentError) => void;
  }) {
    const claims = options.claims ?? {};
    this.ttlMs = checkDuration('claims.ttlMs', claims.ttlMs ?? 30_000, 100);
    this.heartbeatMs = checkDuration(
      'claims.heartbeatMs',
      claims.heartbeatMs ?? Math.floor(this.ttlMs / 3),
      10,
    );
    if (this.heartbeatMs >= this.ttlMs) {
      throw invalidConfig('claims.heartbeatMs must be shorter than claims.ttlMs');
    }
    this.#connection = options.connection;
    this.#onBackgroundError = options.onBackgroundError;
    // Closing the storage frees its sessions for other processes at once.
    options.connection.onClose(() => this.#releaseAll());
  }

  /** Takes the session, or rejects with SESSION_BUSY naming who holds it and until when. */
  async acquire(sessionId: string): Promise<SqliteSessionClaim> {
    checkSessionId(sessionId);
    const local = this.#held.get(sessionId);
    if (local !== undefined && !local.lost) throw busy(sessionId, 'already claimed by this storage');
    const token = randomUUID();
    const connection = this.#connection;
    const refusal = await connection.write(`claiming session '${sessionId}'`, () => {
      const now = Date.now();
      const row = connection.statement(SQL.holder).raw().get(sessionId) as ClaimRow | undefined;
      if (row !== undefined) {
        const [, host, pid, , expiresAt] = row;
        const deadHolder = host === hostname() && pid !== process.pid && processIsGone(pid);
        // One short line (a terminal shows it as is): who holds it, and what to do.
        if (expiresAt > now && !deadHolder) {
          return `in use by another process (pid ${pid}${host === hostname() ? '' : ` on ${host}`}); close it there first`;
        }
      }
      connection
        .statement(SQL.take)
        .run(sessionId, this.owner, hostname(), process.pid, token, now, now + this.ttlMs);
      return undefined;
    });
    if (refusal !== undefined) throw busy(sessionId, refusal);
    const claim = new HeldClaim({ manager: this, connection, sessionId, token });
    this.#held.set(sessionId, claim);
    return claim;
  }

  /**
   * Called inside a write transaction of the session's events: throws SESSION_BUSY when this storage's
   * claim on it was lost or taken over, so a stale holder never writes after another process took over.
   * Sessions this storage holds no claim on are not fenced.
   */
  fenceWrite(sessionId: string): void {
    const claim = this.#held.get(sessionId);
    if (claim === undefined) return;
    if (!claim.lost) {
      const token = this.#connection.statement(SQL.token).pluck().get(sessionId) as string | undefined;
      if (token === claim.token) return;
      claim.loseTo('another process took it over after it expired');
    }
    throw claim.lostError();
  }

  /**
   * Runs `listener` with the session's id when a claim is released, inside the transaction that releases it:
   * after every write of the session queued before the release.
   */
  onRelease(listener: (sessionId: string) => void): void {
    this.#releaseListeners.push(listener);
  }

  /** Tells the listeners that the claim on `sessionId` is being released (see onRelease). */
  releasing(sessionId: string): void {
    for (const listener of this.#releaseListeners) listener(sessionId);
  }

  /** Forgets a claim that was released. */
  forget(claim: HeldClaim): void {
    if (this.#held.get(claim.sessionId) === claim) this.#held.delete(claim.sessionId);
  }

  /** Reports a failure of a background renewal. */
  reportBackground(error: AgentError): void {
    this.#onBackgroundError(error);
  }

  #releaseAll(): void {
    for (const claim of [...this.#held.values()]) {
      claim.release().catch((error: unknown) => {
        if (isAgentError(error)) this.#onBackgroundError(error);
      });
    }
  }
}

/** One claim this storage took, and its renewal timer. */
class HeldClaim implements SqliteSessionClaim {
  readonly sessionId: string;
  readonly token: string;
  readonly #manager: ClaimManager;
  readonly #connection: SqliteConnection;
  readonly #controller = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #released: Promise<void> | undefined;
  /** Local time by which the claim has surely expired if no renewal succeeds. */
  #deadline: number;
  #lostReason: string | undefined;

  constructor(options: {
    manager: ClaimManager;
    connection: SqliteConnection;
    sessionId: string;
    token: string;
  }) {
    this.#manager = options.manager;
    this.#connection = options.connection;
    this.sessionId = options.sessionId;
    this.token = options.token;
    this.#deadline = Date.now() + options.manager.ttlMs;
    this.#timer = setInterval(() => this.#heartbeat(), options.manager.heartbeatMs);
    // A held claim must not keep the process alive: a process that exits lets it go.
    this.#timer.unref();
  }

  get lost(): boolean {
    return this.#lostReason !== undefined;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The SESSION_BUSY error a write to a lost claim's session gets. */
  lostError(): AgentError {
    return busy(
      this.sessionId,
      `no longer claimed by this process (${this.#lostReason ?? 'lost'}); release the claim and acquire it again`,
    );
  }

  /** Marks the claim lost: stops renewing and aborts the signal. */
  loseTo(reason: string): void {
    if (this.#lostReason !== undefined) return;
    this.#lostReason = reason;
    this.#stopTimer();
    this.#controller.abort(this.lostError());
  }

  release(): Promise<void> {
    this.#released ??= this.#releaseOnce();
    return this.#released;
  }

  #heartbeat(): void {
    if (this.lost) return;
    const sentAt = Date.now();
    this.#connection
      .write(`renewing the claim on session '${this.sessionId}'`, () => {
        return this.#connection
          .statement(SQL.renew)
          .run(sentAt + this.#manager.ttlMs, this.sessionId, this.token).changes;
      })
      .then(
        (changes) => {
          if (changes === 1) this.#deadline = sentAt + this.#manager.ttlMs;
          else this.loseTo('another process took it over after it expired');
        },
        (error: unknown) => {
          if (this.lost || this.#released !== undefined) return;
          if (Date.now() >= this.#deadline) {
            this.loseTo('it could not be renewed before it expired');
            this.#manager.reportBackground(this.lostError());
          } else if (isAgentError(error)) {
            this.#manager.reportBackground(error);
          }
        },
      );
  }

  async #releaseOnce(): Promise<void> {
    this.#stopTimer();
    this.#manager.forget(this);
    await this.#connection.write(`releasing the claim on session '${this.sessionId}'`, () => {
      this.#connection.statement(SQL.release).run(this.sessionId, this.token);
      this.#manager.releasing(this.sessionId);
    });
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
