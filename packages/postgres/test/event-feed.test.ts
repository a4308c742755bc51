import type { Pool } from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { openPostgresStorage, type PostgresStorage } from '../src/index.js';
import { dropSchema, randomSchema, testPool } from './support/database.js';

const schema = randomSchema();
let adminPool: Pool;
// Two storages with their own pools on one schema: two app server processes as PostgreSQL sees them.
let writer: PostgresStorage;
let reader: PostgresStorage;

beforeAll(async () => {
  adminPool = testPool();
  writer = await openPostgresStorage({ pool: testPool(), schema, eventNotifications: true });
  reader = await openPostgresStorage({ pool: testPool(), schema });
});

afterAll(async () => {
  await writer?.close();
  await reader?.close();
  await writer?.pool.end();
  await reader?.pool.end();
  if (adminPool === undefined) return;
  await dropSchema(adminPool, schema);
  await adminPool.end();
});

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);

test('another storage reads the log after a position, with positions 1, 2, 3 in save order', async () => {
  const sessionId = 'feed-read';
  for (const [index, text] of ['one', 'two', 'three'].entries()) {
    await writer.sessions.saveEvent(sessionId, {
      timestamp: at(index),
      payload: { type: 'user_message', content: [{ type: 'text', text }] },
    });
  }
  const all = await reader.sessions.readEventsAfter(sessionId, 0);
  expect(all.map((event) => event.sequence)).toEqual([1, 2, 3]);
  expect(all.map((event) => (event.payload as { content: { text: string }[] }).content[0]?.text)).toEqual([
    'one',
    'two',
    'three',
  ]);
  expect(all[1]?.timestamp.getTime()).toBe(at(1).getTime());
  const rest = await reader.sessions.readEventsAfter(sessionId, 2);
  expect(rest.map((event) => event.sequence)).toEqual([3]);
  expect(await reader.sessions.readEventsAfter(sessionId, 3)).toEqual([]);
  expect((await reader.sessions.readEventsAfter(sessionId, 0, 2)).map((event) => event.sequence)).toEqual([
    1, 2,
  ]);
  expect(await reader.sessions.readEventsAfter('no-such-session', 0)).toEqual([]);
});

test('bad cursors and limits are INVALID_INPUT', async () => {
  for (const [after, limit] of [
    [-1, 10],
    [1.5, 10],
    [Number.NaN, 10],
    [0, 0],
    [0, 10_001],
  ] as const) {
    await expect(reader.sessions.readEventsAfter('feed-read', after, limit)).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
  }
  await expect(reader.sessions.readEventsAfter('', 0)).rejects.toMatchObject({ code: 'INVALID_INPUT' });
});

