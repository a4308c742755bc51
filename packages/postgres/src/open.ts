import type { AgentError } from '@youyou/agent';
import { Pool, type PoolConfig } from 'pg';
import { Database } from './database.js';
import { invalidConfig, storageError } from './errors.js';
import { EventFeed } from './event-feed.js';
import { LeaseManager, type LeaseOptions } from './lease.js';
import { PostgresMemoryStorage } from './memory-storage.js';
import { checkSchemaName, checkSchemaVersion, migratePostgresSchema } from './migrations.js';
import { SearchIndexer } from './search-index.js';
import { PostgresSessionStorage } from './session-storage.js';

/** What `openPostgresStorage` takes. Give a `connectionString` or a `pool`; with neither, the PG* variables are read. */
export interface PostgresStorageOptions {
  /** `postgres://user:password@host:5432/database`; a pool is made from it (and ended by `close()`). */
  connectionString?: string;
  /** A pool you own: `close()` does not end it. Give it an 'error' listener (see the README). */
  pool?: Pool;
  /** Settings of the pool made from `connectionString` or the PG* variables (size, timeouts, ssl). */
  poolConfig?: Omit<PoolConfig, 'connectionString'>;
  /** The schema of the tables; created when missing. Default 'public'. */
  schema?: string;
  /** Apply missing migrations on open (default true); false only checks that the schema is up to date. */
  migrate?: boolean;
  /** Create trigram indexes when the pg_trgm extension is installed (default true). */
  trigramIndexes?: boolean;
  /**
   * Use named prepared statements for the hot paths (default true). Set false behind a pooler in
   * transaction mode that does not track them (PgBouncer before 1.21).
   */
  preparedStatements?: boolean;
  /**
   * Announce every saved event with NOTIFY (default false; one more round trip per event), so that
   * `watchEvents` in other processes wakes at once: turn it on for servers that tail sessions across
   * processes. Readers without it still see every event by reading again.
   */
  eventNotifications?: boolean;
  /** Session lease settings. */
  lease?: LeaseOptions;
  /**
   * Failures outside any call: a lease renewal that failed, a lease lost, an idle pooled connection that
   * dropped, a background search-index pass that failed other than by a connection failure (searches
   * stay exact; the next write tries again). Default: console.warn.
   */
  onBackgroundError?: (error: AgentError) => void;
}

/** The storages on one PostgreSQL schema, and how to close them. */
export interface PostgresStorage {
  sessions: PostgresSessionStorage;
  memories: PostgresMemoryStorage;
  /** The pool the storages use. */
  pool: Pool;
  /** The schema the tables live in. */
  schema: string;
  /**
   * Waits for a search-index pass in progress, releases this process's leases, then ends the pool if
   * `openPostgresStorage` made it. Idempotent.
   */
  close(): Promise<void>;
}

/** Connection settings that make a dead server show up as an error instead of a hang. */
const DEFAULT_POOL_CONFIG: PoolConfig = {
  max: 10,
  connectionTimeoutMillis: 10_000,
  idleTimeoutMillis: 30_000,
};

function makePool(options: PostgresStorageOptions): Pool {
  const config: PoolConfig = { ...DEFAULT_POOL_CONFIG, ...options.poolConfig };
  if (options.connectionString !== undefined) config.connectionString = options.connectionString;
  return new Pool(config);
}

/**
 * Opens the PostgreSQL session and memory storages: connects, brings the schema up to date (see
 * `migratePostgresSchema`; safe when many servers start at once) and returns the storages. Rejects with
 * INVALID_CONFIG for bad options and STORAGE_ERROR when PostgreSQL cannot be reached or migrated.
 */
export async function openPostgresStorage(options: PostgresStorageOptions = {}): Promise<PostgresStorage> {
  if (options.pool !== undefined && options.connectionString !== undefined) {
    throw invalidConfig('give either `pool` or `connectionString`, not both');
  }
  if (options.connectionString !== undefined && typeof options.connectionString !== 'string') {
    throw invalidConfig('connectionString must be a string');
  }
  const schema = checkSchemaName(options.schema ?? 'public');
  const onBackgroundError = options.onBackgroundError ?? ((error: AgentError) => console.warn(error.message));
  const ownsPool = options.pool === undefined;
  const pool = options.pool ?? makePool(options);
  const database = new Database({ pool, schema, preparedStatements: options.preparedStatements !== false });
  // Only for a pool made here: an idle connection that drops must not crash the process.
  const onIdleError = (error: Error) =>
    onBackgroundError(storageError(error, 'an idle PostgreSQL connection of the pool failed'));
  if (ownsPool) pool.on('error', onIdleError);
  let leases: LeaseManager;
  try {
    leases = new LeaseManager({ database, lease: options.lease, onBackgroundError });
    if (options.migrate === false) {
      await checkSchemaVersion({ pool, schema });
    } else {
      await migratePostgresSchema({
        pool,
        schema,
        ...(options.trigramIndexes === undefined ? {} : { trigramIndexes: options.trigramIndexes }),
      });
    }
  } catch (error) {
    if (ownsPool) await pool.end().catch(() => undefined);
    throw error;
  }
  const indexer = new SearchIndexer({ database, onBackgroundError });
  const feed = new EventFeed({ database, notify: options.eventNotifications === true });
  let closing: Promise<void> | undefined;
  const close = async () => {
    await indexer.close();
    await feed.close();
    await leases.releaseAll();
    database.markClosed();
    if (ownsPool) await pool.end();
  };
  return {
    sessions: new PostgresSessionStorage({ database, leases, indexer, feed }),
    memories: new PostgresMemoryStorage({ database }),
    pool,
    schema,
    close() {
      closing ??= close();
      return closing;
    },
  };
}
