import { AgentError } from '@youyou/agent';
import type { Pool, PoolClient } from 'pg';
import { quoteIdentifier, SCHEMA_NAME_PATTERN, type Tables, tablesOf } from './database.js';
import { invalidConfig, storageError } from './errors.js';

/** One forward migration: the statements that take the schema from `version - 1` to `version`. */
interface Migration {
  version: number;
  description: string;
  statements: (tables: Tables) => string[];
}

/**
 * How much of a message the full-text vector covers: a tsvector holds at most 1 MB, so a huge message
 * must not make its insert fail. The substring search of the storage ports reads the whole text.
 */
export const VECTOR_INPUT_CHARS = 65_536;

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'sessions, session events, memories and session leases',
    statements: (t) => [
      `CREATE TABLE ${t.sessions} (
        session_id text PRIMARY KEY,
        sort_key bytea NOT NULL,
        id_search text NOT NULL,
        title text,
        title_search text,
        created_at_ms bigint NOT NULL,
        updated_at_ms bigint NOT NULL,
        message_count integer NOT NULL,
        event_count integer NOT NULL,
        last_write_id uuid
      )`,
      `CREATE INDEX youyou_sessions_recent ON ${t.sessions} (updated_at_ms, sort_key)`,
      `CREATE INDEX youyou_sessions_id_search ON ${t.sessions} (id_search text_pattern_ops)`,
      `CREATE TABLE ${t.events} (
        session_id text NOT NULL REFERENCES ${t.sessions} (session_id) ON DELETE CASCADE,
        seq integer NOT NULL,
        timestamp_ms bigint NOT NULL,
        payload_type text NOT NULL,
        payload text NOT NULL,
        search_text text,
        search_vector tsvector GENERATED ALWAYS AS
          (to_tsvector('simple'::regconfig, left(coalesce(search_text, ''), ${VECTOR_INPUT_CHARS}))) STORED,
        PRIMARY KEY (session_id, seq)
      )`,
      `CREATE INDEX youyou_session_events_vector ON ${t.events} USING gin (search_vector)`,
      `CREATE TABLE ${t.memories} (
        id text PRIMARY KEY,
        sort_key bytea NOT NULL,
        namespace text NOT NULL,
        content text NOT NULL,
        content_search text NOT NULL,
        category text,
        source_session_id text,
        created_at_ms bigint NOT NULL,
        updated_at_ms bigint NOT NULL,
        search_vector tsvector GENERATED ALWAYS AS
          (to_tsvector('simple'::regconfig, left(content_search, ${VECTOR_INPUT_CHARS}))) STORED
      )`,
      `CREATE INDEX youyou_memories_recent ON ${t.memories} (namespace, updated_at_ms, sort_key)`,
      `CREATE INDEX youyou_memories_vector ON ${t.memories} USING gin (search_vector)`,
      `CREATE TABLE ${t.leases} (
        session_id text PRIMARY KEY,
        owner text NOT NULL,
        token uuid NOT NULL,
        acquired_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL
      )`,
    ],
  },
  {
    version: 2,
    description: 'session activity in its own table; message text indexed off the write path',
    // Measured per saveEvent: the summary row's update rewrote every index of youyou_sessions (its
    // trigram title index too, updated_at_ms being indexed), and each message paid its tsvector, GIN and
    // trigram entries and a foreign-key check. Now a save updates a narrow activity row (which also
    // carries the lease token its writes are fenced by) and inserts a bare event; a background pass
    // copies message text into youyou_session_search, where the search indexes live. Existing messages
    // are copied here, so an upgraded database searches from its indexes at once.
    statements: (t) => [
      `CREATE TABLE ${t.activity} (
        session_id text PRIMARY KEY REFERENCES ${t.sessions} (session_id) ON DELETE CASCADE,
        sort_key bytea NOT NULL,
        updated_at_ms bigint NOT NULL,
        message_count integer NOT NULL,
        event_count integer NOT NULL,
        indexed_seq integer NOT NULL DEFAULT 0,
        last_write_id uuid,
        lease_token uuid
      )`,
      `INSERT INTO ${t.activity} (session_id, sort_key, updated_at_ms, message_count, event_count,
         indexed_seq, last_write_id, lease_token)
       SELECT s.session_id, s.sort_key, s.updated_at_ms, s.message_count, s.event_count, s.event_count,
              s.last_write_id, l.token
         FROM ${t.sessions} s LEFT JOIN ${t.leases} l USING (session_id)`,
      `CREATE INDEX youyou_session_activity_recent ON ${t.activity} (updated_at_ms, sort_key)`,
      // Small: only sessions with messages the background pass has not copied yet have an entry.
      `CREATE INDEX youyou_session_activity_unindexed ON ${t.activity} (session_id)
         WHERE event_count > indexed_seq`,
      `CREATE TABLE ${t.search} (
        session_id text NOT NULL,
        seq integer NOT NULL,
        search_text text NOT NULL,
        search_vector tsvector GENERATED ALWAYS AS
          (to_tsvector('simple'::regconfig, left(search_text, ${VECTOR_INPUT_CHARS}))) STORED,
        PRIMARY KEY (session_id, seq)
      )`,
      `INSERT INTO ${t.search} (session_id, seq, search_text)
       SELECT session_id, seq, search_text FROM ${t.events} WHERE search_text IS NOT NULL`,
      `CREATE INDEX youyou_session_search_vector ON ${t.search} USING gin (search_vector)`,
      // deleteSession removes a session's events itself, in a transaction (see session-storage.ts).
      `ALTER TABLE ${t.events} DROP CONSTRAINT youyou_session_events_session_id_fkey`,
      `DROP INDEX IF EXISTS ${t.schema}.youyou_session_events_search_trgm`,
      `ALTER TABLE ${t.events} DROP COLUMN search_vector`,
      `DROP INDEX ${t.schema}.youyou_sessions_recent`,
      `ALTER TABLE ${t.sessions} DROP COLUMN sort_key, DROP COLUMN updated_at_ms,
         DROP COLUMN message_count, DROP COLUMN event_count, DROP COLUMN last_write_id`,
    ],
  },
];

