import { randomUUID } from 'node:crypto';
import type { SessionEvent, SessionPage, SessionStorage, SessionSummary } from '@youyou/agent';
import {
  checkSessionEvent,
  checkSessionId,
  decodeStoredValue,
  encodeStoredValue,
  messageTextOf,
  sessionTitleOf,
} from '@youyou/agent/storage';
import { encodeText, searchForm, sortKey } from './codec.js';
import type { Database } from './database.js';
import { invalidInput, storageError } from './errors.js';
import type { EventFeed, PositionedSessionEvent } from './event-feed.js';
import type { AcquireLeaseOptions, LeaseHolder, LeaseManager, SessionLease } from './lease.js';
import { type BatchTarget, type EventRow, lastWriteId, writeBatch } from './save-batch.js';
import type { SearchIndexer } from './search-index.js';
import {
  findSessions,
  listSessionPage,
  type RankedSessionSummary,
  searchRankedSessions,
} from './session-queries.js';
import { type SessionStatements, sessionStatements } from './session-sql.js';

export type { RankedSessionSummary } from './session-queries.js';

/** How many session ids `#written` holds before it starts over. */
const WRITTEN_LIMIT = 10_000;

/**
 * A SessionStorage on PostgreSQL (SPEC §3 ports). One row per event (its payload as JSON text in which
 * Dates, undefined and non-finite numbers are tagged so they round-trip), one activity row per session
 * (updated time, counts), written by the same statement as the event insert, and one session row (title,
 * creation time) written on the first event and the first title. Message text is indexed for search in
 * the background (see SearchIndexer); searches are exact at every moment. `findSession` has the
 * reference semantics: an id prefix, or a literal, case-insensitive substring of the title or of a user or
 * assistant message. Beyond the port: session leases (`acquireLease`, `acquireSession`), a ranked
 * full-text search (`searchRanked`) and `flushSearchIndex`. Every method rejects with AgentError:
 * INVALID_INPUT for bad arguments, STORAGE_ERROR (`retryable` for connection failures) when PostgreSQL fails.
 */
export class PostgresSessionStorage implements SessionStorage {
  readonly #database: Database;
  readonly #leases: LeaseManager;
  readonly #indexer: SearchIndexer;
  readonly #sql: SessionStatements;
  readonly #feed: EventFeed;
  /**
   * The write id of an event whose save failed: the core retries that same object, and if the failed
   * attempt did commit (the connection dropped after COMMIT), the retry is recognised and not doubled.
   */
  readonly #pendingWrites = new WeakMap<SessionEvent, string>();

  /**
   * Sessions this storage has saved an event of: their next save tries `append` first. Only a hint (a
   * wrong guess costs one round trip), so it is simply emptied when it grows large.
   */
  readonly #written = new Set<string>();

  /** Made by `openPostgresStorage`. */
  constructor(options: {
    database: Database;
    leases: LeaseManager;
    indexer: SearchIndexer;
    feed: EventFeed;
  }) {
    this.#database = options.database;
    this.#feed = options.feed;
    this.#leases = options.leases;
    this.#indexer = options.indexer;
    this.#sql = sessionStatements(this.#database.tables, this.#database.schemaName);
  }

