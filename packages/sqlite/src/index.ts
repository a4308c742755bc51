/**
 * @youyou/sqlite — session and memory storage for YouYou Agent in one SQLite file (better-sqlite3):
 * WAL, a versioned schema with forward migrations, one transaction per write, FTS5 trigram search.
 */
import type { AgentError } from '@youyou/agent';
import type Database from 'better-sqlite3';
import { ClaimManager } from './claims.js';
import { SqliteConnection, type SqliteStorageOptions } from './connection.js';
import { SqliteMemoryStorage } from './memory-storage.js';
import { SqliteSessionStorage } from './session-storage.js';

export type { SqliteClaimOptions, SqliteSessionClaim } from './claims.js';
export type { SqliteStorageOptions } from './connection.js';
export type { SqliteMemoryStorage } from './memory-storage.js';
export { SCHEMA_VERSION } from './migrations.js';
export type { SqliteSessionStorage } from './session-storage.js';

/** The storages of one open database file, and how to close it. */
export interface SqliteStorage extends AsyncDisposable {
  /** Register with `AgentBuilder.registerSessionStorage`. */
  readonly sessions: SqliteSessionStorage;
  /** Register with `AgentBuilder.registerMemoryStorage`. */
  readonly memories: SqliteMemoryStorage;
  /**
   * The better-sqlite3 connection, for backups (`database.backup(file)`) and diagnostics. Writing to the
   * tables behind the storages' back breaks their summaries and search index.
   */
  readonly database: Database.Database;
  /** Lets the calls already made finish, then closes the file; later calls reject with STORAGE_ERROR. */
  close(): Promise<void>;
}

/**
 * Opens (or creates) the database at `path` — or an in-memory one for `':memory:'` — and brings its
 * schema up to date. Rejects with INVALID_CONFIG for bad options and STORAGE_ERROR when the file cannot be
 * opened, is not an SQLite database, or has a schema newer than this package knows.
 */
export async function openSqliteStorage(
  path: string,
  options: SqliteStorageOptions = {},
): Promise<SqliteStorage> {
  const connection = await SqliteConnection.open({ path, options });
  let claims: ClaimManager;
  try {
    claims = new ClaimManager({
      connection,
      claims: options.claims,
      onBackgroundError: options.onBackgroundError ?? ((error: AgentError) => console.warn(error.message)),
    });
  } catch (error) {
    await connection.close();
    throw error;
  }
  const close = (): Promise<void> => connection.close();
  return {
    sessions: new SqliteSessionStorage({ connection, claims }),
    memories: new SqliteMemoryStorage(connection),
    database: connection.database,
    close,
    [Symbol.asyncDispose]: close,
  };
}