/** The schema version this package writes and reads. */
export const SCHEMA_VERSION = MIGRATIONS.at(-1)?.version ?? 0;

/** The first argument of the migration's advisory lock: "YouY", so that other users' locks do not collide. */
const LOCK_CLASS = 0x594f5559;

/** What `migrate` did. */
export interface MigrationResult {
  /** The schema version after the call. */
  version: number;
  /** The versions this call applied (empty when another process, or an earlier start, did). */
  applied: number[];
  /** True when the trigram indexes of pg_trgm exist after the call. */
  trigramIndexes: boolean;
}

/** What `migratePostgresSchema` takes. */
export interface MigrateOptions {
  pool: Pool;
  /** Default 'public'. */
  schema?: string;
  /** Create trigram indexes for substring search when the pg_trgm extension is installed; default true. */
  trigramIndexes?: boolean;
}

/** Checks a schema name; throws INVALID_CONFIG for one that is not a plain identifier. */
export function checkSchemaName(schema: unknown): string {
  if (typeof schema !== 'string' || !SCHEMA_NAME_PATTERN.test(schema)) {
    throw invalidConfig(
      `schema must be a plain identifier (letters, digits, _; at most 63 characters), got ${JSON.stringify(schema)}`,
    );
  }
  return schema;
}

/**
 * Brings a schema to SCHEMA_VERSION: creates it when missing, then applies the missing migrations in
 * one transaction. A transaction-scoped advisory lock keyed on the schema makes app servers that start
 * at the same time wait for each other instead of racing; the later ones find the work done. Rejects
 * with STORAGE_ERROR when the schema is newer than this package (roll the package forward).
 */
export function migratePostgresSchema(options: MigrateOptions): Promise<MigrationResult> {
  return migrateSchemaTo(options, SCHEMA_VERSION);
}

/**
 * `migratePostgresSchema` that stops at `target` (no trigram indexes below SCHEMA_VERSION): for the tests
 * that build an older schema and upgrade it. Not exported by the package.
 */
