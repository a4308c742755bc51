/**
 * W5 for the runtimes that have no SQLite storage of their own (the bare loop and the peers): a conversation
 * log in a SQLite file, written one message per INSERT as each runtime's own persistence hook hands it over.
 * Same driver (better-sqlite3, the version `@youyou/sqlite` depends on, installed by the root `npm ci`) and
 * the same settings as `@youyou/sqlite` (WAL, synchronous=NORMAL, a file in a temporary directory), and
 * the simplest schema that keeps a conversation: one row per message, its JSON in a text column. It indexes
 * nothing for search and keeps no session list, so it does less per message than `@youyou/sqlite`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';

/** An open log: `append(sessionId, message)`, `load(sessionId)`, `remove(sessionId)`, `close()`. */
export function openSqliteLog() {
  const directory = mkdtempSync(join(tmpdir(), 'youyou-bench-log-'));
  const database = new Database(join(directory, 'sessions.db'));
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.exec(`CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    payload TEXT NOT NULL
  );
  CREATE INDEX messages_by_session ON messages (session_id, id);`);
  const insert = database.prepare('INSERT INTO messages (session_id, created_at, payload) VALUES (?, ?, ?)');
  const select = database.prepare('SELECT payload FROM messages WHERE session_id = ? ORDER BY id');
  const selectLast = database.prepare(
    'SELECT id, payload FROM messages WHERE session_id = ? ORDER BY id DESC LIMIT 1',
  );
  const deleteOne = database.prepare('DELETE FROM messages WHERE id = ?');
  const deleteAll = database.prepare('DELETE FROM messages WHERE session_id = ?');
  return {
    append(sessionId, message) {
      insert.run(sessionId, Date.now(), JSON.stringify(message));
    },
    load(sessionId) {
      return select.all(sessionId).map((row) => JSON.parse(row.payload));
    },
    /** Removes and returns the last message of a session, or undefined. */
    pop(sessionId) {
      const row = selectLast.get(sessionId);
      if (row === undefined) return undefined;
      deleteOne.run(row.id);
      return JSON.parse(row.payload);
    },
    remove(sessionId) {
      deleteAll.run(sessionId);
    },
    close() {
      database.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
