/**
 * The read side of the session storage that answers with summaries: the pages of `listSessions`, the literal
 * search of `findSession` and the full-text `searchRanked`, each one query (or a few, to confirm a needle with U+FFFD).
 */
import type { SessionPage, SessionSummary } from '@youyou/agent';
import {
  checkPageLimit,
  decodeSessionCursor,
  decodeStoredValue,
  encodeSessionCursor,
  messageTextOf,
} from '@youyou/agent/storage';
import { decodeText, encodeText, escapeLike, REPLACEMENT, searchForm, sortKey } from './codec.js';
import type { Database } from './database.js';
import { invalidInput } from './errors.js';
import type { SessionStatements } from './session-sql.js';

/** A session found by `searchRanked`, with its full-text rank. */
export interface RankedSessionSummary extends SessionSummary {
  /** The best `ts_rank` of the session's messages; larger is better. */
  rank: number;
}

/** Where the queries run: the database and the session statements built for its schema. */
interface QueryTarget {
  database: Database;
  sql: SessionStatements;
}

interface SummaryRow {
  session_id: string;
  title: string | null;
  created_at_ms: string;
  updated_at_ms: string;
  message_count: number;
}

function summaryOf(row: SummaryRow): SessionSummary {
  return {
    sessionId: decodeText(row.session_id),
    title: decodeText(row.title ?? ''),
    createdAt: new Date(Number(row.created_at_ms)),
    updatedAt: new Date(Number(row.updated_at_ms)),
    messageCount: row.message_count,
  };
}

/** One page of `listSessions`, newest first, after `cursor` (see `PostgresSessionStorage.listSessions`). */
export async function listSessionPage(
  target: QueryTarget & { cursor: string | undefined; limit: number },
): Promise<SessionPage> {
  const { database, sql, cursor, limit } = target;
  checkPageLimit(limit);
  const after = cursor === undefined ? undefined : decodeSessionCursor(cursor);
  const context = 'listing sessions failed';
  const result =
    after === undefined
      ? await database.query<SummaryRow>({
          statement: sql.firstPage,
          values: [limit + 1],
          context,
        })
      : await database.query<SummaryRow>({
          statement: sql.nextPage,
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

/** The sessions `findSession(query)` answers with (see `PostgresSessionStorage.findSession`). */
export async function findSessions(target: QueryTarget & { query: string }): Promise<SessionSummary[]> {
  const { database, sql, query } = target;
  if (typeof query !== 'string') throw invalidInput('query must be a string');
  const needle = query.trim().toLowerCase();
  if (needle === '') return [];
  const pattern = escapeLike(searchForm(needle));
  const result = await database.query<SummaryRow>({
    statement: sql.find,
    values: [`${pattern}%`, `%${pattern}%`],
    context: 'searching sessions failed',
  });
  const summaries = result.rows.map(summaryOf);
  // Without U+FFFD in the needle the search columns answer exactly; with it, check the original text.
  if (!searchForm(needle).includes(REPLACEMENT)) return summaries;
  const confirmed: SessionSummary[] = [];
  for (const summary of summaries) {
    if (await matchesExactly(target, summary, needle)) confirmed.push(summary);
  }
  return confirmed;
}

/** The sessions `searchRanked(query, limit)` answers with, best rank first. */
export async function searchRankedSessions(
  target: QueryTarget & { query: string; limit: number },
): Promise<RankedSessionSummary[]> {
  const { database, sql, query, limit } = target;
  if (typeof query !== 'string') throw invalidInput('query must be a string');
  checkPageLimit(limit);
  const result = await database.query<SummaryRow & { rank: number }>({
    statement: sql.ranked,
    values: [searchForm(query), limit],
    context: 'searching sessions failed',
  });
  return result.rows.map((row) => ({ ...summaryOf(row), rank: row.rank }));
}

/** True when the session's id starts with `needle`, or its title or a message's original text contains it. */
async function matchesExactly(
  target: QueryTarget,
  summary: SessionSummary,
  needle: string,
): Promise<boolean> {
  if (summary.sessionId.toLowerCase().startsWith(needle)) return true;
  if (summary.title.toLowerCase().includes(needle)) return true;
  const result = await target.database.query<{ payload: string }>({
    statement: target.sql.texts,
    values: [encodeText(summary.sessionId)],
    context: 'searching sessions failed',
  });
  return result.rows.some((row) => {
    const payload = decodeStoredValue(row.payload) as { content: Parameters<typeof messageTextOf>[0] };
    return messageTextOf(payload.content).toLowerCase().includes(needle);
  });
}
