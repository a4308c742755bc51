import { SQL_SEQUENCE_BITS } from './event-keys.js';
import { MESSAGE_TEXT_FUNCTION } from './text.js';

const BITS = SQL_SEQUENCE_BITS;
const SUMMARY_COLUMNS = 'session_id, title, created_at, updated_at, message_count';
const NEWEST_FIRST = 'ORDER BY updated_at DESC, session_id DESC';

/**
 * True for a session with messages saved after its last indexing pass whose text contains @needle: they
 * are read from its id range and checked one by one (`youyou_message_text` gives the text of a payload).
 */
const UNINDEXED_MATCH = `(event_count > indexed_seq AND EXISTS (SELECT 1 FROM events e
    WHERE e.id > (session_summaries.id << ${BITS}) + indexed_seq
      AND e.id <= (session_summaries.id << ${BITS}) + event_count
      AND e.searchable = 1 AND instr(${MESSAGE_TEXT_FUNCTION}(e.payload, e.tagged), @needle) > 0))`;

/** Every statement of the session storage (see migrations.ts for the tables). */
export const SESSION_SQL = {
  sessionKey: 'SELECT id, title IS NOT NULL FROM sessions WHERE session_id = ?',
  lastEvent: 'SELECT id, timestamp FROM events WHERE id BETWEEN ? AND ? ORDER BY id DESC LIMIT 1',
  createSession: `INSERT INTO sessions (session_id, id_lower, title, title_lower, created_at)
    VALUES (?, ?, ?, ?, ?) RETURNING id`,
  createActivity: `INSERT INTO session_activity (updated_at, session_id, session, message_count, event_count)
    VALUES (?, ?, ?, ?, 1)`,
  // Moves the session's activity row to its new place in listing order; the old updated_at, event count
  // and row key in the WHERE make a stale cache (another connection wrote since) match nothing.
  moveActivity: `UPDATE session_activity
    SET updated_at = ?, message_count = message_count + ?, event_count = event_count + ?
    WHERE updated_at = ? AND session_id = ? AND event_count = ? AND session = ?`,
  setTitle: 'UPDATE sessions SET title = ?, title_lower = ? WHERE id = ? AND title IS NULL',
  insertEvent: 'INSERT INTO events (id, timestamp, tagged, searchable, payload) VALUES (?, ?, ?, ?, ?)',
  // A session's log is read as two single-column lists (see loadSession); a tagged row's time comes as text.
  eventTimes: `SELECT CASE tagged WHEN 1 THEN timestamp || 't' ELSE timestamp END
    FROM events WHERE id BETWEEN ? AND ? ORDER BY id`,
  eventPayloads: 'SELECT payload FROM events WHERE id BETWEEN ? AND ? ORDER BY id',
  // The last metadata event of a session with a given key (JSON functions run in SQLite: no payload parsed here).
  lastMetadata: `SELECT payload, tagged FROM events
    WHERE id BETWEEN ? AND ? AND searchable = 0
      AND json_extract(payload, '$.type') = 'metadata' AND json_extract(payload, '$.key') = ?
    ORDER BY id DESC LIMIT 1`,
  deleteActivity: 'DELETE FROM session_activity WHERE updated_at = ? AND session_id = ?',
  deleteActivityBySession: 'DELETE FROM session_activity WHERE session = ?',
  deleteEvents: 'DELETE FROM events WHERE id BETWEEN ? AND ?',
  deleteSession: 'DELETE FROM sessions WHERE id = ?',
  firstPage: `SELECT ${SUMMARY_COLUMNS} FROM session_summaries ${NEWEST_FIRST} LIMIT ?`,
  nextPage: `SELECT ${SUMMARY_COLUMNS} FROM session_summaries
    WHERE (updated_at, session_id) < (?, ?) ${NEWEST_FIRST} LIMIT ?`,
  // The id, the title, or a message: the FTS5 trigram index finds candidates among the indexed messages,
  // instr() checks them, and the messages not indexed yet are checked one by one.
  findIndexed: `SELECT ${SUMMARY_COLUMNS} FROM session_summaries
    WHERE instr(id_lower, @needle) = 1 OR instr(title_lower, @needle) > 0
      OR id IN (SELECT t.id >> ${BITS} FROM search_texts t
        WHERE t.id IN (SELECT rowid FROM search_texts_fts WHERE search_texts_fts MATCH @phrase)
          AND instr(t.text, @needle) > 0)
      OR ${UNINDEXED_MATCH}
    ${NEWEST_FIRST}`,
  // Needles shorter than a trigram cannot use the index: every message text is checked.
  findScan: `SELECT ${SUMMARY_COLUMNS} FROM session_summaries
    WHERE instr(id_lower, @needle) = 1 OR instr(title_lower, @needle) > 0
      OR id IN (SELECT t.id >> ${BITS} FROM search_texts t WHERE instr(t.text, @needle) > 0)
      OR ${UNINDEXED_MATCH}
    ${NEWEST_FIRST}`,
} as const;
