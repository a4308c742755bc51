import type { SessionEvent } from '@youyou/agent';
import type { Pool } from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { openPostgresStorage, type PostgresStorage } from '../src/index.js';
import { dropSchema, randomSchema, testPool } from './support/database.js';

const schema = randomSchema();
const pools: Pool[] = [];
const storages: PostgresStorage[] = [];

beforeAll(async () => {
  for (let index = 0; index < 3; index += 1) {
    const pool = testPool({ max: 4 });
    pools.push(pool);
    storages.push(await openPostgresStorage({ pool, schema }));
  }
});

afterAll(async () => {
  for (const storage of storages) await storage.close();
  if (pools[0] !== undefined) await dropSchema(pools[0], schema);
  for (const pool of pools) await pool.end();
});

const message = (ms: number, text: string): SessionEvent => ({
  timestamp: new Date(ms),
  payload: { type: 'user_message', content: [{ type: 'text', text }] },
});

test('writers on three servers to different sessions lose nothing and keep each order', async () => {
  const perSession = 40;
  const sessionIds = Array.from({ length: 12 }, (_, index) => `writer-${index}`);
  await Promise.all(
    sessionIds.map(async (sessionId, writer) => {
      const storage = storages[writer % storages.length] as PostgresStorage;
      for (let index = 0; index < perSession; index += 1) {
        await storage.sessions.saveEvent(sessionId, message(index * 100 + writer, `${sessionId} #${index}`));
      }
    }),
  );
  const reader = storages[0] as PostgresStorage;
  for (const [writer, sessionId] of sessionIds.entries()) {
    const expected = Array.from({ length: perSession }, (_, index) =>
      message(index * 100 + writer, `${sessionId} #${index}`),
    );
    expect(await reader.sessions.loadSession(sessionId)).toStrictEqual(expected);
  }
  const { sessions } = await reader.sessions.listSessions(undefined, 100);
  expect(sessions.filter((summary) => summary.sessionId.startsWith('writer-'))).toHaveLength(
    sessionIds.length,
  );
  expect(sessions.every((summary) => summary.messageCount === perSession)).toBe(true);
});

test('unleased writers racing on one session never lose or duplicate an event', async () => {
  const perWriter = 30;
  await Promise.all(
    storages.map(async (storage, writer) => {
      for (let index = 0; index < perWriter; index += 1) {
        await storage.sessions.saveEvent('contended', message(writer * 1000 + index, `w${writer}-${index}`));
      }
    }),
  );
  const log = (await (storages[1] as PostgresStorage).sessions.loadSession('contended')) ?? [];
  expect(log).toHaveLength(perWriter * storages.length);
  const texts = log.map((event) =>
    event.payload.type === 'user_message' ? event.payload.content[0] : undefined,
  );
  // Each writer's own events stay in its order, whatever the interleaving.
  for (const writer of storages.keys()) {
    const own = texts.flatMap((block) =>
      block?.type === 'text' && block.text.startsWith(`w${writer}-`) ? [block.text] : [],
    );
    expect(own).toStrictEqual(Array.from({ length: perWriter }, (_, index) => `w${writer}-${index}`));
  }
  const [summary] = await (storages[2] as PostgresStorage).sessions.findSession('contended');
  expect(summary?.messageCount).toBe(perWriter * storages.length);
});
