import type {
  SessionEvent,
  SessionEventPayload,
  SessionPage,
  SessionStorage,
  SessionSummary,
} from '@youyou/agent';
import { AgentError } from '@youyou/agent';
import {
  checkPageLimit,
  checkSessionEvent,
  checkSessionId,
  decodeSessionCursor,
  decodeStoredValue,
  encodeSessionCursor,
  encodeStoredValue,
  messageTextOf,
  sessionTitleOf,
} from '@youyou/agent/storage';
import type { ClaimManager, SqliteSessionClaim } from './claims.js';
import type { SqliteConnection } from './connection.js';
import { invalidInput } from './errors.js';
import { eventId, eventRange } from './event-keys.js';
import { SearchIndexer } from './search-index.js';
import { SESSION_SQL as SQL } from './session-sql.js';
import { KnownSessionState, SessionStateCache } from './session-states.js';
import { codePointLength, ftsPhrase, TRIGRAM_LENGTH } from './text.js';

/** An event made ready for the INSERT, outside the transaction. */
interface EventRow {
  timestampMs: number;
  payload: string;
  tagged: 0 | 1;
  /** 1 for a message, 0 for metadata: what `message_count` adds. */
  messages: 0 | 1;
  /** The title this event gives a session that has none yet (user messages only), and its lower case. */
  title: string | null;
  titleLower: string | null;
  /** 1 for a user or assistant message with text: what the search index takes. */
  searchable: 0 | 1;
}

type SummaryRow = [
  sessionId: string,
  title: string | null,
  createdAt: number,
  updatedAt: number,
  messages: number,
];

function rowOf(event: SessionEvent): EventRow {
  const payload: SessionEventPayload = event.payload;
  const { json, tagged } = encodeStoredValue(payload, 'the session event');
  let title: string | null = null;
  let searchable: 0 | 1 = 0;
  if (payload.type === 'user_message' || payload.type === 'assistant_message') {
    const text = messageTextOf(payload.content);
    if (payload.type === 'user_message') title = sessionTitleOf(text);
    if (text !== '') searchable = 1;
  }
  return {
    timestampMs: event.timestamp.getTime(),
    payload: json,
    tagged: tagged ? 1 : 0,
    messages: payload.type === 'metadata' ? 0 : 1,
    title,
    titleLower: title === null ? null : title.toLowerCase(),
    searchable,
  };
}

function summaryOf(row: SummaryRow): SessionSummary {
  const [sessionId, title, createdAt, updatedAt, messageCount] = row;
  return {
    sessionId,
    title: title ?? '',
    createdAt: new Date(createdAt),
    updatedAt: new Date(updatedAt),
    messageCount,
  };
}

/**
 * A SessionStorage on SQLite (made by `openSqliteStorage`). Each `saveEvent` is one transaction that
 * appends the event and updates the session's summary (title, updatedAt, message count), so a crash
 * leaves all of it or none; the message text is indexed for search a moment later (search-index.ts).
 * The semantics are those of the in-memory reference storage: `findSession` matches an id prefix, or a
 * case-insensitive literal substring of the title or of a user or assistant message's text. Every method
 * rejects with AgentError: INVALID_INPUT for bad arguments, STORAGE_ERROR when SQLite fails (retryable
 * when the file stayed locked). Beyond the port's required methods: `acquireSession` (claims, see
 * claims.ts), `saveEvents` and `flushSearchIndex`.
 */
export class SqliteSessionStorage implements SessionStorage {
  readonly #connection: SqliteConnection;
  readonly #indexer: SearchIndexer;
  readonly #claims: ClaimManager;
  readonly #states = new SessionStateCache();

  /** Made by `openSqliteStorage`. */
  constructor(options: { connection: SqliteConnection; claims: ClaimManager }) {
    const { connection } = options;
    this.#connection = connection;
    this.#claims = options.claims;
    this.#indexer = new SearchIndexer(connection);
    // A released claim ends the session's run here (see SessionStateCache).
    this.#claims.onRelease((sessionId) => this.#states.forget(sessionId));
    // A previous process may have left messages unindexed.
    this.#indexer.schedule();
  }

