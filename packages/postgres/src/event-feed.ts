import { createHash } from 'node:crypto';
import type { SessionEvent } from '@youyou/agent';
import { checkSessionId, decodeStoredValue } from '@youyou/agent/storage';
import type { PoolClient } from 'pg';
import { encodeText } from './codec.js';
import { type Database, statementName } from './database.js';
import { invalidInput, storageError } from './errors.js';

/** A committed event of a session's log with its position: 1, 2, 3 … in save order, never reused. */
export interface PositionedSessionEvent extends SessionEvent {
  /** The event's `seq` in the log: stable across processes, so a reader's cursor is valid on every server. */
  sequence: number;
}

/** How soon, and at most how often, a storage listens again after its listening connection dropped. */
const RELISTEN_FIRST_DELAY_MS = 100;
const RELISTEN_MAX_DELAY_MS = 5_000;

/** Most events one `readEventsAfter` returns by default, and at most. */
const DEFAULT_READ_LIMIT = 500;
const MAX_READ_LIMIT = 10_000;

/**
 * The notification key of a session: a digest, because a NOTIFY payload is limited to 8000 bytes and a
 * session id is not. Two ids with one key would only cost a reader an extra read.
 */
function sessionKey(sessionId: string): string {
  return createHash('sha1').update(sessionId).digest('hex');
}

/**
 * Reading a session's log from its position on, and hearing of new events in any process: every save
 * through a storage opened with `eventNotifications` is followed by a NOTIFY on the schema's channel
 * (sent after the save's commit, so a reader woken by it finds the event; saves that commit close together
 * share one statement, see `announce`), and `watch` LISTENs on one dedicated connection per storage (taken
 * again when it drops). A notification is only a wake-up: readers read the table from their cursor, so a
 * lost notification (a process killed between commit and NOTIFY) delays, never loses, an event.
 */
export class EventFeed {
  readonly #database: Database;
  readonly #notify: boolean;
  readonly #channel: string;
  readonly #listeners = new Map<string, Set<() => void>>();
  /** Keys of the sessions saved since the last NOTIFY statement was sent. */
  readonly #unannounced = new Set<string>();
  /** The pass sending NOTIFY statements, while one runs. */
  #announcing: Promise<void> | undefined;
  #client: Promise<PoolClient> | undefined;
  /** Listening connections given back to the pool. */
  readonly #released = new WeakSet<PoolClient>();
  /** The timer of the next attempt to listen again after the listening connection dropped. */
  #relistenTimer: NodeJS.Timeout | undefined;
  #closed = false;

  /** Made by `openPostgresStorage`. */
  constructor(options: { database: Database; notify: boolean }) {
    this.#database = options.database;
    this.#notify = options.notify;
    // One channel per schema; a channel name is an identifier, so the digest keeps it short and plain.
    this.#channel = statementName(options.database.schemaName, 'events');
  }

