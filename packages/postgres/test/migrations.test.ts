import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { migratePostgresSchema, openPostgresStorage, SCHEMA_VERSION } from '../src/index.js';
import { dropSchema, randomSchema, testDatabase, testPool } from './support/database.js';

let pool: Pool;
const schemas: string[] = [];

beforeAll(() => {
  pool = testPool();
});

afterAll(async () => {
  if (pool === undefined) return;
  for (const schema of schemas) await dropSchema(pool, schema);
  await pool.end();
});

function freshSchema(): string {
  const schema = randomSchema();
  schemas.push(schema);
  return schema;
}

async function versionRows(schema: string): Promise<number[]> {
  const result = await pool.query<{ version: number }>(
    `SELECT version FROM "${schema}".youyou_schema_version ORDER BY version`,
  );
  return result.rows.map((row) => row.version);
}

async function tableNames(schema: string): Promise<string[]> {
  const result = await pool.query<{ name: string }>(
    'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
    [schema],
  );
  return result.rows.map((row) => row.name);
}

describe('migrations', () => {
  test('a fresh schema is created and brought to the current version; a second run changes nothing', async () => {
    const schema = freshSchema();
    const first = await migratePostgresSchema({ pool, schema });
    expect(first).toMatchObject({ version: SCHEMA_VERSION, applied: [1] });
    expect(await tableNames(schema)).toStrictEqual([
      'youyou_memories',
      'youyou_schema_version',
      'youyou_session_events',
      'youyou_session_leases',
      'youyou_sessions',
    ]);
    const second = await migratePostgresSchema({ pool, schema });
    expect(second).toMatchObject({ version: SCHEMA_VERSION, applied: [] });
    const storage = await openPostgresStorage({ pool, schema });
    await storage.close();
    expect(await versionRows(schema)).toStrictEqual([1]);
  });

  test('app servers starting at once on a fresh schema do not race', async () => {
    const schema = freshSchema();
    const pools = Array.from({ length: 5 }, () => testPool({ max: 2 }));
    try {
      const results = await Promise.all(pools.map((each) => migratePostgresSchema({ pool: each, schema })));
      expect(results.flatMap((result) => result.applied)).toStrictEqual([1]);
      const storages = await Promise.all(pools.map((each) => openPostgresStorage({ pool: each, schema })));
      await Promise.all(storages.map((storage) => storage.close()));
      expect(await versionRows(schema)).toStrictEqual([1]);
    } finally {
      await Promise.all(pools.map((each) => each.end()));
    }
  });

  test('two openPostgresStorage calls at once on a fresh schema both work', async () => {
    const schema = freshSchema();
    const pools = [testPool({ max: 2 }), testPool({ max: 2 })];
    try {
      const [a, b] = await Promise.all(pools.map((each) => openPostgresStorage({ pool: each, schema })));
      await a?.sessions.saveEvent('s', {
        timestamp: new Date(5),
        payload: { type: 'user_message', content: [{ type: 'text', text: 'hello' }] },
      });
      expect((await b?.sessions.loadSession('s'))?.length).toBe(1);
      await Promise.all([a?.close(), b?.close()]);
      expect(await versionRows(schema)).toStrictEqual([1]);
    } finally {
      await Promise.all(pools.map((each) => each.end()));
    }
  });

  test('a schema newer than the package is refused with STORAGE_ERROR', async () => {
    const schema = freshSchema();
    await migratePostgresSchema({ pool, schema });
    await pool.query(
      `INSERT INTO "${schema}".youyou_schema_version (version, description) VALUES ($1, 'future')`,
      [SCHEMA_VERSION + 1],
    );
    await expect(openPostgresStorage({ pool, schema })).rejects.toMatchObject({
      code: 'STORAGE_ERROR',
      retryable: false,
      message: expect.stringContaining('upgrade the package'),
    });
    await expect(openPostgresStorage({ pool, schema, migrate: false })).rejects.toMatchObject({
      code: 'STORAGE_ERROR',
    });
  });

  test('migrate: false checks the version instead of migrating', async () => {
    const schema = freshSchema();
    await expect(openPostgresStorage({ pool, schema, migrate: false })).rejects.toMatchObject({
      code: 'STORAGE_ERROR',
      message: expect.stringContaining('migratePostgresSchema'),
    });
    expect(await tableNames(schema)).toStrictEqual([]);
    await migratePostgresSchema({ pool, schema });
    const storage = await openPostgresStorage({ pool, schema, migrate: false });
    await storage.close();
  });

  test('trigram indexes exist exactly when pg_trgm is installed and wanted', async () => {
    const installed =
      (await pool.query("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")).rowCount === 1;
    const trigramIndexes = async (schema: string) =>
      (
        await pool.query<{ name: string }>(
          "SELECT indexname AS name FROM pg_indexes WHERE schemaname = $1 AND indexname LIKE '%trgm'",
          [schema],
        )
      ).rows.length;
    const withThem = freshSchema();
    expect((await migratePostgresSchema({ pool, schema: withThem })).trigramIndexes).toBe(installed);
    expect(await trigramIndexes(withThem)).toBe(installed ? 3 : 0);
    const without = freshSchema();
    expect(
      (await migratePostgresSchema({ pool, schema: without, trigramIndexes: false })).trigramIndexes,
    ).toBe(false);
    expect(await trigramIndexes(without)).toBe(0);
  });
});

describe('options', () => {
  test('bad options are INVALID_CONFIG', async () => {
    for (const schema of ['', 'a b', 'bad"name', '1starts_with_digit', 'x'.repeat(64)]) {
      await expect(openPostgresStorage({ pool, schema })).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    }
    await expect(
      openPostgresStorage({ pool, connectionString: 'postgres://x@127.0.0.1/x' }),
    ).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
    });
    for (const lease of [{ ttlMs: 5 }, { ttlMs: 1000, heartbeatMs: 2000 }, { owner: '' }]) {
      await expect(openPostgresStorage({ pool, schema: freshSchema(), lease })).rejects.toMatchObject({
        code: 'INVALID_CONFIG',
      });
    }
  });

  test('without prepared statements (for a pooler in transaction mode) the storage works the same', async () => {
    const storage = await openPostgresStorage({ pool, schema: freshSchema(), preparedStatements: false });
    const event = {
      timestamp: new Date(7),
      payload: { type: 'system_message' as const, content: 'unprepared' },
    };
    await storage.sessions.saveEvent('plain', event);
    expect(await storage.sessions.loadSession('plain')).toStrictEqual([event]);
    await storage.close();
  });

  test('a connection string makes a pool that close() ends; a given pool is left open', async () => {
    const database = testDatabase();
    const url = new URL('postgres://127.0.0.1');
    url.hostname = database.host;
    url.port = String(database.port);
    url.username = database.user ?? '';
    url.password = database.password ?? '';
    url.pathname = `/${database.database ?? ''}`;
    const storage = await openPostgresStorage({ connectionString: url.toString(), schema: freshSchema() });
    expect(await storage.sessions.loadSession('none')).toBeNull();
    await storage.close();
    expect(storage.pool.ended).toBe(true);
    await expect(storage.sessions.loadSession('none')).rejects.toMatchObject({ code: 'STORAGE_ERROR' });

    const shared = await openPostgresStorage({ pool, schema: freshSchema() });
    await shared.close();
    expect(pool.ended).toBe(false);
    await expect(shared.memories.search('ns', '', 1)).rejects.toMatchObject({
      code: 'STORAGE_ERROR',
      message: expect.stringContaining('closed'),
    });
  });
});
