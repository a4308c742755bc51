import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { AgentError } from '@youyou/agent';
import { checkSessionId } from '@youyou/agent/storage';
import { encodeText } from './codec.js';
import type { Database } from './database.js';
import { invalidConfig, storageError } from './errors.js';
import { busy, HeldLease, type SessionLease } from './held-lease.js';

export type { SessionLease } from './held-lease.js';

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
  /** The timer of the next heartbeat (see `#renewAll`), when armed, and when it fires (local time). */
  #heartbeat: NodeJS.Timeout | undefined;
  #heartbeatDue = 0;
  #heartbeatRunning = false;

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
          owner: this.owner,
          database: this.#database,
          sessionId,
          token,
          ttlMs,
          heartbeatMs: this.heartbeatMs,
          acquiredAt: row.acquired_at,
          expiresAt: row.expires_at,
          forget: (released) => this.#forget(released),
        });
        this.#held.set(sessionId, lease);
        this.#scheduleHeartbeat(lease.intervalMs);
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
  #forget(lease: HeldLease): void {
    if (this.#held.get(lease.sessionId) === lease) this.#held.delete(lease.sessionId);
  }

  /**
   * Arms the heartbeat to fire within `intervalMs`, unless it fires sooner already or a renewal pass is
   * under way (the pass arms it again when it ends). The timer is unref'd: a held lease never keeps the
   * process alive, and a process that exits lets its leases expire.
   */
  #scheduleHeartbeat(intervalMs: number): void {
    if (this.#heartbeatRunning) return;
    const due = Date.now() + intervalMs;
    if (this.#heartbeat !== undefined && this.#heartbeatDue <= due) return;
    if (this.#heartbeat !== undefined) clearTimeout(this.#heartbeat);
    this.#heartbeatDue = due;
    this.#heartbeat = setTimeout(() => {
      this.#heartbeat = undefined;
      this.#renewAll().catch(() => undefined);
    }, intervalMs);
    this.#heartbeat.unref();
  }

  /**
   * One heartbeat: renews every held lease in one statement (a server holds one per open session, so one
   * statement per lease would cost as many round trips every interval). A lease the statement did not
   * find was taken over: it is lost. When the statement fails, the leases whose ttl may have passed since
   * their last renewal are lost, and the failure is reported. Then the next heartbeat is armed for the
   * shortest interval among the leases still held.
   */
  async #renewAll(): Promise<void> {
    // In session id order, as every storage sends them: two heartbeats that meet on rows (a lease one of
    // them lost without knowing yet) tend to lock them in one order, not deadlock.
    const leases = [...this.#held.values()]
      .filter((lease) => lease.renewable)
      .sort((first, second) => (first.sessionId < second.sessionId ? -1 : 1));
    if (leases.length === 0) return;
    this.#heartbeatRunning = true;
    const sentAt = Date.now();
    try {
      const result = await this.#database.query<{ token: string; expires_at: Date }>({
        statement: {
          text: `UPDATE ${this.#database.tables.leases} AS l
                    SET expires_at = clock_timestamp() + r.ttl_ms * interval '1 millisecond'
                   FROM unnest($1::text[], $2::uuid[], $3::bigint[]) AS r(session_id, token, ttl_ms)
                  WHERE l.session_id = r.session_id AND l.token = r.token
                  RETURNING l.token::text AS token, l.expires_at`,
        },
        values: [
          leases.map((lease) => encodeText(lease.sessionId)),
          leases.map((lease) => lease.token),
          leases.map((lease) => lease.ttlMs),
        ],
        context: `renewing ${leases.length} session lease(s) failed`,
      });
      const renewed = new Map(result.rows.map((row) => [row.token, row.expires_at]));
      for (const lease of leases) {
        const expiresAt = renewed.get(lease.token);
        if (expiresAt !== undefined) lease.renewed(expiresAt, sentAt);
        else this.#lose(lease, 'another process took it over after it expired');
      }
    } catch (error) {
      let unsure = false;
      for (const lease of leases) {
        if (lease.pastDeadline) this.#lose(lease, 'it could not be renewed before it expired');
        else unsure ||= this.#held.get(lease.sessionId) === lease && lease.renewable;
      }
      // The leases still within their ttl stay held; the next heartbeat tries again.
      if (unsure) this.#onBackgroundError(storageError(error, 'renewing session leases failed'));
    } finally {
      this.#heartbeatRunning = false;
      const shortest = [...this.#held.values()].reduce(
        (least, lease) => (lease.renewable ? Math.min(least, lease.intervalMs) : least),
        Number.POSITIVE_INFINITY,
      );
      if (shortest !== Number.POSITIVE_INFINITY) this.#scheduleHeartbeat(shortest);
    }
  }

  /** Marks a lease lost and tells the host, unless it was released meanwhile (then nobody cares). */
  #lose(lease: HeldLease, reason: string): void {
    if (this.#held.get(lease.sessionId) !== lease || !lease.renewable) return;
    lease.loseTo(reason);
    this.#onBackgroundError(lease.lostError());
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
    // Nothing is held any more (a lease whose release failed is left to expire).
    if (this.#heartbeat !== undefined) clearTimeout(this.#heartbeat);
    this.#heartbeat = undefined;
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