  /** Appends one event in one transaction, creating the session on its first event. */
  async saveEvent(sessionId: string, event: SessionEvent): Promise<void> {
    checkSessionId(sessionId);
    checkSessionEvent(event);
    await this.#write(sessionId, [rowOf(event)]);
  }

  /** Appends several events of one session in one transaction: all are saved, or none. */
  async saveEvents(sessionId: string, events: readonly SessionEvent[]): Promise<void> {
    checkSessionId(sessionId);
    if (!Array.isArray(events)) throw invalidInput('events must be an array of session events');
    for (const event of events) checkSessionEvent(event);
    if (events.length > 0) await this.#write(sessionId, events.map(rowOf));
  }

  /** The whole log in save order (Dates revived), or null for an unknown id. */
  async loadSession(sessionId: string): Promise<SessionEvent[] | null> {
    return this.#readLog(sessionId, (timeMs, payload) => ({ timestamp: new Date(timeMs), payload }));
  }

  /** The payloads of `loadSession`'s events, without a Date and an event object each (what a resume reads). */
  async loadPayloads(sessionId: string): Promise<SessionEventPayload[] | null> {
    return this.#readLog(sessionId, (_timeMs, payload) => payload);
  }

  /** The log of a session, each event as `entryOf` makes it of its time and decoded payload; null for an unknown id. */
  #readLog<T>(
    sessionId: string,
    entryOf: (timeMs: number, payload: SessionEventPayload) => T,
  ): Promise<T[] | null> {
    checkSessionId(sessionId);
    const connection = this.#connection;
    return connection.read(`loading session '${sessionId}'`, () => {
      const found = connection.statement(SQL.sessionKey).raw().get(sessionId) as [number, number] | undefined;
      if (found === undefined) return null;
      const { first, last } = eventRange(found[0]);
      // Two plucked columns rather than rows: no object per row, so loading costs about what a bare SELECT of
      // the payloads and JSON.parse of each cost (measured; rows as objects added a third). One read
      // transaction, so both lists come from the same snapshot.
      const times = connection.statement(SQL.eventTimes).pluck().all(first, last) as (number | string)[];
      const payloads = connection.statement(SQL.eventPayloads).pluck().all(first, last) as string[];
      if (times.length !== payloads.length) {
        throw new AgentError({
          code: 'STORAGE_ERROR',
          message: `loading session '${sessionId}' failed: the log changed while it was read; try again`,
          retryable: true,
          sourceComponent: 'storage',
        });
      }
      const entries: T[] = new Array(payloads.length);
      for (let index = 0; index < payloads.length; index += 1) {
        const time = times[index] as number | string;
        // A number: an untagged payload; text (`<ms>t`): a payload whose tags have to be revived.
        const tagged = typeof time === 'string';
        entries[index] = entryOf(
          tagged ? Number.parseInt(time, 10) : time,
          decodeStoredValue(payloads[index] as string, tagged) as SessionEventPayload,
        );
      }
      return entries;
    });
  }

  /** Newest first; the cursor means "strictly after this position", so new sessions do not shift later pages. */
  async listSessions(cursor: string | undefined, limit: number): Promise<SessionPage> {
    checkPageLimit(limit);
    const after = cursor === undefined ? undefined : decodeSessionCursor(cursor);
    const connection = this.#connection;
    const rows = (await connection.read('listing sessions', () =>
      after === undefined
        ? connection
            .statement(SQL.firstPage)
            .raw()
            .all(limit + 1)
        : connection
            .statement(SQL.nextPage)
            .raw()
            .all(after.updatedAtMs, after.sessionId, limit + 1),
    )) as SummaryRow[];
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      sessions: page.map(summaryOf),
      nextCursor:
        rows.length > limit && last !== undefined
          ? encodeSessionCursor({ updatedAtMs: last[3], sessionId: last[0] })
          : null,
    };
  }

  /** Sessions whose id starts with the query or whose title or message text contains it, newest first. */
  async findSession(query: string): Promise<SessionSummary[]> {
    if (typeof query !== 'string') throw invalidInput('query must be a string');
    const needle = query.trim().toLowerCase();
    if (needle === '') return [];
    const connection = this.#connection;
    const rows = (await connection.read('searching sessions', () =>
      codePointLength(needle) >= TRIGRAM_LENGTH
        ? connection
            .statement(SQL.findIndexed)
            .raw()
            .all({ needle, phrase: ftsPhrase(needle) })
        : connection.statement(SQL.findScan).raw().all({ needle }),
    )) as SummaryRow[];
    this.#indexer.schedule();
    return rows.map(summaryOf);
  }

  /**
   * Adds every message not indexed yet to the full-text index, now, and resolves with how many. This
   * happens by itself a moment after writes; call it to control when the work is done (before a backup,
   * in a benchmark). Searches are exact either way.
   */
  flushSearchIndex(): Promise<number> {
    return this.#indexer.flush();
  }

  /**
   * The value of the last `metadata` event with this key of each session (sessions without one, or
   * unknown, are left out): what an application stored about its sessions (a workspace, a label) without
   * loading their logs.
   */
  async metadataOf(sessionIds: readonly string[], key: string): Promise<Map<string, unknown>> {
    if (!Array.isArray(sessionIds)) throw invalidInput('sessionIds must be an array of session ids');
    for (const sessionId of sessionIds) checkSessionId(sessionId);
    if (typeof key !== 'string' || key === '') throw invalidInput('key must be a non-empty string');
    const connection = this.#connection;
    return connection.read('reading session metadata', () => {
      const values = new Map<string, unknown>();
      for (const sessionId of sessionIds) {
        const found = connection.statement(SQL.sessionKey).raw().get(sessionId) as
          | [number, number]
          | undefined;
        if (found === undefined) continue;
        const { first, last } = eventRange(found[0]);
        const row = connection.statement(SQL.lastMetadata).raw().get(first, last, key) as
          | [string, number]
          | undefined;
        if (row === undefined) continue;
        const payload = decodeStoredValue(row[0], row[1] === 1) as SessionEventPayload;
        if (payload.type === 'metadata') values.set(sessionId, payload.value);
      }
      return values;
    });
  }

  /**
   * Claims the session for this storage instance until the claim is released (the core does this for
   * every session it runs): another instance, in this process or another on the same file, is refused
   * with SESSION_BUSY. See SqliteSessionClaim for expiry, renewal and the fencing of a stale holder.
   */
  acquireSession(sessionId: string): Promise<SqliteSessionClaim> {
    return this.#claims.acquire(sessionId);
  }

  /** Removes a session with its events and search texts; an unknown id is not an error. */
  async deleteSession(sessionId: string): Promise<void> {
    checkSessionId(sessionId);
    const connection = this.#connection;
    this.#states.forget(sessionId);
    await connection.write(`deleting session '${sessionId}'`, () => {
      const found = connection.statement(SQL.sessionKey).raw().get(sessionId) as [number, number] | undefined;
      if (found === undefined) return;
      const key = found[0];
      const { first, last } = eventRange(key);
      const lastEvent = connection.statement(SQL.lastEvent).raw().get(first, last) as
        | [number, number]
        | undefined;
      if (lastEvent === undefined) connection.statement(SQL.deleteActivityBySession).run(key);
      else connection.statement(SQL.deleteActivity).run(lastEvent[1], sessionId);
      // Their search texts and index entries go with them (a foreign key cascade and a trigger).
      connection.statement(SQL.deleteEvents).run(first, last);
      connection.statement(SQL.deleteSession).run(key);
    });
  }

  async #write(sessionId: string, rows: readonly EventRow[]): Promise<void> {
    const operation =
      rows.length === 1
        ? `saving an event of session '${sessionId}'`
        : `saving ${rows.length} events of session '${sessionId}'`;
    try {
      await this.#connection.write(operation, () => {
        this.#claims.fenceWrite(sessionId);
        const { sessionKey, firstSequence } = this.#advance(sessionId, rows);
        const insertEvent = this.#connection.statement(SQL.insertEvent);
        for (let index = 0; index < rows.length; index += 1) {
          const row = rows[index] as EventRow;
          const id = eventId({ sessionKey, sequence: firstSequence + index, sessionId });
          insertEvent.run(id, row.timestampMs, row.tagged, row.searchable, row.payload);
        }
      });
    } catch (error) {
      // The transaction was rolled back: what this storage remembers of the session may be ahead of it.
      this.#states.forget(sessionId);
      throw error;
    }
    if (rows.some((row) => row.searchable === 1)) this.#indexer.schedule();
  }

  /**
   * Moves the session's summary on by the events of one write (creating the session on its first), in one UPDATE
   * however many they are; answers its key and the sequence number of the write's first event.
   */
  #advance(sessionId: string, rows: readonly EventRow[]): { sessionKey: number; firstSequence: number } {
    const first = rows[0] as EventRow;
    let state = this.#states.get(sessionId);
    // No match: another connection wrote to this session since; read where it stands.
    if (state !== undefined && !this.#move(sessionId, state, rows, 0)) state = undefined;
    let moved = 0;
    if (state === undefined) {
      state = this.#readState(sessionId);
      if (state === undefined) {
        // The first event makes the session; the others of the write move it on.
        state = this.#create(sessionId, first);
        moved = 1;
      }
      if (moved < rows.length && !this.#move(sessionId, state, rows, moved)) {
        throw new AgentError({
          code: 'STORAGE_ERROR',
          message: `the summary of session '${sessionId}' does not match its events: the database was changed outside @youyou/sqlite`,
        });
      }
    }
    const firstSequence = state.eventCount + 1 - moved;
    if (!state.titled) {
      const title = rows.find((row) => row.title !== null);
      if (title !== undefined) {
        this.#connection.statement(SQL.setTitle).run(title.title, title.titleLower, state.key);
        state.titled = true;
      }
    }
    state.updatedAtMs = (rows[rows.length - 1] as EventRow).timestampMs;
    state.eventCount = firstSequence + rows.length - 1;
    this.#states.remember(sessionId, state);
    return { sessionKey: state.key, firstSequence };
  }

  /** The UPDATE of the summary for `rows` from `from` on; false when the stored summary is not `state`. */
  #move(sessionId: string, state: KnownSessionState, rows: readonly EventRow[], from: number): boolean {
    let messages = 0;
    for (let index = from; index < rows.length; index += 1) messages += (rows[index] as EventRow).messages;
    const { changes } = this.#connection
      .statement(SQL.moveActivity)
      .run(
        (rows[rows.length - 1] as EventRow).timestampMs,
        messages,
        rows.length - from,
        state.updatedAtMs,
        sessionId,
        state.eventCount,
        state.key,
      );
    return changes === 1;
  }

  /** Where a stored session stands: its last event gives updatedAt and the event count (the invariant). */
  #readState(sessionId: string): KnownSessionState | undefined {
    const connection = this.#connection;
    const found = connection.statement(SQL.sessionKey).raw().get(sessionId) as [number, number] | undefined;
    if (found === undefined) return undefined;
    const [key, titled] = found;
    const { first, last } = eventRange(key);
    const lastEvent = connection.statement(SQL.lastEvent).raw().get(first, last) as
      | [number, number]
      | undefined;
    if (lastEvent === undefined) {
      throw new AgentError({
        code: 'STORAGE_ERROR',
        message: `session '${sessionId}' has no events: the database was changed outside @youyou/sqlite`,
      });
    }
    return new KnownSessionState({
      key,
      updatedAtMs: lastEvent[1],
      eventCount: lastEvent[0] - first + 1,
      titled: titled === 1,
    });
  }

  /** Creates the session with its first event; its state, before any other event of the write. */
  #create(sessionId: string, row: EventRow): KnownSessionState {
    const connection = this.#connection;
    const key = connection
      .statement(SQL.createSession)
      .pluck()
      .get(sessionId, sessionId.toLowerCase(), row.title, row.titleLower, row.timestampMs) as number;
    connection.statement(SQL.createActivity).run(row.timestampMs, sessionId, key, row.messages);
    return new KnownSessionState({
      key,
      updatedAtMs: row.timestampMs,
      eventCount: 1,
      titled: row.title !== null,
    });
  }
}
