import type { SessionEvent, SessionStorage } from '@youyou/agent';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openPostgresStorage, type PostgresStorage } from '../src/index.js';
import { dropSchema, randomSchema, testPool } from './support/database.js';

let pool: Pool;
let storage: PostgresStorage;
const schema = randomSchema();

beforeAll(async () => {
  pool = testPool();
  storage = await openPostgresStorage({ pool, schema });
});

afterAll(async () => {
  await storage?.close();
  if (pool !== undefined) {
    await dropSchema(pool, schema);
    await pool.end();
  }
});

const at = (ms: number) => new Date(Date.UTC(2024, 5, 1, 12, 0, 0, ms));
const user = (ms: number, text: string): SessionEvent => ({
  timestamp: at(ms),
  payload: { type: 'user_message', content: [{ type: 'text', text }] },
});
const findIds = async (sessions: SessionStorage, query: string) =>
  (await sessions.findSession(query)).map((summary) => summary.sessionId);

const HOSTILE_IDS = [
  `it's "id"`,
  '50%_off\\path',
  'nul\0inside',
  '"a" OR b*',
  "'; DROP TABLE youyou_sessions; --",
  'lone \uD800 surrogate',
  'escape \uFFFF char \uFFFF0',
  '😀 emoji id',
  ' spaced ',
];

describe('hostile ids', () => {
  test('every id is stored, listed, loaded, found by prefix and deleted as written', async () => {
    const sessions = storage.sessions;
    for (const [index, id] of HOSTILE_IDS.entries())
      await sessions.saveEvent(id, user(index, `text of ${index}`));
    for (const [index, id] of HOSTILE_IDS.entries()) {
      expect(await sessions.loadSession(id)).toStrictEqual([user(index, `text of ${index}`)]);
    }
    const listed = (await sessions.listSessions(undefined, 100)).sessions.map((summary) => summary.sessionId);
    expect(listed).toStrictEqual([...HOSTILE_IDS].reverse());
    expect(await findIds(sessions, 'nul\0')).toStrictEqual(['nul\0inside']);
    expect(await findIds(sessions, '50%_')).toStrictEqual(['50%_off\\path']);
    expect(await findIds(sessions, '50%x')).toStrictEqual([]);
    expect(await findIds(sessions, 'lone \uD800')).toStrictEqual(['lone \uD800 surrogate']);
    expect(await findIds(sessions, 'lone \uDC00')).toStrictEqual([]);
    expect(await findIds(sessions, 'escape \uFFFF char \uFFFF0')).toStrictEqual([
      'escape \uFFFF char \uFFFF0',
    ]);
    // A cursor naming a hostile id pages on from it.
    const first = await sessions.listSessions(undefined, 4);
    const rest = await sessions.listSessions(first.nextCursor ?? undefined, 100);
    expect([...first.sessions, ...rest.sessions].map((summary) => summary.sessionId)).toStrictEqual(listed);
    for (const id of HOSTILE_IDS) await sessions.deleteSession(id);
    expect(await sessions.listSessions(undefined, 100)).toStrictEqual({ sessions: [], nextCursor: null });
  });

  test('ids that differ only in escaped characters stay apart', async () => {
    const sessions = storage.sessions;
    const ids = ['x\0', 'x\uFFFD', 'x\uFFFF0', 'x\uD800', 'x\uDC00'];
    for (const [index, id] of ids.entries()) await sessions.saveEvent(id, user(index, `#${index}`));
    for (const [index, id] of ids.entries())
      expect(await sessions.loadSession(id)).toStrictEqual([user(index, `#${index}`)]);
    expect(await findIds(sessions, 'x\0')).toStrictEqual(['x\0']);
    expect(await findIds(sessions, 'x\uFFFD')).toStrictEqual(['x\uFFFD']);
    for (const id of ids) await sessions.deleteSession(id);
  });
});

