import type { SessionEvent } from '@youyou/agent';
import { encodeText, searchForm, sortKey } from './codec.js';
import type { Database } from './database.js';
import type { SessionStatements } from './session-sql.js';

/** An event as the save statements take it (see PostgresSessionStorage). */
export interface EventRow {
  /** The session id, encoded. */
  id: string;
  timestampMs: number;
  /** 1 for a message, 0 for metadata (the summary's message count). */
  messages: 0 | 1;
  type: SessionEvent['payload']['type'];
  json: string;
  /** The message text in search form; null for other events. */
  searchText: string | null;
  /** The title a user message gives a session without one, and its search form. */
  title: string | null;
  titleSearch: string | null;
  /** This storage's lease token for the session, if it holds the lease. */
  leaseToken: string | undefined;
}

/** Where `writeBatch` writes: the session, and whether this storage has written it (the short statement first). */
export interface BatchTarget {
  database: Database;
  sql: SessionStatements;
  sessionId: string;
  written: boolean;
}

/**
 * Writes the rows with `appendBatch` for a session this storage has written, else or when that changed
 * nothing with `saveBatch`: 'all', 'none' (an earlier attempt's write id found) or 'lost' (lease taken).
 */
export async function writeBatch(
  target: BatchTarget,
  rows: EventRow[],
  writeIds: string[],
): Promise<'all' | 'none' | 'lost'> {
  const { database, sql, sessionId } = target;
  if (rows.length === 0) return 'all';
  const firstRow = rows[0] as EventRow;
  const lastRow = rows.at(-1) as EventRow;
  const titled = rows.find((row) => row.title !== null);
  const context = `saving events of session '${sessionId}' failed`;
  // The batch's columns, as both statements take them.
  const messages = rows.reduce((count, row) => count + row.messages, 0);
  const types = rows.map((row) => row.type);
  const jsons = rows.map((row) => row.json);
  const searchTexts = rows.map((row) => row.searchText);
  const times = rows.map((row) => row.timestampMs);
  if (target.written) {
    const appended = await database.query({
      statement: sql.appendBatch,
      values: [
        firstRow.id,
        lastRow.timestampMs,
        messages,
        writeIds,
        types,
        jsons,
        searchTexts,
        times,
        rows.length,
        firstRow.leaseToken ?? null,
        titled?.title ?? null,
        titled?.titleSearch ?? null,
      ],
      context,
    });
    if (appended.rowCount === rows.length) return 'all';
  }
  const result = await database.query<{ leased: boolean; inserted: number }>({
    statement: sql.saveBatch,
    values: [
      firstRow.id,
      sortKey(sessionId),
      searchForm(sessionId),
      titled?.title ?? null,
      titled?.titleSearch ?? null,
      firstRow.timestampMs,
      lastRow.timestampMs,
      messages,
      writeIds,
      types,
      jsons,
      searchTexts,
      times,
      firstRow.leaseToken ?? null,
      rows.length,
    ],
    context,
  });
  const outcome = result.rows[0];
  if (outcome?.leased === false) return 'lost';
  return outcome?.inserted === rows.length ? 'all' : 'none';
}

/** The write id the session's activity row holds: that of the last save that committed. */
export async function lastWriteId(
  database: Database,
  sql: SessionStatements,
  sessionId: string,
): Promise<string | null> {
  const result = await database.query<{ last_write_id: string | null }>({
    statement: sql.lastWrite,
    values: [encodeText(sessionId)],
    context: `saving events of session '${sessionId}' failed`,
  });
  return result.rows[0]?.last_write_id ?? null;
}
