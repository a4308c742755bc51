import { AgentError } from '@youyou/agent';
import type Database from 'better-sqlite3';

/** One step of the schema: it brings a database from version `index` to `index + 1`. */
export type Migration = (database: Database.Database) => void;

/**
 * Version 1.
 * - `sessions`: what a session keeps for good: its row key, id, title (set by the first user message) and
 *   creation time. Written once or twice per session.
 * - `session_activity`: what every event changes — updatedAt, the message count, `event_count` (the
 *   sequence number of the last event) and `indexed_seq` (up to which event the message text is in the
 *   full-text index). It is clustered in listing order (WITHOUT ROWID, keyed by updated_at and session id),
 *   so an event rewrites one row of one B-tree, and `listSessions` reads the key in order. Invariant:
 *   `updated_at` and `event_count` are the timestamp and sequence number of the session's last event.
 * - `events`: the id packs the session's row key and the event's sequence number (see event-keys.ts), so a
 *   session's events sit together in the table's own B-tree, in order, with no second index to update on
 *   every write; loading or deleting a session reads or removes one range of ids. The payload is JSON
 *   (`tagged` = 1 when tags must be revived, see encodeStoredValue in @youyou/agent/storage);
 *   `searchable` = 1 marks a user or assistant message with text.
 * - `search_texts` + `search_texts_fts`: the lower-cased text of those messages and a contentless FTS5
 *   index of it (trigram tokenizer, case-sensitive since the text is lower-cased already), the prefilter of
 *   substring search. It is filled off the write path, in batches (search-index.ts).
 * - `memories` + `memories_fts`: memories are small and rare, so each is indexed as it is saved.
 */
const createSchema: Migration = (database) => {
  database.exec(`
    CREATE TABLE sessions (
      id INTEGER PRIMARY KEY,
      session_id TEXT NOT NULL UNIQUE,
      id_lower TEXT NOT NULL,
      title TEXT,
      title_lower TEXT,
      created_at INTEGER NOT NULL
    );
    CREATE TABLE session_activity (
      updated_at INTEGER NOT NULL,
      session_id TEXT NOT NULL,
      session INTEGER NOT NULL,
      message_count INTEGER NOT NULL,
      event_count INTEGER NOT NULL,
      indexed_seq INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (updated_at, session_id)
    ) WITHOUT ROWID;
    CREATE VIEW session_summaries AS
      SELECT a.session_id, s.title, s.created_at, a.updated_at, a.message_count,
        s.id, s.id_lower, s.title_lower, a.event_count, a.indexed_seq
      FROM session_activity a JOIN sessions s ON s.id = a.session;

    CREATE TABLE events (
      id INTEGER PRIMARY KEY,
      timestamp INTEGER NOT NULL,
      tagged INTEGER NOT NULL,
      searchable INTEGER NOT NULL,
      payload TEXT NOT NULL
    );

    CREATE TABLE search_texts (
      id INTEGER PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
      text TEXT NOT NULL
    );
    CREATE VIRTUAL TABLE search_texts_fts USING fts5 (
      text, content = '', contentless_delete = 1, tokenize = 'trigram case_sensitive 1'
    );
    CREATE TRIGGER search_texts_unindex AFTER DELETE ON search_texts BEGIN
      DELETE FROM search_texts_fts WHERE rowid = old.id;
    END;

    CREATE TABLE memories (
      id INTEGER PRIMARY KEY,
      memory_id TEXT NOT NULL UNIQUE,
      namespace TEXT NOT NULL,
      content TEXT NOT NULL,
      content_lower TEXT NOT NULL,
      category TEXT,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      source_session_id TEXT
    );
    CREATE INDEX memories_recent_first ON memories (namespace, updated_at DESC, memory_id DESC);
    CREATE VIRTUAL TABLE memories_fts USING fts5 (
      content, content = '', contentless_delete = 1, tokenize = 'trigram case_sensitive 1'
    );
    CREATE TRIGGER memories_unindex AFTER DELETE ON memories BEGIN
      DELETE FROM memories_fts WHERE rowid = old.id;
    END;
  `);
};

/**
 * Version 2: `session_claims`, one row per claimed session (`acquireSession`): who holds it (the storage
 * instance's owner name, host and pid, so a claim of a process that died on this host is taken at once),
 * the token that fences its writes, and when it expires (ms since the epoch, this host's clock).
 */
const addSessionClaims: Migration = (database) => {
  database.exec(`
    CREATE TABLE session_claims (
      session_id TEXT PRIMARY KEY,
      owner TEXT NOT NULL,
      host TEXT NOT NULL,
      pid INTEGER NOT NULL,
      token TEXT NOT NULL,
      acquired_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL
    ) WITHOUT ROWID;
  `);
};

/**
 * Every schema version, in order: `PRAGMA user_version` = how many of them a database has run. A new
 * version is added at the end and never changes an earlier entry; each runs inside the migrating
 * transaction, so a failed upgrade leaves the file as it was.
 */
export const MIGRATIONS: readonly Migration[] = [createSchema, addSessionClaims];

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

function userVersion(database: Database.Database): number {
  return database.pragma('user_version', { simple: true }) as number;
}

function checkNotNewer(options: { version: number; known: number; path: string }): void {
  if (options.version > options.known) {
    throw new AgentError({
      code: 'STORAGE_ERROR',
      message: `the database '${options.path}' has schema version ${options.version}, newer than version ${options.known} that this @youyou/sqlite knows: upgrade @youyou/sqlite to open it (it was written by a newer release)`,
    });
  }
}

/**
 * Brings the database up to the last of `migrations` in one IMMEDIATE transaction. The version is read
 * again once the write lock is held, so two processes opening a new file at once migrate it once.
 * A file of a newer version is refused with STORAGE_ERROR; a read-only connection that needs an
 * upgrade is refused too (it cannot write the new schema).
 */
export function runMigrations(options: {
  database: Database.Database;
  migrations: readonly Migration[];
  path: string;
}): void {
  const { database, migrations, path } = options;
  const known = migrations.length;
  const before = userVersion(database);
  checkNotNewer({ version: before, known, path });
  if (before === known) return;
  if (database.readonly) {
    throw new AgentError({
      code: 'STORAGE_ERROR',
      message: `the database '${path}' has schema version ${before} and needs version ${known}: open it once without \`readonly\` so that it can be upgraded`,
    });
  }
  database.exec('BEGIN IMMEDIATE');
  try {
    const current = userVersion(database);
    checkNotNewer({ version: current, known, path });
    for (let version = current; version < known; version += 1) {
      (migrations[version] as Migration)(database);
      database.pragma(`user_version = ${version + 1}`);
    }
    database.exec('COMMIT');
  } catch (error) {
    if (database.inTransaction) database.exec('ROLLBACK');
    throw error;
  }
}
