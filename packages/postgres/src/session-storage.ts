import { randomUUID } from 'node:crypto';
import {
  checkPageLimit,
  checkSessionEvent,
  checkSessionId,
  decodeSessionCursor,
  encodeSessionCursor,
  messageTextOf,
  type SessionEvent,
  type SessionPage,
  type SessionStorage,
  type SessionSummary,
  sessionTitleOf,
} from '@youyou/agent';
import {
  decodeText,
  encodeText,
  escapeLike,
  parseTagged,
  REPLACEMENT,
  searchForm,
  sortKey,
  stringifyTagged,
} from './codec.js';
import { type Database, type Statement, statementName } from './database.js';
import { invalidInput } from './errors.js';
import type { AcquireLeaseOptions, LeaseHolder, LeaseManager, SessionLease } from './lease.js';

interface SummaryRow {
  session_id: string;
  title: string | null;
  created_at_ms: string;
  updated_at_ms: string;
  message_count: number;
}

/** A session found by `searchRanked`, with its full-text rank. */
export interface RankedSessionSummary extends SessionSummary {
  /** The best `ts_rank` of the session's messages; larger is better. */
  rank: number;
}

const SUMMARY_COLUMNS = 'session_id, title, created_at_ms, updated_at_ms, message_count';

function summaryOf(row: SummaryRow): SessionSummary {
  return {
    sessionId: decodeText(row.session_id),
    title: decodeText(row.title ?? ''),
    createdAt: new Date(Number(row.created_at_ms)),
    updatedAt: new Date(Number(row.updated_at_ms)),
    messageCount: row.message_count,
  };
}

/**
 * A SessionStorage on PostgreSQL (SPEC §3 ports). One row per event (its payload as JSON text in which
 * Dates, undefined and non-finite numbers are tagged so they round-trip) and one summary row per
 * session, updated by the same statement as the event insert. `findSession` has the reference
 * semantics: an id prefix, or a literal, case-insensitive substring of the title or of a user or
 * assistant message. Beyond the port: session leases (`acquireLease`, `acquireSession`) and a ranked
 * full-text search (`searchRanked`). Every method rejects with AgentError: INVALID_INPUT for bad
 * arguments, STORAGE_ERROR (`retryable` for connection failures) when PostgreSQL fails.
 */
export class PostgresSessionStorage implements SessionStorage {
  readonly #database: Database;
  readonly #leases: LeaseManager;
  readonly #sql: Record<
    'save' | 'load' | 'firstPage' | 'nextPage' | 'find' | 'texts' | 'ranked' | 'delete',
    Statement
  >;
  /**
   * The write id of an event whose save failed: the core retries that same object, and if the failed
   * attempt did commit (the connection dropped after COMMIT), the retry is recognised and not doubled.
   */
  readonly #pendingWrites = new WeakMap<SessionEvent, string>();

