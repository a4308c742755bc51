import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { AgentError } from '@youyou/agent';
import { checkSessionId } from '@youyou/agent/storage';
import { encodeText } from './codec.js';
import type { Database } from './database.js';
import { invalidConfig, storageError } from './errors.js';

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

/** The current holder of a session's lease, as `getLease` reports it. */
export interface LeaseHolder {
  owner: string;
  acquiredAt: Date;
  expiresAt: Date;
}

/** Lease settings of a storage. */
export interface LeaseOptions {
  /**
   * The name this process holds leases under; it must differ between processes. Default
   * `${hostname}:${pid}:${random}`. A lease whose owner equals this one can be taken back before it expires.
   */
  owner?: string;
  /** How long a lease outlives its last renewal; a dead process's sessions free up after this. Default 30000. */
  ttlMs?: number;
  /** How often a held lease is renewed. Default a third of the ttl. */
  heartbeatMs?: number;
}

/** What `acquireLease` takes. */
export interface AcquireLeaseOptions {
  /** Overrides the storage's ttl for this lease. */
  ttlMs?: number;
  /** Wait up to this long for another process's lease to be released or to expire; default 0 (fail at once). */
  waitMs?: number;
}

interface LeaseRow {
  owner: string;
  acquired_at: Date;
  expires_at: Date;
  now: Date;
}

function checkDuration(name: string, value: unknown, minimum: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < minimum) {
    throw invalidConfig(`${name} must be an integer of at least ${minimum} ms, got ${String(value)}`);
  }
  return value;
}

function busy(sessionId: string, detail: string): AgentError {
  return new AgentError({
    code: 'SESSION_BUSY',
    message: `session '${sessionId}' is ${detail}`,
    sourceComponent: 'storage',
  });
}

/** Resolves after `ms` (a plain timer: the caller is waiting on it). */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The leases one storage instance holds, with their renewal timers. */
export class LeaseManager {
  readonly owner: string;
  readonly ttlMs: number;
  readonly heartbeatMs: number;
  readonly #database: Database;
  readonly #onBackgroundError: (error: AgentError) => void;
  /** Held and lost leases by session id; a lost one stays until released, so its session stays fenced. */
  readonly #held = new Map<string, HeldLease>();

  constructor(options: {
    database: Database;
    lease: LeaseOptions | undefined;
    onBackgroundError: (error: AgentError) => void;
  }) {
    const lease = options.lease ?? {};
    if (lease.owner !== undefined && (typeof lease.owner !== 'string' || lease.owner === '')) {
      throw invalidConfig('lease.owner must be a non-empty string');
    }
    this.owner = lease.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.ttlMs = checkDuration('lease.ttlMs', lease.ttlMs ?? 30_000, 100);
    this.heartbeatMs = checkDuration(
      'lease.heartbeatMs',
      lease.heartbeatMs ?? Math.floor(this.ttlMs / 3),
      10,
    );
    if (this.heartbeatMs >= this.ttlMs)
      throw invalidConfig('lease.heartbeatMs must be shorter than lease.ttlMs');
    this.#database = options.database;
    this.#onBackgroundError = options.onBackgroundError;
  }

  /**
   * The lease token a write to this session must carry, `undefined` when this instance holds no lease on
   * it (writes are not fenced), or throws SESSION_BUSY when its lease here was lost.
   */
  fenceFor(sessionId: string): string | undefined {
    const lease = this.#held.get(sessionId);
    if (lease === undefined) return undefined;
    if (lease.lost) throw lease.lostError();
    return lease.token;
  }

  /** Marks the lease of a session lost after a write found another holder. */
  markLost(sessionId: string): AgentError {
    const lease = this.#held.get(sessionId);
    lease?.loseTo('taken over by another process');
    return lease?.lostError() ?? busy(sessionId, 'leased by another process');
  }

