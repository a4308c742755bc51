import type { SessionEvent } from '@youyou/agent';
import type { Pool } from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { openPostgresStorage, type PostgresStorage } from '../src/index.js';
import { dropSchema, randomSchema, testDatabase, testPool } from './support/database.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { until } from './support/until.js';

const schema = randomSchema();
let admin: Pool;
/** Every storage a test opened (each on a pool of its own, like a process), closed at the end. */
const opened: PostgresStorage[] = [];

beforeAll(async () => {
  admin = testPool();
  const setup = await openPostgresStorage({ pool: admin, schema });
  await setup.close();
});

afterAll(async () => {
  for (const storage of opened) {
    await storage.close().catch(() => undefined);
    if (!storage.pool.ended) await storage.pool.end();
  }
  if (admin === undefined) return;
  await dropSchema(admin, schema);
  await admin.end();
});

async function processStorage(options: { eventNotifications?: boolean } = {}, pool = testPool({ max: 2 })) {
  const storage = await openPostgresStorage({ pool, schema, ...options });
  opened.push(storage);
  return storage;
}

const user = (ms: number, text: string): SessionEvent => ({
  timestamp: new Date(ms),
  payload: { type: 'user_message', content: [{ type: 'text', text }] },
});
const usage = (ms: number): SessionEvent => ({
  timestamp: new Date(ms),
  payload: { type: 'metadata', key: 'usage', value: { input: 3, output: 4 } },
});

/** The session's rows as PostgreSQL holds them, read past the storage under test. */
async function storedRows(sessionId: string): Promise<{ seq: number; type: string }[]> {
  const result = await admin.query<{ seq: number; payload_type: string }>(
    `SELECT seq, payload_type FROM "${schema}".youyou_session_events WHERE session_id = $1 ORDER BY seq`,
    [sessionId],
  );
  return result.rows.map((row) => ({ seq: row.seq, type: row.payload_type }));
}

async function messageCount(storage: PostgresStorage, sessionId: string): Promise<number | undefined> {
  const page = await storage.sessions.listSessions(undefined, 100);
  return page.sessions.find((summary) => summary.sessionId === sessionId)?.messageCount;
}

test('a batch gets the next positions, wakes tails in another process once committed, and is searchable', async () => {
  const writer = await processStorage({ eventNotifications: true });
  const reader = await processStorage();
  await writer.sessions.saveEvent('tail', user(1, 'before the batch'));
  const reads: number[][] = [];
  const stop = await reader.sessions.watchEvents('tail', () => {
    void reader.sessions.readEventsAfter('tail', 1).then((events) => {
      reads.push(events.map((event) => event.sequence));
    });
  });
  await writer.sessions.saveEvents('tail', [usage(2), user(3, 'zebra crossing'), usage(4)]);
  await until(async () => reads.some((read) => read.length > 0), 'a watcher read to find the batch');
  stop();
  // A wake-up (the first save's may come late) finds none of the batch or all of it, numbered after the first
  // event: never a part.
  for (const read of reads) expect([[], [2, 3, 4]]).toContainEqual(read);
  expect(await storedRows('tail')).toEqual([
    { seq: 1, type: 'user_message' },
    { seq: 2, type: 'metadata' },
    { seq: 3, type: 'user_message' },
    { seq: 4, type: 'metadata' },
  ]);
  await writer.sessions.flushSearchIndex();
  const ranked = await reader.sessions.searchRanked('zebra');
  expect(ranked.map((summary) => summary.sessionId)).toEqual(['tail']);
});

test('a process whose lease was taken over cannot write a batch; the holder can', async () => {
  const a = await processStorage();
  const b = await processStorage();
  const lease = await a.sessions.acquireLease('fenced-batch');
  await a.sessions.saveEvents('fenced-batch', [usage(1), user(2, 'from a, leased')]);
  await admin.query(
    `UPDATE "${schema}".youyou_session_leases SET expires_at = clock_timestamp() - interval '1 second'
      WHERE session_id = 'fenced-batch'`,
  );
  const taken = await b.sessions.acquireLease('fenced-batch');
  await expect(a.sessions.saveEvents('fenced-batch', [usage(3), user(4, 'too late')])).rejects.toMatchObject({
    code: 'SESSION_BUSY',
  });
  expect(lease.lost).toBe(true);
  await b.sessions.saveEvents('fenced-batch', [usage(5), user(6, 'from b')]);
  expect((await storedRows('fenced-batch')).map((row) => row.seq)).toEqual([1, 2, 3, 4]);
  expect(await messageCount(b, 'fenced-batch')).toBe(2);
  await lease.release();
  await taken.release();
});

test('a batch whose connection drops after COMMIT is not doubled when the core retries it with more', async () => {
  const proxy = await TcpProxy.open({ host: testDatabase().host, port: testDatabase().port });
  const storage = await processStorage({}, testPool({ host: '127.0.0.1', port: proxy.port, max: 2 }));
  try {
    const first = [usage(1), user(2, 'once')];
    // The batch reaches PostgreSQL and commits, but its answer never comes back: the connection drops.
    proxy.mute(true);
    const saved = storage.sessions.saveEvents('exactly-once-batch', first);
    await until(async () => (await storedRows('exactly-once-batch')).length === 2, 'the batch to commit');
    await proxy.stop();
    await expect(saved).rejects.toMatchObject({ code: 'STORAGE_ERROR', retryable: true });
    proxy.mute(false);
    await proxy.start();
    // The core retries the same event objects, with what was queued meanwhile after them.
    const later = user(3, 'queued meanwhile');
    await saveUntilAccepted(() => storage.sessions.saveEvents('exactly-once-batch', [...first, later]));
    expect(await storage.sessions.loadSession('exactly-once-batch')).toStrictEqual([...first, later]);
    expect(await messageCount(storage, 'exactly-once-batch')).toBe(2);

    // A single save that committed, retried as the head of a batch.
    const single = user(4, 'single');
    proxy.mute(true);
    const one = storage.sessions.saveEvent('exactly-once-batch', single);
    await until(async () => (await storedRows('exactly-once-batch')).length === 4, 'the save to commit');
    await proxy.stop();
    await expect(one).rejects.toMatchObject({ code: 'STORAGE_ERROR', retryable: true });
    proxy.mute(false);
    await proxy.start();
    const answer = usage(5);
    await saveUntilAccepted(() => storage.sessions.saveEvents('exactly-once-batch', [single, answer]));
    expect(await storage.sessions.loadSession('exactly-once-batch')).toStrictEqual([
      ...first,
      later,
      single,
      answer,
    ]);
    expect((await storedRows('exactly-once-batch')).map((row) => row.seq)).toEqual([1, 2, 3, 4, 5]);
  } finally {
    await storage.close();
    await proxy.stop();
  }
});

/** Calls `save` again while it fails with a retryable STORAGE_ERROR, as the core's session log does. */
async function saveUntilAccepted(save: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await save();
      return;
    } catch (error) {
      expect(error).toMatchObject({ code: 'STORAGE_ERROR', retryable: true });
      if (attempt === 5) throw error;
    }
  }
}