  /** Made by `openPostgresStorage`. */
  constructor(options: { database: Database; leases: LeaseManager }) {
    this.#database = options.database;
    this.#leases = options.leases;
    const { sessions, events, leases } = this.#database.tables;
    const name = (label: string) => statementName(this.#database.schemaName, label);
    this.#sql = {
      save: {
        name: name('save_event'),
        text: `WITH lease AS (
                 SELECT 1 FROM ${leases} WHERE session_id = $1 AND token = $12::uuid FOR SHARE
               ), summary AS (
                 INSERT INTO ${sessions} AS s (session_id, sort_key, id_search, title, title_search,
                   created_at_ms, updated_at_ms, message_count, event_count, last_write_id)
                 SELECT $1::text, $2::bytea, $3::text, $4::text, $5::text, $6::bigint, $6::bigint, $7::integer, 1, $8::uuid
                  WHERE $12::uuid IS NULL OR EXISTS (SELECT 1 FROM lease)
                 ON CONFLICT (session_id) DO UPDATE SET
                   updated_at_ms = EXCLUDED.updated_at_ms,
                   message_count = s.message_count + EXCLUDED.message_count,
                   event_count = s.event_count + 1,
                   title = COALESCE(s.title, EXCLUDED.title),
                   title_search = COALESCE(s.title_search, EXCLUDED.title_search),
                   last_write_id = EXCLUDED.last_write_id
                 WHERE s.last_write_id IS DISTINCT FROM EXCLUDED.last_write_id
                 RETURNING s.event_count
               ), inserted AS (
                 INSERT INTO ${events} (session_id, seq, timestamp_ms, payload_type, payload, search_text)
                 SELECT $1::text, event_count, $6::bigint, $9::text, $10::text, $11::text FROM summary
                 RETURNING seq
               )
               SELECT ($12::uuid IS NULL OR EXISTS (SELECT 1 FROM lease)) AS leased,
                      (SELECT count(*) FROM inserted)::integer AS inserted`,
      },
      load: {
        name: name('load_session'),
        text: `SELECT timestamp_ms, payload FROM ${events} WHERE session_id = $1 ORDER BY seq`,
      },
      firstPage: {
        text: `SELECT ${SUMMARY_COLUMNS} FROM ${sessions}
                ORDER BY updated_at_ms DESC, sort_key DESC LIMIT $1`,
      },
      nextPage: {
        text: `SELECT ${SUMMARY_COLUMNS} FROM ${sessions}
                WHERE (updated_at_ms, sort_key) < ($2::bigint, $3::bytea)
                ORDER BY updated_at_ms DESC, sort_key DESC LIMIT $1`,
      },
      // $1: the id prefix pattern, $2: the substring pattern; both LIKE patterns escaped with '!'.
      find: {
        text: `SELECT ${SUMMARY_COLUMNS} FROM ${sessions} s
                WHERE s.id_search LIKE $1 ESCAPE '!'
                   OR s.title_search LIKE $2 ESCAPE '!'
                   OR EXISTS (SELECT 1 FROM ${events} e
                               WHERE e.session_id = s.session_id AND e.search_text LIKE $2 ESCAPE '!')
                ORDER BY s.updated_at_ms DESC, s.sort_key DESC`,
      },
      texts: {
        text: `SELECT payload FROM ${events} WHERE session_id = $1 AND search_text IS NOT NULL ORDER BY seq`,
      },
      ranked: {
        text: `SELECT ${SUMMARY_COLUMNS}, r.rank FROM (
                 SELECT e.session_id, max(ts_rank(e.search_vector, q.query)) AS rank
                   FROM ${events} e, websearch_to_tsquery('simple', $1) AS q(query)
                  WHERE e.search_vector @@ q.query
                  GROUP BY e.session_id
               ) r JOIN ${sessions} s USING (session_id)
               ORDER BY r.rank DESC, s.updated_at_ms DESC, s.sort_key DESC LIMIT $2`,
      },
      delete: { text: `DELETE FROM ${sessions} WHERE session_id = $1` },
    };
  }

