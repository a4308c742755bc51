import type { SessionEvent } from '@youyou/agent';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openPostgresStorage, type PostgresStorage } from '../src/index.js';
import { dropSchema, randomSchema, testPool } from './support/database.js';
import { until } from './support/until.js';

let admin: Pool;
const schemas: string[] = [];
/** Every storage a test opened (each with its own pool, like a process of its own), closed at the end. */
const opened: { storage: PostgresStorage; pool: Pool }[] = [];

beforeAll(() => {
  admin = testPool();
});

afterAll(async () => {
  for (const { storage, pool } of opened) {
    await storage.close().catch(() => undefined);
    await pool.end();
  }
  if (admin === undefined) return;
  for (const schema of schemas) await dropSchema(admin, schema);
  await admin.end();
});

function freshSchema(): string {
  const schema = randomSchema();
  schemas.push(schema);
  return schema;
}

async function processStorage(schema: string): Promise<PostgresStorage> {
  const pool = testPool({ max: 3 });
  const storage = await openPostgresStorage({ pool, schema });
  opened.push({ storage, pool });
  return storage;
}

const at = (ms: number) => new Date(Date.UTC(2024, 6, 1, 12, 0, 0, ms));
const user = (ms: number, text: string): SessionEvent => ({
  timestamp: at(ms),
  payload: { type: 'user_message', content: [{ type: 'text', text }] },
});
const assistant = (ms: number, text: string): SessionEvent => ({
  timestamp: at(ms),
  payload: { type: 'assistant_message', status: 'complete', content: [{ type: 'text', text }] },
});
const toolResult = (ms: number, content: string): SessionEvent => ({
  timestamp: at(ms),
  payload: { type: 'tool_result', callId: 'c1', content, isError: false },
});

/** How many sessions have messages the background pass has not copied into the search table yet. */
async function unindexedSessions(schema: string): Promise<number> {
  const result = await admin.query<{ count: number }>(
    `SELECT count(*)::integer AS count FROM "${schema}".youyou_session_activity WHERE event_count > indexed_seq`,
  );
  return result.rows[0]?.count ?? -1;
}

async function searchRows(schema: string): Promise<number> {
  const result = await admin.query<{ count: number }>(
    `SELECT count(*)::integer AS count FROM "${schema}".youyou_session_search`,
  );
  return result.rows[0]?.count ?? -1;
}

/** The state a process that exited before its pass leaves: no message copied into the search table. */
async function forgetSearchIndex(schema: string): Promise<void> {
  await admin.query(`DELETE FROM "${schema}".youyou_session_search`);
  await admin.query(`UPDATE "${schema}".youyou_session_activity SET indexed_seq = 0`);
}

async function findIds(storage: PostgresStorage, query: string): Promise<string[]> {
  return (await storage.sessions.findSession(query)).map((summary) => summary.sessionId);
}

async function rankedIds(storage: PostgresStorage, query: string): Promise<string[]> {
  return (await storage.sessions.searchRanked(query)).map((summary) => summary.sessionId);
}