test('a save in one storage wakes the watcher of that session in another, after its commit', async () => {
  const sessionId = 'feed-watch';
  const woken: number[][] = [];
  let wake: () => void = () => undefined;
  const stop = await reader.sessions.watchEvents(sessionId, () => {
    reader.sessions
      .readEventsAfter(sessionId, 0)
      .then((events) => {
        woken.push(events.map((event) => event.sequence));
        wake();
      })
      .catch(() => undefined);
  });
  let otherWakes = 0;
  const stopOther = await reader.sessions.watchEvents('feed-other', () => {
    otherWakes += 1;
  });
  const woke = new Promise<void>((resolve) => {
    wake = resolve;
  });
  await writer.sessions.saveEvent(sessionId, {
    timestamp: at(10),
    payload: { type: 'metadata', key: 'k', value: 'v' },
  });
  await woke;
  // The reader woken by the notification already finds the committed event.
  expect(woken[0]).toEqual([1]);
  expect(otherWakes).toBe(0);
  stop();
  stopOther();
  const before = woken.length;
  await writer.sessions.saveEvent(sessionId, {
    timestamp: at(11),
    payload: { type: 'metadata', key: 'k', value: 'w' },
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(woken.length).toBe(before);
});

test('a storage without eventNotifications sends none, and a closed storage refuses to watch', async () => {
  let wakes = 0;
  const stop = await writer.sessions.watchEvents('feed-quiet', () => {
    wakes += 1;
  });
  await reader.sessions.saveEvent('feed-quiet', {
    timestamp: at(20),
    payload: { type: 'metadata', key: 'a', value: 1 },
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(wakes).toBe(0);
  expect((await writer.sessions.readEventsAfter('feed-quiet', 0)).length).toBe(1);
  stop();
  const closed = await openPostgresStorage({ pool: testPool(), schema });
  await closed.close();
  await expect(closed.sessions.watchEvents('feed-quiet', () => undefined)).rejects.toMatchObject({
    code: 'STORAGE_ERROR',
  });
  await closed.pool.end();
});

test('saves that commit close together share NOTIFY statements, and every watcher is still woken', async () => {
  const sessions = Array.from({ length: 40 }, (_, index) => `feed-burst-${index}`);
  const woken = new Set<string>();
  let allWoken: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    allWoken = resolve;
  });
  const stops = await Promise.all(
    sessions.map((sessionId) =>
      reader.sessions.watchEvents(sessionId, () => {
        woken.add(sessionId);
        if (woken.size === sessions.length) allWoken();
      }),
    ),
  );
  // Counted around the real pool: the statements the writer sends.
  const pool = writer.pool;
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  let notifyStatements = 0;
  pool.query = ((...args: unknown[]) => {
    if (JSON.stringify(args[0]).includes('pg_notify')) notifyStatements += 1;
    return query(...args);
  }) as typeof pool.query;
  try {
    await Promise.all(
      sessions.map((sessionId, index) =>
        writer.sessions.saveEvent(sessionId, {
          timestamp: at(100 + index),
          payload: { type: 'metadata', key: 'burst', value: index },
        }),
      ),
    );
    await done;
  } finally {
    pool.query = query as typeof pool.query;
    for (const stop of stops) stop();
  }
  expect(woken.size).toBe(sessions.length);
  // The pool has 4 connections: 40 concurrent saves commit in a handful of waves, not one by one.
  expect(notifyStatements).toBeLessThan(sessions.length / 2);
});

test('a storage closed right after its saves still sends their wake-ups first', async () => {
  const quick = await openPostgresStorage({ pool: testPool(), schema, eventNotifications: true });
  const sessions = ['feed-close-1', 'feed-close-2', 'feed-close-3'];
  const woken = new Set<string>();
  const stops = await Promise.all(
    sessions.map((sessionId) => reader.sessions.watchEvents(sessionId, () => woken.add(sessionId))),
  );
  await Promise.all(
    sessions.map((sessionId) =>
      quick.sessions.saveEvent(sessionId, {
        timestamp: at(200),
        payload: { type: 'metadata', key: 'last', value: true },
      }),
    ),
  );
  await quick.close();
  await quick.pool.end();
  const deadline = Date.now() + 5_000;
  while (woken.size < sessions.length && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  for (const stop of stops) stop();
  expect([...woken].sort()).toEqual(sessions);
});

test('a dropped listening connection is replaced by itself: watchers are woken, then hear new saves', async () => {
  const name = `yy_relisten_${Math.random().toString(16).slice(2, 10)}`;
  const watching = await openPostgresStorage({ pool: testPool({ application_name: name }), schema });
  try {
    let wakes = 0;
    const stop = await watching.sessions.watchEvents('feed-relisten', () => {
      wakes += 1;
    });
    // The database ends the listening connection (a restart, a failover, an administrator).
    const killed = await adminPool.query(
      `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
        WHERE application_name = $1 AND query LIKE 'LISTEN%'`,
      [name],
    );
    expect(killed.rows.length).toBe(1);
    const waitFor = async (count: number) => {
      const deadline = Date.now() + 5_000;
      while (wakes < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    // Listening again, every watcher reads once: saves announced meanwhile were missed.
    await waitFor(1);
    expect(wakes).toBe(1);
    // Then saves in another process wake it again, with no new watchEvents call.
    await writer.sessions.saveEvent('feed-relisten', {
      timestamp: at(300),
      payload: { type: 'metadata', key: 'after', value: 'drop' },
    });
    await waitFor(2);
    expect(wakes).toBe(2);
    stop();
  } finally {
    await watching.close();
    await watching.pool.end();
  }
});
