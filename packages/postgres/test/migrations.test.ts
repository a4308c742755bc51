import type { SessionEvent } from '@youyou/agent';
import { encodeStoredValue } from '@youyou/agent/storage';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sortKey } from '../src/codec.js';
import { migratePostgresSchema, openPostgresStorage, SCHEMA_VERSION } from '../src/index.js';
import { migrateSchemaTo } from '../src/migrations.js';
import { dropSchema, randomSchema, testDatabase, testPool } from './support/database.js';

let pool: Pool;
const schemas: string[] = [];
const ALL_VERSIONS = [1, 2];

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
    expect(first).toMatchObject({ version: SCHEMA_VERSION, applied: ALL_VERSIONS });
    expect(await tableNames(schema)).toStrictEqual([
      'youyou_memories',
      'youyou_schema_version',
      'youyou_session_activity',
      'youyou_session_events',
      'youyou_session_leases',
      'youyou_session_search',
      'youyou_sessions',
    ]);
    const second = await migratePostgresSchema({ pool, schema });
    expect(second).toMatchObject({ version: SCHEMA_VERSION, applied: [] });
    const storage = await openPostgresStorage({ pool, schema });
    await storage.close();
    expect(await versionRows(schema)).toStrictEqual(ALL_VERSIONS);
  });

  test('app servers starting at once on a fresh schema do not race', async () => {
    const schema = freshSchema();
    const pools = Array.from({ length: 5 }, () => testPool({ max: 2 }));
    try {
      const results = await Promise.all(pools.map((each) => migratePostgresSchema({ pool: each, schema })));
      expect(results.flatMap((result) => result.applied)).toStrictEqual(ALL_VERSIONS);
      const storages = await Promise.all(pools.map((each) => openPostgresStorage({ pool: each, schema })));
      await Promise.all(storages.map((storage) => storage.close()));
      expect(await versionRows(schema)).toStrictEqual(ALL_VERSIONS);
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
      expect(await versionRows(schema)).toStrictEqual(ALL_VERSIONS);
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

/** Writes a session as version 1 of the package did: a summary row and event rows with their search text. */
async function writeVersion1Session(
  schema: string,
  sessionId: string,
  events: SessionEvent[],
): Promise<void> {
  const messages = events.filter((event) => event.payload.type !== 'metadata').length;
  const firstUser = events.find((event) => event.payload.type === 'user_message');
  const title = firstUser?.payload.type === 'user_message' ? textOf(firstUser) : null;
  const last = events.at(-1)?.timestamp.getTime() ?? 0;
  await pool.query(
    `INSERT INTO "${schema}".youyou_sessions (session_id, sort_key, id_search, title, title_search,
       created_at_ms, updated_at_ms, message_count, event_count, last_write_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, gen_random_uuid())`,
    [
      sessionId,
      sortKey(sessionId),
      sessionId.toLowerCase(),
      title,
      title?.toLowerCase() ?? null,
      events[0]?.timestamp.getTime(),
      last,
      messages,
      events.length,
    ],
  );
  for (const [index, event] of events.entries()) {
    const text = event.payload.type === 'metadata' ? null : textOf(event);
    await pool.query(
      `INSERT INTO "${schema}".youyou_session_events (session_id, seq, timestamp_ms, payload_type, payload, search_text)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        sessionId,
        index + 1,
        event.timestamp.getTime(),
        event.payload.type,
        encodeStoredValue(event.payload).json,
        text?.toLowerCase() ?? null,
      ],
    );
  }
}

function textOf(event: SessionEvent): string {
  const { payload } = event;
  if (payload.type !== 'user_message' && payload.type !== 'assistant_message') return '';
  return payload.content.map((block) => (block.type === 'text' ? block.text : '')).join(' ');
}

async function indexNames(schema: string): Promise<string[]> {
  const result = await pool.query<{ name: string }>(
    'SELECT indexname AS name FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname',
    [schema],
  );
  return result.rows.map((row) => row.name);
}

describe('upgrading a version 1 schema', () => {
  test('moves activity and search text out, keeps every session, and the storage goes on', async () => {
    const schema = freshSchema();
    expect(await migrateSchemaTo({ pool, schema, trigramIndexes: false }, 1)).toMatchObject({
      version: 1,
      applied: [1],
    });
    const trigram = (await pool.query("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")).rowCount === 1;
    // Version 1 created this index on the events when pg_trgm was installed.
    if (trigram) {
      await pool.query(
        `CREATE INDEX youyou_session_events_search_trgm ON "${schema}".youyou_session_events USING gin (search_text gin_trgm_ops)`,
      );
    }
    const penguins: SessionEvent[] = [
      { timestamp: new Date(1_000), payload: { type: 'metadata', key: 'session_config', value: { n: 1 } } },
      {
        timestamp: new Date(2_000),
        payload: { type: 'user_message', content: [{ type: 'text', text: 'Old question about penguins' }] },
      },
      {
        timestamp: new Date(3_000),
        payload: {
          type: 'assistant_message',
          status: 'complete',
          content: [{ type: 'text', text: 'Old answer' }],
        },
      },
    ];
    const volcanoes: SessionEvent[] = [
      {
        timestamp: new Date(5_000),
        payload: { type: 'user_message', content: [{ type: 'text', text: 'Another topic: volcanoes' }] },
      },
    ];
    await writeVersion1Session(schema, 'old-a', penguins);
    await writeVersion1Session(schema, 'old-b', volcanoes);
    await pool.query(
      `INSERT INTO "${schema}".youyou_session_leases VALUES ('old-b', 'gone-process', '00000000-0000-4000-8000-00000000000b', now(), now())`,
    );

    const storage = await openPostgresStorage({ pool, schema });
    try {
      expect(await versionRows(schema)).toStrictEqual(ALL_VERSIONS);
      const indexes = await indexNames(schema);
      expect(indexes).not.toContain('youyou_session_events_search_trgm');
      expect(indexes).not.toContain('youyou_session_events_vector');
      expect(indexes).not.toContain('youyou_sessions_recent');
      expect(indexes.includes('youyou_session_search_trgm')).toBe(trigram);
      const columns = await pool.query(
        `SELECT 1 FROM information_schema.columns
          WHERE table_schema = $1 AND table_name = 'youyou_session_events' AND column_name = 'search_vector'`,
        [schema],
      );
      expect(columns.rowCount).toBe(0);
      const token = await pool.query<{ lease_token: string }>(
        `SELECT lease_token FROM "${schema}".youyou_session_activity WHERE session_id = 'old-b'`,
      );
      expect(token.rows[0]?.lease_token).toBe('00000000-0000-4000-8000-00000000000b');

      const sessions = storage.sessions;
      expect(await sessions.loadSession('old-a')).toStrictEqual(penguins);
      expect((await sessions.listSessions(undefined, 10)).sessions).toStrictEqual([
        {
          sessionId: 'old-b',
          title: 'Another topic: volcanoes',
          createdAt: new Date(5_000),
          updatedAt: new Date(5_000),
          messageCount: 1,
        },
        {
          sessionId: 'old-a',
          title: 'Old question about penguins',
          createdAt: new Date(1_000),
          updatedAt: new Date(3_000),
          messageCount: 2,
        },
      ]);
      // The existing messages were copied into the search table by the migration.
      const unindexed = await pool.query(
        `SELECT 1 FROM "${schema}".youyou_session_activity WHERE event_count > indexed_seq`,
      );
      expect(unindexed.rowCount).toBe(0);
      expect((await sessions.findSession('PENGUINS')).map((summary) => summary.sessionId)).toStrictEqual([
        'old-a',
      ]);
      expect((await sessions.searchRanked('volcanoes')).map((summary) => summary.sessionId)).toStrictEqual([
        'old-b',
      ]);

      const later: SessionEvent = {
        timestamp: new Date(9_000),
        payload: {
          type: 'assistant_message',
          status: 'complete',
          content: [{ type: 'text', text: 'Krill' }],
        },
      };
      await sessions.saveEvent('old-a', later);
      expect(await sessions.loadSession('old-a')).toStrictEqual([...penguins, later]);
      expect((await sessions.listSessions(undefined, 1)).sessions[0]).toMatchObject({
        sessionId: 'old-a',
        messageCount: 3,
      });
      expect((await sessions.findSession('krill')).map((summary) => summary.sessionId)).toStrictEqual([
        'old-a',
      ]);
      await sessions.deleteSession('old-a');
      expect(await sessions.loadSession('old-a')).toBeNull();
    } finally {
      await storage.close();
    }
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