describe('search indexing off the write path', () => {
  test('messages are found before the background pass copies them, and after', async () => {
    const schema = freshSchema();
    const writer = await processStorage(schema);
    await writer.sessions.saveEvent('alpha', user(0, 'Where is the Needle_in 100% of the haystack?'));
    await writer.sessions.saveEvent('alpha', toolResult(1, 'tool output mentions a crowbar'));
    await writer.sessions.saveEvent('beta', user(2, 'unrelated opening line'));
    await writer.sessions.saveEvent('beta', assistant(3, `O'Reilly's "garden" answer`));
    // The writer stops before its pass could run, and nothing is indexed: as if the process had exited.
    await writer.close();
    await forgetSearchIndex(schema);
    const reader = await processStorage(schema);
    expect(await unindexedSessions(schema)).toBe(2);

    const expectFound = async () => {
      expect(await findIds(reader, 'needle_in 100%')).toStrictEqual(['alpha']);
      expect(await findIds(reader, `o'reilly's "GARDEN"`)).toStrictEqual(['beta']);
      expect(await findIds(reader, 'needle_ix')).toStrictEqual([]);
      // Tool results are not message text.
      expect(await findIds(reader, 'crowbar')).toStrictEqual([]);
      expect(await rankedIds(reader, 'haystack')).toStrictEqual(['alpha']);
      expect(await rankedIds(reader, 'garden or haystack')).toHaveLength(2);
      expect(await rankedIds(reader, 'crowbar')).toStrictEqual([]);
    };
    await expectFound();
    expect(await unindexedSessions(schema)).toBe(2);

    expect(await reader.sessions.flushSearchIndex()).toBe(3);
    expect(await unindexedSessions(schema)).toBe(0);
    expect(await searchRows(schema)).toBe(3);
    await expectFound();

    // A session with some messages copied and one not yet: both are found.
    await reader.sessions.saveEvent('alpha', assistant(4, 'a fresh remark about magnets'));
    expect(await findIds(reader, 'magnets')).toStrictEqual(['alpha']);
    expect(await findIds(reader, 'haystack')).toStrictEqual(['alpha']);
    expect(await rankedIds(reader, 'magnets')).toStrictEqual(['alpha']);
    expect(await reader.sessions.flushSearchIndex()).toBeLessThanOrEqual(1);
    expect(await findIds(reader, 'magnets')).toStrictEqual(['alpha']);
    expect(await searchRows(schema)).toBe(4);
  });

  test('the background pass copies new messages by itself, a moment after the writes', async () => {
    const schema = freshSchema();
    const storage = await processStorage(schema);
    for (let index = 0; index < 30; index += 1) {
      await storage.sessions.saveEvent(`s${index % 3}`, user(index, `message number ${index}`));
    }
    await until(async () => (await unindexedSessions(schema)) === 0, 'the background pass', 15_000);
    expect(await searchRows(schema)).toBe(30);
    expect(await findIds(storage, 'message number 29')).toStrictEqual(['s2']);
  });

  test('deleteSession removes the search rows; a session re-created under the id starts over', async () => {
    const schema = freshSchema();
    const storage = await processStorage(schema);
    await storage.sessions.saveEvent('gone', user(0, 'first life: tangerine'));
    await storage.sessions.saveEvent('gone', assistant(1, 'first life: answer'));
    await storage.sessions.flushSearchIndex();
    await storage.sessions.saveEvent('gone', user(2, 'first life: not copied yet, kumquat'));
    await storage.sessions.deleteSession('gone');
    expect(await findIds(storage, 'tangerine')).toStrictEqual([]);
    expect(await findIds(storage, 'kumquat')).toStrictEqual([]);
    expect(await searchRows(schema)).toBe(0);

    const again = user(3, 'second life: plum');
    await storage.sessions.saveEvent('gone', again);
    expect(await storage.sessions.loadSession('gone')).toStrictEqual([again]);
    expect(await findIds(storage, 'tangerine')).toStrictEqual([]);
    expect(await findIds(storage, 'plum')).toStrictEqual(['gone']);
    await storage.sessions.flushSearchIndex();
    expect(await findIds(storage, 'first life')).toStrictEqual([]);
    expect(await rankedIds(storage, 'plum')).toStrictEqual(['gone']);
    const [summary] = (await storage.sessions.listSessions(undefined, 10)).sessions;
    expect(summary).toMatchObject({ sessionId: 'gone', title: 'second life: plum', messageCount: 1 });
  });

  test("a pass's lock on a session does not hold up its saves", async () => {
    const schema = freshSchema();
    const storage = await processStorage(schema);
    await storage.sessions.saveEvent('busy', user(0, 'one'));
    const pass = await admin.connect();
    try {
      // What a pass holds while it copies a session's messages.
      await pass.query('BEGIN');
      await pass.query(
        `SELECT 1 FROM "${schema}".youyou_session_activity WHERE session_id = 'busy' FOR KEY SHARE`,
      );
      await storage.sessions.saveEvent('busy', assistant(1, 'two'));
      await storage.sessions.saveEvent('busy', user(2, 'three'));
      expect(await storage.sessions.loadSession('busy')).toHaveLength(3);
    } finally {
      await pass.query('ROLLBACK');
      pass.release();
    }
  });

  test('passes of two processes at once copy every message exactly once', async () => {
    const schema = freshSchema();
    const writer = await processStorage(schema);
    for (let index = 0; index < 120; index += 1) {
      await writer.sessions.saveEvent(`w${index % 60}`, user(index, `text ${index}`));
    }
    await writer.close();
    await forgetSearchIndex(schema);
    const [a, b] = [await processStorage(schema), await processStorage(schema)];
    const counts = await Promise.all([a.sessions.flushSearchIndex(), b.sessions.flushSearchIndex()]);
    expect((counts[0] ?? 0) + (counts[1] ?? 0)).toBe(120);
    expect(await unindexedSessions(schema)).toBe(0);
    expect(await searchRows(schema)).toBe(120);
    expect(await findIds(a, 'text 119')).toStrictEqual(['w59']);
  });
});
