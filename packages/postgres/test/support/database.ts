import { randomBytes } from 'node:crypto';
import { Pool, type PoolConfig } from 'pg';

/** Where the tests find PostgreSQL, as pg connection settings (host and port spelled out for the proxy tests). */
export interface TestDatabase {
  host: string;
  port: number;
  user: string | undefined;
  password: string | undefined;
  database: string | undefined;
}

const HOW_TO =
  'The @youyou/postgres tests need a PostgreSQL server: set DATABASE_URL (postgres://user:password@host:port/database) ' +
  'or the PG* variables (PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE). On Debian, ' +
  '`eval "$(scripts/start-postgres.sh)"` installs and starts one and sets DATABASE_URL.';

/** The test database from DATABASE_URL or the PG* variables; throws (so the tests fail) when neither is set. */
export function testDatabase(): TestDatabase {
  const url = process.env.DATABASE_URL;
  if (url !== undefined && url !== '') {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new Error(`DATABASE_URL is not a URL. ${HOW_TO}`);
    }
    const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
    return {
      host: parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
      port: parsed.port === '' ? 5432 : Number(parsed.port),
      user: parsed.username === '' ? undefined : decodeURIComponent(parsed.username),
      password: parsed.password === '' ? undefined : decodeURIComponent(parsed.password),
      database: database === '' ? undefined : database,
    };
  }
  const { PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE } = process.env;
  if (PGHOST === undefined && PGDATABASE === undefined && PGUSER === undefined) {
    throw new Error(`No PostgreSQL configured for the tests. ${HOW_TO}`);
  }
  return {
    host: PGHOST ?? '127.0.0.1',
    port: PGPORT === undefined ? 5432 : Number(PGPORT),
    user: PGUSER,
    password: PGPASSWORD,
    database: PGDATABASE,
  };
}

/** pg settings for the test database, optionally at another host/port (a proxy). */
export function poolConfig(overrides: PoolConfig = {}): PoolConfig {
  const database = testDatabase();
  const config: PoolConfig = {
    host: database.host,
    port: database.port,
    max: 4,
    connectionTimeoutMillis: 5_000,
  };
  if (database.user !== undefined) config.user = database.user;
  if (database.password !== undefined) config.password = database.password;
  if (database.database !== undefined) config.database = database.database;
  return { ...config, ...overrides };
}

/** A pool on the test database whose idle-connection errors are collected instead of crashing the test. */
export function testPool(overrides: PoolConfig = {}): Pool & { idleErrors: Error[] } {
  const pool = new Pool(poolConfig(overrides)) as Pool & { idleErrors: Error[] };
  pool.idleErrors = [];
  pool.on('error', (error) => pool.idleErrors.push(error));
  return pool;
}

/** A fresh schema name, so that test files (and tests) can run in parallel on one database. */
export function randomSchema(): string {
  return `yy_test_${randomBytes(6).toString('hex')}`;
}

/** Drops a test schema and everything in it. */
export async function dropSchema(pool: Pool, schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}