export async function migrateSchemaTo(options: MigrateOptions, target: number): Promise<MigrationResult> {
  const schema = checkSchemaName(options.schema ?? 'public');
  const tables = tablesOf(schema);
  let client: PoolClient;
  try {
    client = await options.pool.connect();
  } catch (error) {
    throw storageError(error, `connecting to PostgreSQL to migrate schema '${schema}' failed`);
  }
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1::integer, hashtext($2))', [LOCK_CLASS, schema]);
    const existing = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    // Creating only a missing schema needs no CREATE right on the database when the schema exists.
    if (existing.rowCount === 0) await client.query(`CREATE SCHEMA ${quoteIdentifier(schema)}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${tables.version} (
        version integer PRIMARY KEY,
        description text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`,
    );
    const current = await currentVersion(client, tables);
    if (current > SCHEMA_VERSION) throw newerSchema(schema, current);
    const applied: number[] = [];
    for (const migration of MIGRATIONS) {
      if (migration.version <= current || migration.version > target) continue;
      for (const statement of migration.statements(tables)) await client.query(statement);
      await client.query(`INSERT INTO ${tables.version} (version, description) VALUES ($1, $2)`, [
        migration.version,
        migration.description,
      ]);
      applied.push(migration.version);
    }
    const trigramIndexes =
      options.trigramIndexes === false || target < SCHEMA_VERSION
        ? false
        : await ensureTrigramIndexes(client, tables);
    await client.query('COMMIT');
    return { version: Math.max(current, target), applied, trigramIndexes };
  } catch (error) {
    try {
      await client.query('ROLLBACK');
    } catch (rollbackError) {
      broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
    }
    throw storageError(error, `migrating PostgreSQL schema '${schema}' failed`);
  } finally {
    client.release(broken);
  }
}

/** Rejects with STORAGE_ERROR unless the schema is at SCHEMA_VERSION (for `migrate: false`). */
export async function checkSchemaVersion(options: { pool: Pool; schema: string }): Promise<void> {
  const tables = tablesOf(options.schema);
  let version: number;
  try {
    const found = await options.pool.query<{ name: string | null }>('SELECT to_regclass($1) AS name', [
      tables.version,
    ]);
    version = found.rows[0]?.name == null ? 0 : await currentVersion(options.pool, tables);
  } catch (error) {
    throw storageError(error, `reading the version of PostgreSQL schema '${options.schema}' failed`);
  }
  if (version > SCHEMA_VERSION) throw newerSchema(options.schema, version);
  if (version < SCHEMA_VERSION) {
    throw new AgentError({
      code: 'STORAGE_ERROR',
      message: `PostgreSQL schema '${options.schema}' is at version ${version}, this package needs ${SCHEMA_VERSION}: run migratePostgresSchema (or open the storage with migrate: true)`,
      sourceComponent: 'storage',
    });
  }
}

async function currentVersion(client: Pick<PoolClient, 'query'>, tables: Tables): Promise<number> {
  const result = await client.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${tables.version}`,
  );
  return result.rows[0]?.version ?? 0;
}

function newerSchema(schema: string, version: number): AgentError {
  return new AgentError({
    code: 'STORAGE_ERROR',
    message: `PostgreSQL schema '${schema}' is at version ${version}, newer than this @youyou/postgres understands (${SCHEMA_VERSION}): upgrade the package on this server`,
    sourceComponent: 'storage',
  });
}

/**
 * Creates the trigram indexes that let PostgreSQL answer the substring searches from an index, when
 * the pg_trgm extension is installed in the database; without it the searches scan. Never installs the
 * extension itself (that is the database owner's choice). Returns whether the indexes exist.
 */
async function ensureTrigramIndexes(client: PoolClient, tables: Tables): Promise<boolean> {
  const extension = await client.query<{ schema: string }>(
    `SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
      WHERE e.extname = 'pg_trgm'`,
  );
  const extensionSchema = extension.rows[0]?.schema;
  if (extensionSchema === undefined) return false;
  const operatorClass = `${quoteIdentifier(extensionSchema)}.gin_trgm_ops`;
  const indexes: [string, string, string][] = [
    ['youyou_session_search_trgm', tables.search, 'search_text'],
    ['youyou_sessions_title_trgm', tables.sessions, 'title_search'],
    ['youyou_memories_search_trgm', tables.memories, 'content_search'],
  ];
  for (const [name, table, column] of indexes) {
    await client.query(
      `CREATE INDEX IF NOT EXISTS ${name} ON ${table} USING gin (${column} ${operatorClass})`,
    );
  }
  return true;
}