  /** Takes the session's lease, waiting up to `waitMs` for another holder; SESSION_BUSY if it cannot. */
  async acquire(sessionId: string, options: AcquireLeaseOptions = {}): Promise<SessionLease> {
    checkSessionId(sessionId);
    const ttlMs = options.ttlMs === undefined ? this.ttlMs : checkDuration('ttlMs', options.ttlMs, 100);
    const waitMs = options.waitMs === undefined ? 0 : checkDuration('waitMs', options.waitMs, 0);
    const local = this.#held.get(sessionId);
    if (local !== undefined && !local.lost) throw busy(sessionId, 'already leased by this storage');
    const deadline = Date.now() + waitMs;
    const id = encodeText(sessionId);
    const { leases, activity } = this.#database.tables;
    while (true) {
      const token = randomUUID();
      // The session's appends compare their token with the activity row's (fencing without a lock per
      // write, see appendStatement), so the statement that takes the lease writes its token there too. The
      // UPDATE waits for an append in progress and then applies to the row that append left; an append
      // that comes later finds the new token and falls back to the statement that checks the lease row.
      const taken = await this.#database.query<{ acquired_at: Date; expires_at: Date }>({
        statement: {
          text: `WITH taken AS (
                   INSERT INTO ${leases} AS l (session_id, owner, token, acquired_at, expires_at)
                   VALUES ($1, $2, $3::uuid, clock_timestamp(), clock_timestamp() + $4::bigint * interval '1 millisecond')
                   ON CONFLICT (session_id) DO UPDATE
                     SET owner = EXCLUDED.owner, token = EXCLUDED.token,
                         acquired_at = EXCLUDED.acquired_at, expires_at = EXCLUDED.expires_at
                     WHERE l.expires_at <= clock_timestamp() OR l.owner = EXCLUDED.owner
                   RETURNING acquired_at, expires_at
                 ), fenced AS (
                   UPDATE ${activity} SET lease_token = $3::uuid
                    WHERE session_id = $1 AND EXISTS (SELECT 1 FROM taken)
                 )
                 SELECT acquired_at, expires_at FROM taken`,
        },
        values: [id, this.owner, token, ttlMs],
        context: `acquiring the lease of session '${sessionId}' failed`,
      });
      const row = taken.rows[0];
      if (row !== undefined) {
        // A lost lease of ours is replaced; its owner keeps seeing it lost.
        const lease = new HeldLease({
          manager: this,
          database: this.#database,
          sessionId,
          token,
          ttlMs,
          acquiredAt: row.acquired_at,
          expiresAt: row.expires_at,
          onBackgroundError: this.#onBackgroundError,
        });
        this.#held.set(sessionId, lease);
        return lease;
      }
      const holder = await this.#holderRow(sessionId);
      if (holder === undefined) continue; // released between the two statements: try again
      const remainingMs = holder.expires_at.getTime() - holder.now.getTime();
      const waitLeft = deadline - Date.now();
      if (waitLeft <= 0) {
        throw busy(
          sessionId,
          `leased by '${holder.owner}' until ${holder.expires_at.toISOString()} (${Math.max(0, remainingMs)} ms from now); wait for it to be released or to expire`,
        );
      }
      await pause(Math.min(waitLeft, Math.max(10, Math.min(remainingMs + 5, 250))));
    }
  }

  /** Who holds the session's lease now, or null when nobody does (or it expired). */
  async holder(sessionId: string): Promise<LeaseHolder | null> {
    checkSessionId(sessionId);
    const row = await this.#holderRow(sessionId);
    if (row === undefined || row.expires_at.getTime() <= row.now.getTime()) return null;
    return { owner: row.owner, acquiredAt: row.acquired_at, expiresAt: row.expires_at };
  }

  /** Forgets a lease that was released. */
  forget(lease: HeldLease): void {
    if (this.#held.get(lease.sessionId) === lease) this.#held.delete(lease.sessionId);
  }

  /** Releases every lease this instance holds (at close); failures are reported, not thrown. */
  async releaseAll(): Promise<void> {
    const leases = [...this.#held.values()];
    await Promise.all(
      leases.map((lease) =>
        lease.release().catch((error: unknown) => {
          this.#onBackgroundError(
            storageError(error, `releasing the lease of session '${lease.sessionId}' at close failed`),
          );
        }),
      ),
    );
  }

  async #holderRow(sessionId: string): Promise<LeaseRow | undefined> {
    const result = await this.#database.query<LeaseRow>({
      statement: {
        text: `SELECT owner, acquired_at, expires_at, clock_timestamp() AS now
                 FROM ${this.#database.tables.leases} WHERE session_id = $1`,
      },
      values: [encodeText(sessionId)],
      context: `reading the lease of session '${sessionId}' failed`,
    });
    return result.rows[0];
  }
}