  /** Appends one event and updates the session's summary in the same statement. */
  async saveEvent(sessionId: string, event: SessionEvent): Promise<void> {
    checkSessionId(sessionId);
    checkSessionEvent(event);
    const payload = event.payload;
    const json = stringifyTagged(payload);
    const leaseToken = this.#leases.fenceFor(sessionId);
    let title: string | null = null;
    let titleSearch: string | null = null;
    let searchText: string | null = null;
    if (payload.type === 'user_message' || payload.type === 'assistant_message') {
      const text = messageTextOf(payload.content);
      searchText = searchForm(text);
      if (payload.type === 'user_message') {
        const cut = sessionTitleOf(text);
        title = encodeText(cut);
        titleSearch = searchForm(cut);
      }
    }
    let writeId = this.#pendingWrites.get(event);
    if (writeId === undefined) {
      writeId = randomUUID();
      this.#pendingWrites.set(event, writeId);
    }
    const result = await this.#database.query<{ leased: boolean; inserted: number }>({
      statement: this.#sql.save,
      values: [
        encodeText(sessionId),
        sortKey(sessionId),
        searchForm(sessionId),
        title,
        titleSearch,
        event.timestamp.getTime(),
        payload.type === 'metadata' ? 0 : 1,
        writeId,
        payload.type,
        json,
        searchText,
        leaseToken ?? null,
      ],
      context: `saving an event of session '${sessionId}' failed`,
    });
    this.#pendingWrites.delete(event);
    if (result.rows[0]?.leased === false) throw this.#leases.markLost(sessionId);
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
      payload: parseTagged(row.payload) as SessionEvent['payload'],
    }));
  }

  /** Newest first; the cursor means "strictly after this position", so new sessions do not shift later pages. */
  async listSessions(cursor: string | undefined, limit: number): Promise<SessionPage> {
    checkPageLimit(limit);
    const after = cursor === undefined ? undefined : decodeSessionCursor(cursor);
    const context = 'listing sessions failed';
    const result =
      after === undefined
        ? await this.#database.query<SummaryRow>({
            statement: this.#sql.firstPage,
            values: [limit + 1],
            context,
          })
        : await this.#database.query<SummaryRow>({
            statement: this.#sql.nextPage,
            values: [limit + 1, after.updatedAtMs, sortKey(after.sessionId)],
            context,
          });
    const sessions = result.rows.slice(0, limit).map(summaryOf);
    const last = sessions.at(-1);
    return {
      sessions,
      nextCursor:
        result.rows.length > limit && last !== undefined
          ? encodeSessionCursor({ updatedAtMs: last.updatedAt.getTime(), sessionId: last.sessionId })
          : null,
    };
  }

  /**
   * Sessions whose id starts with the query, or whose title or user/assistant message text contains it,
   * ignoring case and surrounding white space, newest first. The query is matched literally (`%`, `_`,
   * quotes and backslashes are plain characters).
   */
  async findSession(query: string): Promise<SessionSummary[]> {
    if (typeof query !== 'string') throw invalidInput('query must be a string');
    const needle = query.trim().toLowerCase();
    if (needle === '') return [];
    const pattern = escapeLike(searchForm(needle));
    const result = await this.#database.query<SummaryRow>({
      statement: this.#sql.find,
      values: [`${pattern}%`, `%${pattern}%`],
      context: 'searching sessions failed',
    });
    const summaries = result.rows.map(summaryOf);
    // Without U+FFFD in the needle the search columns answer exactly; with it, check the original text.
    if (!searchForm(needle).includes(REPLACEMENT)) return summaries;
    const confirmed: SessionSummary[] = [];
    for (const summary of summaries) {
      if (await this.#matchesExactly(summary, needle)) confirmed.push(summary);
    }
    return confirmed;
  }

  /** Removes the session and its events; an unknown id is not an error. Its lease, if any, stays. */
  async deleteSession(sessionId: string): Promise<void> {
    checkSessionId(sessionId);
    await this.#database.query({
      statement: this.#sql.delete,
      values: [encodeText(sessionId)],
      context: `deleting session '${sessionId}' failed`,
    });
  }

  /**
   * Full-text search in PostgreSQL's sense, beyond the port: whole words ('simple' configuration, no
   * stemming) of user and assistant messages, in web-search syntax (`"a phrase"`, `or`, `-word`),
   * best `ts_rank` first. Only the first 64K characters of a message are indexed.
   */
  async searchRanked(query: string, limit = 20): Promise<RankedSessionSummary[]> {
    if (typeof query !== 'string') throw invalidInput('query must be a string');
    checkPageLimit(limit);
    const result = await this.#database.query<SummaryRow & { rank: number }>({
      statement: this.#sql.ranked,
      values: [searchForm(query), limit],
      context: 'searching sessions failed',
    });
    return result.rows.map((row) => ({ ...summaryOf(row), rank: row.rank }));
  }

  /**
   * Takes the session's lease for this process (see SessionLease): rejects with SESSION_BUSY when another
   * process (another storage instance) holds it and `waitMs` passes without it being released or expiring.
   */
  acquireLease(sessionId: string, options?: AcquireLeaseOptions): Promise<SessionLease> {
    return this.#leases.acquire(sessionId, options);
  }

  /** The port-shaped lease hook the core can call from newSession/resumeSession (see the README). */
  acquireSession(sessionId: string): Promise<SessionLease> {
    return this.#leases.acquire(sessionId);
  }

  /** Who holds the session's lease now, or null. */
  getLease(sessionId: string): Promise<LeaseHolder | null> {
    return this.#leases.holder(sessionId);
  }

  /** The name this storage holds leases under. */
  get leaseOwner(): string {
    return this.#leases.owner;
  }

  async #matchesExactly(summary: SessionSummary, needle: string): Promise<boolean> {
    if (summary.sessionId.toLowerCase().startsWith(needle)) return true;
    if (summary.title.toLowerCase().includes(needle)) return true;
    const result = await this.#database.query<{ payload: string }>({
      statement: this.#sql.texts,
      values: [encodeText(summary.sessionId)],
      context: 'searching sessions failed',
    });
    return result.rows.some((row) => {
      const payload = parseTagged(row.payload) as { content: Parameters<typeof messageTextOf>[0] };
      return messageTextOf(payload.content).toLowerCase().includes(needle);
    });
  }
}