  /** The events of the session after position `after`, oldest first, at most `limit` (default 500). */
  async readAfter(
    sessionId: string,
    after: number,
    limit = DEFAULT_READ_LIMIT,
  ): Promise<PositionedSessionEvent[]> {
    checkSessionId(sessionId);
    if (!Number.isSafeInteger(after) || after < 0) throw invalidInput('after must be a whole number ≥ 0');
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_READ_LIMIT) {
      throw invalidInput(`limit must be a whole number from 1 to ${MAX_READ_LIMIT}`);
    }
    const result = await this.#database.query<{ seq: string; timestamp_ms: string; payload: string }>({
      statement: {
        name: statementName(this.#database.schemaName, 'read_after'),
        text: `SELECT seq, timestamp_ms, payload FROM ${this.#database.tables.events}
                WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
      },
      values: [encodeText(sessionId), after, limit],
      context: `reading the events of session '${sessionId}' failed`,
    });
    return result.rows.map((row) => ({
      sequence: Number(row.seq),
      timestamp: new Date(Number(row.timestamp_ms)),
      payload: decodeStoredValue(row.payload) as SessionEvent['payload'],
    }));
  }

  /**
   * Tells every watcher, in every process, that the session has a new committed event (when enabled), a
   * moment later: one NOTIFY statement at a time is in flight, and the sessions saved meanwhile share the
   * next one. Under load that is far fewer statements than one per event, and the save does not wait for
   * it. A failed statement is not retried: a notification is a wake-up only (readers poll as well).
   */
  announce(sessionId: string): void {
    if (!this.#notify || this.#closed) return;
    this.#unannounced.add(sessionKey(sessionId));
    this.#announcing ??= this.#sendAnnouncements();
  }

  /** Sends NOTIFY statements until no session waits for one; `#announcing` is set while it runs. */
  async #sendAnnouncements(): Promise<void> {
    // A tick first, so that `#announcing` holds this pass before it can end.
    await undefined;
    try {
      while (this.#unannounced.size > 0 && !this.#database.closed) {
        const keys = [...this.#unannounced];
        this.#unannounced.clear();
        await this.#database
          .query({
            statement: {
              name: statementName(this.#database.schemaName, 'announce'),
              text: 'SELECT pg_notify($1, key) FROM unnest($2::text[]) AS key',
            },
            values: [this.#channel, keys],
            context: 'announcing saved events failed',
          })
          .catch(() => undefined);
      }
    } finally {
      this.#announcing = undefined;
    }
  }

  /**
   * Calls `listener` whenever another save of the session is announced (possibly more than once per
   * event, and for nothing new); resolves once LISTEN is in place, with the function that stops it.
   */
  async watch(sessionId: string, listener: () => void): Promise<() => void> {
    checkSessionId(sessionId);
    if (typeof listener !== 'function') throw invalidInput('listener must be a function');
    await this.#listening();
    const key = sessionKey(sessionId);
    let listeners = this.#listeners.get(key);
    if (listeners === undefined) {
      listeners = new Set();
      this.#listeners.set(key, listeners);
    }
    listeners.add(listener);
    return () => {
      const current = this.#listeners.get(key);
      current?.delete(listener);
      if (current?.size === 0) this.#listeners.delete(key);
    };
  }

  /** Waits for the NOTIFY in flight, gives back the listening connection; later `watch` calls reject. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#relistenTimer !== undefined) clearTimeout(this.#relistenTimer);
    this.#relistenTimer = undefined;
    await this.#announcing;
    this.#listeners.clear();
    const pending = this.#client;
    this.#client = undefined;
    if (pending === undefined) return;
    const client = await pending.catch(() => undefined);
    if (client === undefined) return;
    try {
      await client.query('UNLISTEN *');
      this.#release(client, undefined);
    } catch (error) {
      this.#release(client, error);
    }
  }

  /** Gives a listening connection back once (an `error` after close must not release it twice). */
  #release(client: PoolClient, error: unknown): void {
    if (this.#released.has(client)) return;
    this.#released.add(client);
    if (error === undefined) client.release();
    else client.release(error instanceof Error ? error : new Error(String(error)));
  }

  /**
   * Listens again after the listening connection dropped, while anyone watches: after `delayMs`, doubled
   * after each failed attempt up to RELISTEN_MAX_DELAY_MS. Once listening, every watcher is woken, since
   * the saves announced while nobody listened were missed.
   */
  #relisten(delayMs: number): void {
    if (this.#closed || this.#listeners.size === 0 || this.#relistenTimer !== undefined) return;
    this.#relistenTimer = setTimeout(() => {
      this.#relistenTimer = undefined;
      if (this.#closed || this.#listeners.size === 0) return;
      this.#listening().then(
        () => {
          for (const listeners of [...this.#listeners.values()]) {
            for (const listener of [...listeners]) {
              try {
                listener();
              } catch {
                // A watcher's own failure is its own; the others are still woken.
              }
            }
          }
        },
        () => this.#relisten(Math.min(delayMs * 2, RELISTEN_MAX_DELAY_MS)),
      );
    }, delayMs);
    // Watching must not keep a process alive on its own.
    this.#relistenTimer.unref();
  }

  /** The connection that LISTENs, taken from the pool on first use and taken again after it fails. */
  #listening(): Promise<PoolClient> {
    const context = 'listening for session events failed';
    if (this.#closed || this.#database.closed) {
      return Promise.reject(storageError(new Error('the PostgreSQL storage has been closed'), context));
    }
    if (this.#client !== undefined) return this.#client;
    const connecting = (async () => {
      const client = await this.#database.pool.connect();
      const release = (error: unknown) => this.#release(client, error);
      try {
        client.on('notification', (message) => {
          if (message.channel !== this.#channel || message.payload === undefined) return;
          for (const listener of this.#listeners.get(message.payload) ?? []) listener();
        });
        client.on('error', (error) => {
          // A dropped listening connection: listen again on another one (readers poll meanwhile).
          if (this.#client !== connecting) return release(error);
          this.#client = undefined;
          release(error);
          this.#relisten(RELISTEN_FIRST_DELAY_MS);
        });
        await client.query(`LISTEN "${this.#channel}"`);
        return client;
      } catch (error) {
        release(error);
        throw error;
      }
    })().catch((error: unknown) => {
      if (this.#client === connecting) this.#client = undefined;
      throw storageError(error, context);
    });
    this.#client = connecting;
    return connecting;
  }
}