describe('hostile text', () => {
  test('NUL, backslashes and wildcards in messages are stored and searched literally', async () => {
    const sessions = storage.sessions;
    const texts: [string, string][] = [
      ['t-nul', 'before\0after'],
      ['t-replacement', 'before\uFFFDafter'],
      ['t-backslash', 'C:\\temp\\%TEMP%'],
      ['t-underscore', 'snake_case'],
      ['t-quote', `O'Reilly "quoted"`],
      ['t-or', '"a" OR b*'],
      ['t-lone', 'half \uDBFF pair'],
    ];
    for (const [index, [id, text]] of texts.entries()) {
      await sessions.saveEvent(id, user(index, 'opening line'));
      await sessions.saveEvent(id, {
        timestamp: at(100 + index),
        payload: { type: 'assistant_message', status: 'complete', content: [{ type: 'text', text }] },
      });
    }
    for (const [index, [id, text]] of texts.entries()) {
      const log = await sessions.loadSession(id);
      expect(log?.[1]).toStrictEqual({
        timestamp: at(100 + index),
        payload: { type: 'assistant_message', status: 'complete', content: [{ type: 'text', text }] },
      });
    }
    expect(await findIds(sessions, 'e\0a')).toStrictEqual(['t-nul']);
    expect(await findIds(sessions, 'e\uFFFDa')).toStrictEqual(['t-replacement']);
    expect(await findIds(sessions, '\\%temp%')).toStrictEqual(['t-backslash']);
    expect(await findIds(sessions, 'e_c')).toStrictEqual(['t-underscore']);
    expect(await findIds(sessions, 'eXc')).toStrictEqual([]);
    expect(await findIds(sessions, "o'reilly")).toStrictEqual(['t-quote']);
    expect(await findIds(sessions, '"a" or b*')).toStrictEqual(['t-or']);
    expect(await findIds(sessions, '\uDBFF pa')).toStrictEqual(['t-lone']);
    expect(await findIds(sessions, '\uDBFF\uDFFF')).toStrictEqual([]);
  });

  test('a title holding NUL comes back exactly and is searched', async () => {
    const sessions = storage.sessions;
    await sessions.saveEvent('nul-title', user(0, 'title with \0 NUL'));
    const [summary] = await sessions.findSession('WITH \0 nul');
    expect(summary?.title).toBe('title with \0 NUL');
  });

  test('metadata with Dates, undefined and odd numbers round-trips', async () => {
    const value = {
      createdAt: new Date(Date.UTC(2023, 1, 2, 3, 4, 5, 999)),
      optional: undefined,
      numbers: [Number.NaN, -0, Number.POSITIVE_INFINITY, 12345678901234567890n],
      tagLike: { $youyou: 'date', ms: 1 },
      text: 'nul \0 and \uD800',
    };
    const event: SessionEvent = { timestamp: at(1), payload: { type: 'metadata', key: 'odd', value } };
    await storage.sessions.saveEvent('metadata', event);
    expect(await storage.sessions.loadSession('metadata')).toStrictEqual([event]);
  });

  test('memories with hostile ids, namespaces and content round-trip and search literally', async () => {
    const memories = storage.memories;
    const base = { createdAt: at(0), updatedAt: at(5) };
    const hostile = {
      ...base,
      id: "m'\0%_\\",
      namespace: 'ns\0"x"',
      content: 'Uses C:\\tmp 100% of the time, \0 and \uD800; snake_case',
      category: 'c\0t',
      sourceSessionId: 's\uFFFF',
    };
    await memories.save(hostile);
    await memories.save({
      ...base,
      id: 'other',
      namespace: 'ns\0"x"',
      content: 'nothing relevant',
      updatedAt: at(1),
    });
    await memories.save({ ...base, id: 'elsewhere', namespace: 'ns', content: 'snake_case' });
    expect(await memories.search('ns\0"x"', '', Number.POSITIVE_INFINITY)).toStrictEqual([
      hostile,
      expect.anything(),
    ]);
    expect((await memories.search('ns\0"x"', 'snake_case', 10)).map((memory) => memory.id)).toStrictEqual([
      hostile.id,
    ]);
    expect((await memories.search('ns\0"x"', '100%', 10)).map((memory) => memory.id)).toStrictEqual([
      hostile.id,
    ]);
    // Only words count: 'off%' looks for 'off', which no content holds ('%' is no wildcard).
    expect(await memories.search('ns\0"x"', 'off%', 10)).toStrictEqual([]);
    await memories.delete(hostile.id);
    expect((await memories.search('ns\0"x"', '', 10)).map((memory) => memory.id)).toStrictEqual(['other']);
  });
});