/** One lease this process took, and its renewal timer. */
class HeldLease implements SessionLease {
  readonly sessionId: string;
  readonly token: string;
  readonly acquiredAt: Date;
  expiresAt: Date;
  readonly #manager: LeaseManager;
  readonly #database: Database;
  readonly #ttlMs: number;
  readonly #controller = new AbortController();
  readonly #onBackgroundError: (error: AgentError) => void;
  #timer: NodeJS.Timeout | undefined;
  #renewing: Promise<void> | undefined;
  #released: Promise<void> | undefined;
  /** Local time by which the lease has surely expired if no renewal succeeds. */
  #deadline: number;
  #lostReason: string | undefined;

  constructor(options: {
    manager: LeaseManager;
    database: Database;
    sessionId: string;
    token: string;
    ttlMs: number;
    acquiredAt: Date;
    expiresAt: Date;
    onBackgroundError: (error: AgentError) => void;
  }) {
    this.#manager = options.manager;
    this.#database = options.database;
    this.sessionId = options.sessionId;
    this.token = options.token;
    this.#ttlMs = options.ttlMs;
    this.acquiredAt = options.acquiredAt;
    this.expiresAt = options.expiresAt;
    this.#onBackgroundError = options.onBackgroundError;
    this.#deadline = Date.now() + options.ttlMs;
    const interval = Math.min(options.manager.heartbeatMs, Math.floor(options.ttlMs / 3));
    this.#timer = setInterval(() => this.#heartbeat(), Math.max(10, interval));
    // A held lease must not keep the process alive: a process that exits lets it expire.
    this.#timer.unref();
  }

  get owner(): string {
    return this.#manager.owner;
  }

  get lost(): boolean {
    return this.#lostReason !== undefined;
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

  /** Marks the lease lost: stops renewing and aborts the signal. */
  loseTo(reason: string): void {
    if (this.#lostReason !== undefined) return;
    this.#lostReason = reason;
    this.#stopTimer();
    this.#controller.abort(this.lostError());
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
      values: [encodeText(this.sessionId), this.token, this.#ttlMs],
      context: `renewing the lease of session '${this.sessionId}' failed`,
    });
    const row = result.rows[0];
    if (row === undefined) {
      this.loseTo('another process took it over after it expired');
      throw this.lostError();
    }
    this.expiresAt = row.expires_at;
    this.#deadline = sentAt + this.#ttlMs;
  }

  #heartbeat(): void {
    if (this.#renewing !== undefined || this.lost) return;
    this.renew().catch((error: unknown) => {
      // Lost during this renewal (it found the lease taken over): the host hears of it once, here.
      if (this.lost) {
        this.#onBackgroundError(this.lostError());
        return;
      }
      // The database could not be asked; past the deadline another process may hold the session.
      if (Date.now() >= this.#deadline) {
        this.loseTo('it could not be renewed before it expired');
        this.#onBackgroundError(this.lostError());
        return;
      }
      this.#onBackgroundError(
        storageError(error, `renewing the lease of session '${this.sessionId}' failed`),
      );
    });
  }

  async #releaseOnce(): Promise<void> {
    this.#stopTimer();
    this.#manager.forget(this);
    await this.#renewing?.catch(() => undefined);
    await this.#database.query({
      statement: { text: `DELETE FROM ${this.#database.tables.leases} WHERE session_id = $1 AND token = $2` },
      values: [encodeText(this.sessionId), this.token],
      context: `releasing the lease of session '${this.sessionId}' failed`,
    });
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