  /**
   * Appends one event and moves the session's activity row on, in one statement: `append` for a session
   * this storage has written, `upsert` for another and whenever `append` changed nothing (the first
   * event, a retry of a save that did commit, a lease to check against the lease row).
   */
  async saveEvent(sessionId: string, event: SessionEvent): Promise<void> {
    checkSessionId(sessionId);
    checkSessionEvent(event);
    const row = this.#rowOf(sessionId, event);
    const context = `saving an event of session '${sessionId}' failed`;
    let writeId = this.#pendingWrites.get(event);
    if (writeId === undefined) {
      writeId = randomUUID();
      this.#pendingWrites.set(event, writeId);
    }
    const appended = this.#written.has(sessionId) && (await this.#append(row, writeId, context));
    if (!appended) {
      if (!(await this.#upsert(sessionId, row, writeId, context))) {
        this.#pendingWrites.delete(event);
        throw this.#leases.markLost(sessionId);
      }
      this.#remember(sessionId);
    }
    this.#pendingWrites.delete(event);
    if (row.searchText !== null) this.#indexer.schedule();
    // The event is committed: the wake-up goes out a moment later, shared with other saves; a lost one only
    // delays readers, which poll too (see EventFeed).
    this.#feed.announce(sessionId);
  }

  /**
   * Appends several events of one session in one statement, so in one transaction: all of them or none,
   * numbered in order after the session's last event, with the summary, title, search texts and the
   * tails' wake-up as one `saveEvent` each would leave them. A retry of a batch (or of a `saveEvent`) that
   * did commit, with the same event objects and possibly more after them, writes only what is missing.
   */
  async saveEvents(sessionId: string, events: readonly SessionEvent[]): Promise<void> {
    checkSessionId(sessionId);
    if (!Array.isArray(events)) throw invalidInput('events must be an array of session events');
    for (const event of events) checkSessionEvent(event);
    if (events.length === 0) return;
    // Every event is encoded (and may be refused) before anything is written.
    const rows = events.map((event) => this.#rowOf(sessionId, event));
    const writeIds = events.map((event) => {
      const known = this.#pendingWrites.get(event);
      if (known !== undefined) return known;
      const writeId = randomUUID();
      this.#pendingWrites.set(event, writeId);
      return writeId;
    });
    const forget = () => {
      for (const event of events) this.#pendingWrites.delete(event);
    };
    let first = 0;
    // A second pass only when the first wrote nothing because part of the batch had committed already.
    for (let pass = 0; pass < 2 && first < rows.length; pass += 1) {
      const written = await writeBatch(
        this.#batchTarget(sessionId),
        rows.slice(first),
        writeIds.slice(first),
      );
      if (written === 'lost') {
        forget();
        throw this.#leases.markLost(sessionId);
      }
      if (written === 'all') {
        first = rows.length;
        break;
      }
      // The activity row's last write id says how much of the batch an earlier attempt saved.
      const last = await lastWriteId(this.#database, this.#sql, sessionId);
      const done = last === null ? -1 : writeIds.indexOf(last, first);
      if (done >= 0) first = done + 1;
    }
    forget();
    if (first < rows.length) {
      throw storageError(
        new Error('the log changed while the batch was retried'),
        `saving events of session '${sessionId}' failed`,
      );
    }
    this.#remember(sessionId);
    if (rows.some((row) => row.searchText !== null)) this.#indexer.schedule();
    this.#feed.announce(sessionId);
  }

  #batchTarget(sessionId: string): BatchTarget {
    return { database: this.#database, sql: this.#sql, sessionId, written: this.#written.has(sessionId) };
  }

  #rowOf(sessionId: string, event: SessionEvent): EventRow {
    const payload = event.payload;
    const row: EventRow = {
      id: encodeText(sessionId),
      timestampMs: event.timestamp.getTime(),
      messages: payload.type === 'metadata' ? 0 : 1,
      type: payload.type,
      json: encodeStoredValue(payload, 'the session event').json,
      searchText: null,
      title: null,
      titleSearch: null,
      leaseToken: this.#leases.fenceFor(sessionId),
    };
    if (payload.type === 'user_message' || payload.type === 'assistant_message') {
      const text = messageTextOf(payload.content);
      row.searchText = searchForm(text);
      if (payload.type === 'user_message') {
        const cut = sessionTitleOf(text);
        row.title = encodeText(cut);
        row.titleSearch = searchForm(cut);
      }
    }
    return row;
  }

  /** True when the event was appended; false when `upsert` has to do it (see `appendStatement`). */
  async #append(row: EventRow, writeId: string, context: string): Promise<boolean> {
    const values: unknown[] = [
      row.id,
      row.timestampMs,
      row.messages,
      writeId,
      row.type,
      row.json,
      row.searchText,
    ];
    if (row.leaseToken !== undefined) values.push(row.leaseToken);
    if (row.title !== null) values.push(row.title, row.titleSearch);
    const statement = this.#sql.append[row.leaseToken === undefined ? 0 : 1][row.title === null ? 0 : 1];
    const result = await this.#database.query({ statement, values, context });
    return result.rowCount === 1;
  }

  /** Saves the event with the full statement; false when a lease check found the lease taken over. */
  async #upsert(sessionId: string, row: EventRow, writeId: string, context: string): Promise<boolean> {
    const result = await this.#database.query<{ leased: boolean }>({
      statement: this.#sql.upsert,
      values: [
        row.id,
        sortKey(sessionId),
        searchForm(sessionId),
        row.title,
        row.titleSearch,
        row.timestampMs,
        row.messages,
        writeId,
        row.type,
        row.json,
        row.searchText,
        row.leaseToken ?? null,
      ],
      context,
    });
    return result.rows[0]?.leased !== false;
  }

  #remember(sessionId: string): void {
    if (this.#written.size >= WRITTEN_LIMIT) this.#written.clear();
    this.#written.add(sessionId);
  }

  /** The whole log in save order, or null for an unknown id. */
  async loadSession(sessionId: string): Promise<SessionEvent[] | null> {
    checkSessionId(sessionId);
    const result = await this.#database.query<{ timestamp_ms: string; payload: string }>({
      statement: this.#sql.load,
      values: [encodeText(sessionId)],
      context: `loading session '${sessionId}' failed`,
    });
    if (result.rows.length === 0) return null;
    return result.rows.map((row) => ({
      timestamp: new Date(Number(row.timestamp_ms)),
      payload: decodeStoredValue(row.payload) as SessionEvent['payload'],
    }));
  }

  /** Newest first; the cursor means "strictly after this position", so new sessions do not shift later pages. */
  listSessions(cursor: string | undefined, limit: number): Promise<SessionPage> {
    return listSessionPage({ database: this.#database, sql: this.#sql, cursor, limit });
  }

  /**
   * Sessions whose id starts with the query, or whose title or user/assistant message text contains it,
   * ignoring case and surrounding white space, newest first. The query is matched literally (`%`, `_`,
   * quotes and backslashes are plain characters).
   */
  findSession(query: string): Promise<SessionSummary[]> {
    return findSessions({ database: this.#database, sql: this.#sql, query });
  }

  /** Removes the session, its events and search texts; an unknown id is not an error. Its lease, if any, stays. */
  async deleteSession(sessionId: string): Promise<void> {
    checkSessionId(sessionId);
    this.#written.delete(sessionId);
    const id = encodeText(sessionId);
    // Two statements in one transaction: deleting the activity row waits for a save in progress and
    // keeps later ones out until the commit; the second statement's fresh snapshot then sees every
    // event saved before (one statement's snapshot could miss the event of the save it waited for).
    await this.#database.transaction(`deleting session '${sessionId}' failed`, async (query) => {
      const gone = await query<{ event_count: number }>(this.#sql.deleteActivity, [id]);
      await query(this.#sql.deleteRest, [id, gone.rows[0]?.event_count ?? 0]);
    });
  }

  /**
   * Copies every message not in the search indexes yet into them, now, and resolves with how many this
   * call copied. This happens by itself a moment after writes; call it to control when the work is done
   * (before a bulk search, in a benchmark). Searches are exact either way.
   */
  flushSearchIndex(): Promise<number> {
    return this.#indexer.flush();
  }

  /**
   * Full-text search in PostgreSQL's sense, beyond the port: whole words ('simple' configuration, no
   * stemming) of user and assistant messages, in web-search syntax (`"a phrase"`, `or`, `-word`),
   * best `ts_rank` first. Only the first 64K characters of a message are indexed.
   */
  searchRanked(query: string, limit = 20): Promise<RankedSessionSummary[]> {
    return searchRankedSessions({ database: this.#database, sql: this.#sql, query, limit });
  }

  /**
   * Takes the session's lease for this process (see SessionLease): rejects with SESSION_BUSY when another
   * process (another storage instance) holds it and `waitMs` passes without it being released or expiring.
   */
  acquireLease(sessionId: string, options?: AcquireLeaseOptions): Promise<SessionLease> {
    return this.#leases.acquire(sessionId, options);
  }

  /** The port's `acquireSession`: the Agent takes the lease with it in newSession/resumeSession (see the README). */
  acquireSession(sessionId: string): Promise<SessionLease> {
    return this.#leases.acquire(sessionId);
  }

  /**
   * The session's committed events after log position `after` (0: from the start), oldest first, at most
   * `limit` (default 500, at most 10,000); each carries its `sequence`, the same in every process. An
   * unknown session has none. The cursor of a cross-process tail (see the README, "Tailing a session").
   */
  readEventsAfter(sessionId: string, after: number, limit?: number): Promise<PositionedSessionEvent[]> {
    return this.#feed.readAfter(sessionId, after, limit);
  }

  /**
   * Calls `listener` when a storage opened with `eventNotifications` (in any process) saves an event of
   * the session (PostgreSQL LISTEN/NOTIFY); a wake-up to call `readEventsAfter`, not a delivery. Resolves
   * once listening, with the function that stops it.
   */
  watchEvents(sessionId: string, listener: () => void): Promise<() => void> {
    return this.#feed.watch(sessionId, listener);
  }

  /** Who holds the session's lease now, or null. */
  getLease(sessionId: string): Promise<LeaseHolder | null> {
    return this.#leases.holder(sessionId);
  }

  /** The name this storage holds leases under. */
  get leaseOwner(): string {
    return this.#leases.owner;
  }
}
