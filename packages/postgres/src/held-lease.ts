import { AgentError } from '@youyou/agent';
import { encodeText } from './codec.js';
import type { Database } from './database.js';

/**
 * A claim on a session that keeps every other process (every other storage instance) from running it
 * until it is released or expires. It is renewed on a timer while held; when a renewal finds it taken
 * over, or the database stayed unreachable past its ttl, the lease is lost: `signal` aborts and the
 * storage refuses to write that session's events (SESSION_BUSY) until the lease is released.
 */
export interface SessionLease {
  readonly sessionId: string;
  /** Who holds it (the storage's `lease.owner`). */
  readonly owner: string;
  /** The expiry set by the last renewal, on the database's clock. */
  readonly expiresAt: Date;
  /** When this lease was taken, on the database's clock. */
  readonly acquiredAt: Date;
  /** True once the lease was lost (see above). */
  readonly lost: boolean;
  /** Aborts, with AgentError SESSION_BUSY as its reason, when the lease is lost. */
  readonly signal: AbortSignal;
  /** Pushes the expiry one ttl ahead now; rejects with SESSION_BUSY if the lease was lost. */
  renew(): Promise<void>;
  /** Frees the session at once for other processes; stops the renewals. Calling it again does nothing. */
  release(): Promise<void>;
}

/** The SESSION_BUSY error of a session that another process holds (or that this one lost). */
export function busy(sessionId: string, detail: string): AgentError {
  return new AgentError({
    code: 'SESSION_BUSY',
    message: `session '${sessionId}' is ${detail}`,
    sourceComponent: 'storage',
  });
}

/**
 * One lease this process took. Its storage's LeaseManager renews it with all the others in one statement
 * (see `LeaseManager`'s heartbeat) and tells it the outcome (`renewed`, `loseTo`); `renew()` renews it
 * alone, now.
 */
export class HeldLease implements SessionLease {
  readonly sessionId: string;
  readonly owner: string;
  readonly token: string;
  readonly acquiredAt: Date;
  readonly ttlMs: number;
  /** How often the heartbeat must renew this lease: a third of its ttl at most. */
  readonly intervalMs: number;
  expiresAt: Date;
  readonly #database: Database;
  readonly #forget: (lease: HeldLease) => void;
  readonly #controller = new AbortController();
  #renewing: Promise<void> | undefined;
  #released: Promise<void> | undefined;
  /** Local time by which the lease has surely expired if no renewal succeeds. */
  #deadline: number;
  #lostReason: string | undefined;

  /** Made by `LeaseManager.acquire`; `forget` drops it from the manager's leases when it is released. */
  constructor(options: {
    owner: string;
    database: Database;
    sessionId: string;
    token: string;
    ttlMs: number;
    heartbeatMs: number;
    acquiredAt: Date;
    expiresAt: Date;
    forget: (lease: HeldLease) => void;
  }) {
    this.owner = options.owner;
    this.#database = options.database;
    this.#forget = options.forget;
    this.sessionId = options.sessionId;
    this.token = options.token;
    this.ttlMs = options.ttlMs;
    this.intervalMs = Math.max(10, Math.min(options.heartbeatMs, Math.floor(options.ttlMs / 3)));
    this.acquiredAt = options.acquiredAt;
    this.expiresAt = options.expiresAt;
    this.#deadline = Date.now() + options.ttlMs;
  }

  get lost(): boolean {
    return this.#lostReason !== undefined;
  }

  /** True while the heartbeat should renew it: neither lost nor released. */
  get renewable(): boolean {
    return this.#lostReason === undefined && this.#released === undefined;
  }

  /** Whether a renewal that fails now leaves the lease possibly expired (another process may hold it). */
  get pastDeadline(): boolean {
    return Date.now() >= this.#deadline;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** The SESSION_BUSY error a write to a lost lease's session gets. */
  lostError(): AgentError {
    return busy(
      this.sessionId,
      `no longer leased by this process (${this.#lostReason ?? 'lost'}); release the lease and acquire it again`,
    );
  }

  /** Marks the lease lost: aborts the signal; the heartbeat leaves it out from now on. */
  loseTo(reason: string): void {
    if (this.#lostReason !== undefined) return;
    this.#lostReason = reason;
    this.#controller.abort(this.lostError());
  }

  /** Records a renewal whose statement was sent at `sentAt` (local time) and set `expiresAt`. */
  renewed(expiresAt: Date, sentAt: number): void {
    this.expiresAt = expiresAt;
    this.#deadline = sentAt + this.ttlMs;
  }

  renew(): Promise<void> {
    if (this.lost) return Promise.reject(this.lostError());
    if (this.#released !== undefined) {
      return Promise.reject(busy(this.sessionId, 'no longer leased: this lease was released'));
    }
    this.#renewing ??= this.#renewOnce().finally(() => {
      this.#renewing = undefined;
    });
    return this.#renewing;
  }

  release(): Promise<void> {
    this.#released ??= this.#releaseOnce();
    return this.#released;
  }

  async #renewOnce(): Promise<void> {
    const sentAt = Date.now();
    const result = await this.#database.query<{ expires_at: Date }>({
      statement: {
        text: `UPDATE ${this.#database.tables.leases}
                  SET expires_at = clock_timestamp() + $3::bigint * interval '1 millisecond'
                WHERE session_id = $1 AND token = $2
                RETURNING expires_at`,
      },
      values: [encodeText(this.sessionId), this.token, this.ttlMs],
      context: `renewing the lease of session '${this.sessionId}' failed`,
    });
    const row = result.rows[0];
    if (row === undefined) {
      this.loseTo('another process took it over after it expired');
      throw this.lostError();
    }
    this.renewed(row.expires_at, sentAt);
  }

  async #releaseOnce(): Promise<void> {
    this.#forget(this);
    await this.#renewing?.catch(() => undefined);
    await this.#database.query({
      statement: { text: `DELETE FROM ${this.#database.tables.leases} WHERE session_id = $1 AND token = $2` },
      values: [encodeText(this.sessionId), this.token],
      context: `releasing the lease of session '${this.sessionId}' failed`,
    });
  }
}