describe('bad input', () => {
  test('bad ids, events, limits and cursors are INVALID_INPUT', async () => {
    const sessions = storage.sessions;
    const invalid = expect.objectContaining({ code: 'INVALID_INPUT' });
    await expect(sessions.saveEvent('', user(0, 'x'))).rejects.toEqual(invalid);
    await expect(sessions.loadSession(42 as unknown as string)).rejects.toEqual(invalid);
    await expect(
      sessions.saveEvent('s', {
        timestamp: new Date(Number.NaN),
        payload: { type: 'system_message', content: 'x' },
      }),
    ).rejects.toEqual(invalid);
    await expect(
      sessions.saveEvent('s', {
        timestamp: at(0),
        payload: { type: 'nope' } as unknown as SessionEvent['payload'],
      }),
    ).rejects.toEqual(invalid);
    await expect(
      sessions.saveEvent('s', { timestamp: at(0), payload: { type: 'metadata', key: 'k', value: () => 1 } }),
    ).rejects.toEqual(invalid);
    for (const limit of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(sessions.listSessions(undefined, limit)).rejects.toEqual(invalid);
    }
    for (const cursor of ['', 'not a cursor', Buffer.from('[1,5]').toString('base64url'), 'W1sxXQ']) {
      await expect(sessions.listSessions(cursor, 5)).rejects.toEqual(invalid);
    }
    await expect(storage.memories.search('ns', '', -1)).rejects.toEqual(invalid);
    await expect(
      storage.memories.save({ id: '', namespace: 'n', content: 'c', createdAt: at(0), updatedAt: at(0) }),
    ).rejects.toEqual(invalid);
    expect(await sessions.loadSession('s')).toBeNull();
  });
});

describe('full-text search beyond the port', () => {
  test('searchRanked finds whole words, best rank first', async () => {
    const sessions = storage.sessions;
    await sessions.saveEvent('fts-1', user(0, 'the garden needs water; garden tools'));
    await sessions.saveEvent('fts-2', user(1, 'a garden'));
    await sessions.saveEvent('fts-3', user(2, 'gardening is not a whole-word match'));
    const found = await sessions.searchRanked('garden');
    expect(found.map((summary) => summary.sessionId)).toStrictEqual(['fts-1', 'fts-2']);
    expect(found[0]?.rank).toBeGreaterThan(found[1]?.rank ?? Number.POSITIVE_INFINITY);
    expect(await sessions.searchRanked('"a" OR b* \0 \\ %')).toBeInstanceOf(Array);

    const memories = storage.memories;
    const dates = { createdAt: at(0), updatedAt: at(0) };
    await memories.save({ ...dates, id: 'r1', namespace: 'fts', content: 'likes tea and tea cakes' });
    await memories.save({ ...dates, id: 'r2', namespace: 'fts', content: 'likes coffee' });
    await memories.save({ ...dates, id: 'r3', namespace: 'fts', content: 'teapot collector' });
    const ranked = await memories.searchRanked('fts', 'tea, coffee!');
    expect(ranked.map((memory) => memory.id).sort()).toStrictEqual(['r1', 'r2']);
  });
});
