import { isAgentError, type SessionEvent } from '@youyou/agent';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { eventId, MAX_EVENTS_PER_SESSION, MAX_SESSION_KEY } from '../src/event-keys.js';
import { openSqliteStorage, type SqliteStorage } from '../src/index.js';
import { makeTempFolder, type TempFolder } from './support/temp-folder.js';

const BASE_MS = Date.UTC(2024, 4, 1, 12, 0, 0, 789);

function user(offsetMs: number, text: string): SessionEvent {
  return {
    timestamp: new Date(BASE_MS + offsetMs),
    payload: { type: 'user_message', content: [{ type: 'text', text }] },
  };
}

function assistant(offsetMs: number, text: string): SessionEvent {
  return {
    timestamp: new Date(BASE_MS + offsetMs),
    payload: { type: 'assistant_message', content: [{ type: 'text', text }], status: 'complete' },
  };
}

function metadata(offsetMs: number, key: string, value: unknown): SessionEvent {
  return { timestamp: new Date(BASE_MS + offsetMs), payload: { type: 'metadata', key, value } };
}

/** The code of the AgentError a promise rejects with. */
async function rejectionCode(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!isAgentError(error)) throw new Error(`expected an AgentError rejection, got ${String(error)}`);
  return error.code;
}

let folder: TempFolder;
let storage: SqliteStorage;

beforeEach(async () => {
  folder = await makeTempFolder();
  storage = await openSqliteStorage(folder.file('agent.db'));
});

afterEach(async () => {
  await storage.close();
  await folder.remove();
});

const ids = async (query: string) =>
  (await storage.sessions.findSession(query)).map((summary) => summary.sessionId);

describe('events round-trip exactly', () => {
  test('Dates and other values JSON cannot hold come back as they were saved', async () => {
    const value = {
      when: new Date(BASE_MS + 1),
      list: [
        new Date(BASE_MS + 2),
        undefined,
        Number.NaN,
        Number.POSITIVE_INFINITY,
        Number.NEGATIVE_INFINITY,
        -0,
      ],
      nested: { deeper: { at: new Date(BASE_MS + 3) }, big: 12345678901234567890n },
      missing: undefined,
      invalidDate: new Date(Number.NaN),
      // Objects that look like the codec's own tags must stay plain objects.
      $youyou: 'date',
      lookalike: { $youyou: 'date', ms: 5 },
      ['__proto__']: { polluted: true },
    };
    const event = metadata(0, 'tricky', value);
    await storage.sessions.saveEvent('codec', event);
    const [loaded] = (await storage.sessions.loadSession('codec')) ?? [];
    expect(loaded).toStrictEqual(event);
    const loadedValue =
      loaded?.payload.type === 'metadata' ? (loaded.payload.value as Record<string, unknown>) : {};
    expect(loadedValue.when).toBeInstanceOf(Date);
    expect(Object.getPrototypeOf(loadedValue)).toBe(Object.prototype);
    expect(Object.hasOwn(loadedValue, '__proto__')).toBe(true);
    expect(Object.is((loadedValue.list as unknown[])[5], -0)).toBe(true);
  });

  test('plain JSON payloads are stored as plain JSON, untagged', async () => {
    await storage.sessions.saveEvent('plain', user(0, 'hello'));
    const row = storage.database.prepare('SELECT payload, tagged FROM events').get() as {
      payload: string;
      tagged: number;
    };
    expect(row).toEqual({ payload: JSON.stringify(user(0, 'hello').payload), tagged: 0 });
    const timestamp = storage.database.prepare('SELECT timestamp FROM events').pluck().get();
    expect(timestamp).toBe(BASE_MS);
  });

  test('values that cannot be stored faithfully are INVALID_INPUT and nothing is written', async () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const value of [
      { f: () => 1 },
      new Map([[1, 2]]),
      { nested: [new Set([1])] },
      cyclic,
      Symbol('s'),
    ]) {
      expect(await rejectionCode(storage.sessions.saveEvent('bad', metadata(0, 'v', value)))).toBe(
        'INVALID_INPUT',
      );
    }
    expect(await storage.sessions.loadSession('bad')).toBeNull();
  });

  test('saveEvents writes a batch in one transaction: all or nothing', async () => {
    const batch = [metadata(0, 'session_config', { modelId: 'm' }), user(1, 'first'), assistant(2, 'second')];
    await storage.sessions.saveEvents('batch', batch);
    expect(await storage.sessions.loadSession('batch')).toStrictEqual(batch);
    const [summary] = (await storage.sessions.listSessions(undefined, 1)).sessions;
    expect(summary).toEqual({
      sessionId: 'batch',
      title: 'first',
      createdAt: new Date(BASE_MS),
      updatedAt: new Date(BASE_MS + 2),
      messageCount: 2,
    });
    const broken = [
      user(3, 'kept out'),
      { timestamp: new Date(Number.NaN), payload: { type: 'system_message', content: 'x' } },
    ];
    expect(await rejectionCode(storage.sessions.saveEvents('batch', broken as SessionEvent[]))).toBe(
      'INVALID_INPUT',
    );
    expect(
      await rejectionCode(storage.sessions.saveEvents('batch', [user(4, 'ok'), metadata(5, 'f', () => 1)])),
    ).toBe('INVALID_INPUT');
    expect(await storage.sessions.loadSession('batch')).toStrictEqual(batch);
    await storage.sessions.saveEvents('batch', []);
    expect(await storage.sessions.loadSession('batch')).toHaveLength(3);
  });
});

describe('hostile ids and text are stored and searched literally', () => {
  const hostileIds = [
    `it's "quoted"`,
    '50%_off',
    '"a" OR b*',
    'nul\0inside',
    'NEAR(a b)',
    '汉字会话',
    ' spaced ',
  ];

  test('session ids', async () => {
    for (const [index, sessionId] of hostileIds.entries()) {
      await storage.sessions.saveEvent(sessionId, user(index, `text of ${index}`));
    }
    for (const [index, sessionId] of hostileIds.entries()) {
      expect(await storage.sessions.loadSession(sessionId)).toStrictEqual([user(index, `text of ${index}`)]);
    }
    expect(await ids(`it's`)).toEqual([`it's "quoted"`]);
    expect(await ids('50%')).toEqual(['50%_off']);
    expect(await ids('5_')).toEqual([]);
    expect(await ids('"a" or')).toEqual(['"a" OR b*']);
    expect(await ids('nul\0')).toEqual(['nul\0inside']);
    expect(await ids('nul')).toEqual(['nul\0inside']);
    expect(await ids('汉')).toEqual(['汉字会话']);
    expect(await ids('near(')).toEqual(['NEAR(a b)']);
    expect((await storage.sessions.listSessions(undefined, 100)).sessions).toHaveLength(hostileIds.length);
    for (const sessionId of hostileIds) await storage.sessions.deleteSession(sessionId);
    expect((await storage.sessions.listSessions(undefined, 100)).sessions).toEqual([]);
  });

  test('message text with NUL, FTS syntax, CJK and short needles, indexed or not yet', async () => {
    const texts = [
      'before\0after',
      '"a" OR b*',
      'col:value NEAR(x y) AND NOT z',
      '他喜欢喝绿茶',
      'x',
      'ÉCOLE ÀÉÎ',
      'ab\0',
    ];
    for (const [index, text] of texts.entries())
      await storage.sessions.saveEvent(`t${index}`, user(index, text));
    const cases: [string, string[]][] = [
      ['e\0a', ['t0']],
      ['\0', ['t6', 't0']],
      ['b\0', ['t6']],
      ['"a" or b*', ['t1']],
      ['b*', ['t1']],
      ['a" or', ['t1']],
      ['col:value', ['t2']],
      ['near(x y) and not', ['t2']],
      ['绿', ['t3']],
      ['绿茶', ['t3']],
      ['喜欢喝', ['t3']],
      ['喝茶', []],
      ['x', ['t4', 't2']],
      // Case is folded the way JavaScript folds it, beyond ASCII.
      ['école', ['t5']],
      ['àéî', ['t5']],
    ];
    const answers = async () => Promise.all(cases.map(async ([query]) => [query, await ids(query)]));
    // First while the messages wait for the indexer (found by scan), then from the full-text index.
    expect(await answers()).toEqual(cases);
    expect(await storage.sessions.flushSearchIndex()).toBe(texts.length);
    expect(await answers()).toEqual(cases);
    // Only user and assistant text is searched.
    await storage.sessions.saveEvent('tools', {
      timestamp: new Date(BASE_MS),
      payload: { type: 'tool_result', callId: 'c', content: 'hidden needle', isError: false },
    });
    expect(await ids('hidden')).toEqual([]);
    // The index entries go with their session.
    const count = (sql: string) => storage.database.prepare(sql).pluck().get();
    expect(count(`SELECT count(*) FROM search_texts_fts WHERE search_texts_fts MATCH '"col:v"'`)).toBe(1);
    for (const [index] of texts.entries()) await storage.sessions.deleteSession(`t${index}`);
    expect(count('SELECT count(*) FROM search_texts')).toBe(0);
    expect(count(`SELECT count(*) FROM search_texts_fts WHERE search_texts_fts MATCH '"col:v"'`)).toBe(0);
  });

  test('memory ids, namespaces and contents', async () => {
    const at = new Date(BASE_MS);
    const contents = ['likes "a" OR b* syntax', 'nul\0byte here', '50% of _under_ cases', 'prefers 绿茶 tea'];
    for (const [index, content] of contents.entries()) {
      await storage.memories.save({
        id: `m"${index}'\0`,
        namespace: `ns%_"\0`,
        content,
        createdAt: at,
        updatedAt: new Date(BASE_MS + index),
      });
    }
    const search = async (query: string) =>
      (await storage.memories.search(`ns%_"\0`, query, Number.POSITIVE_INFINITY)).map(
        (memory) => memory.content,
      );
    expect(await search('syntax')).toEqual([contents[0]]);
    expect(await search('"a" OR b*')).toEqual([contents[0], contents[3], contents[2], contents[1]]);
    expect(await search('byte')).toEqual([contents[1]]);
    expect(await search('under')).toEqual([contents[2]]);
    expect(await search('绿')).toEqual([contents[3]]);
    expect(await search('%')).toEqual([...contents].reverse());
    expect(await storage.memories.search('ns%_', '', 10)).toEqual([]);
    await storage.memories.delete(`m"0'\0`);
    expect(await search('syntax')).toEqual([]);
  });
});

describe('arguments', () => {
  test('bad ids, limits and cursors are INVALID_INPUT', async () => {
    const sessions = storage.sessions;
    const memories = storage.memories;
    const bad = sessions as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    expect(await rejectionCode(sessions.saveEvent('', user(0, 'x')))).toBe('INVALID_INPUT');
    expect(await rejectionCode(bad.saveEvent?.(42, user(0, 'x')) ?? Promise.resolve())).toBe('INVALID_INPUT');
    expect(await rejectionCode(sessions.loadSession(''))).toBe('INVALID_INPUT');
    expect(await rejectionCode(sessions.deleteSession(''))).toBe('INVALID_INPUT');
    for (const limit of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(await rejectionCode(sessions.listSessions(undefined, limit))).toBe('INVALID_INPUT');
    }
    for (const cursor of [
      'garbage',
      '',
      'eyJ1cGRhdGVkQXQiOjF9',
      Buffer.from('{"updatedAt":"1","sessionId":"a"}').toString('base64url'),
    ]) {
      expect(await rejectionCode(sessions.listSessions(cursor, 5))).toBe('INVALID_INPUT');
    }
    expect(await rejectionCode(bad.findSession?.(undefined) ?? Promise.resolve())).toBe('INVALID_INPUT');
    for (const limit of [-1, 2.5, Number.NaN]) {
      expect(await rejectionCode(memories.search('ns', '', limit))).toBe('INVALID_INPUT');
    }
    const memory = { id: '', namespace: 'ns', content: 'c', createdAt: new Date(), updatedAt: new Date() };
    expect(await rejectionCode(memories.save(memory))).toBe('INVALID_INPUT');
  });

  test('a closed storage rejects every call with STORAGE_ERROR', async () => {
    await storage.sessions.saveEvent('s', user(0, 'x'));
    await storage.close();
    await storage.close();
    expect(await rejectionCode(storage.sessions.loadSession('s'))).toBe('STORAGE_ERROR');
    expect(await rejectionCode(storage.sessions.saveEvent('s', user(1, 'y')))).toBe('STORAGE_ERROR');
    expect(await rejectionCode(storage.memories.search('ns', '', 1))).toBe('STORAGE_ERROR');
  });

  test('calls made without awaiting run in call order', async () => {
    const saves = Array.from({ length: 50 }, (_, index) =>
      storage.sessions.saveEvent('order', user(index, `#${index}`)),
    );
    const loaded = storage.sessions.loadSession('order');
    await Promise.all(saves);
    expect(await loaded).toHaveLength(50);
  });
});

describe('several connections on one file', () => {
  test('two connections appending to the same session keep every event, in order, and a right summary', async () => {
    const other = await openSqliteStorage(folder.file('agent.db'));
    try {
      const expected: SessionEvent[] = [];
      for (let index = 0; index < 20; index += 1) {
        // Alternate, and sometimes repeat a timestamp, so each connection's idea of the session is stale.
        const event = user(Math.floor(index / 3), `turn ${index}`);
        expected.push(event);
        await (index % 2 === 0 ? storage : other).sessions.saveEvent('shared', event);
      }
      expect(await storage.sessions.loadSession('shared')).toStrictEqual(expected);
      expect(await other.sessions.loadSession('shared')).toStrictEqual(expected);
      expect((await other.sessions.listSessions(undefined, 5)).sessions).toEqual([
        {
          sessionId: 'shared',
          title: 'turn 0',
          createdAt: new Date(BASE_MS),
          updatedAt: new Date(BASE_MS + 6),
          messageCount: 20,
        },
      ]);
      // One deletes and starts the session again; the other's memory of it must not be trusted.
      await other.sessions.deleteSession('shared');
      await other.sessions.saveEvent('shared', user(100, 'a new start'));
      await storage.sessions.saveEvent('shared', assistant(101, 'and a reply'));
      expect(await storage.sessions.loadSession('shared')).toStrictEqual([
        user(100, 'a new start'),
        assistant(101, 'and a reply'),
      ]);
      const [summary] = (await storage.sessions.listSessions(undefined, 5)).sessions;
      expect(summary).toEqual({
        sessionId: 'shared',
        title: 'a new start',
        createdAt: new Date(BASE_MS + 100),
        updatedAt: new Date(BASE_MS + 101),
        messageCount: 2,
      });
    } finally {
      await other.close();
    }
  });

  test('two connections appending batches to one session: one summary update per batch keeps every count right', async () => {
    const other = await openSqliteStorage(folder.file('agent.db'));
    try {
      const expected: SessionEvent[] = [];
      for (let index = 0; index < 12; index += 1) {
        // Batches of 1 to 3 events, the first starting the session with metadata and its title in the middle.
        const batch = [
          metadata(index * 10, 'usage', { input: index }),
          ...(index % 3 === 2 ? [] : [user(index * 10 + 1, `turn ${index}`)]),
          ...(index % 2 === 0 ? [assistant(index * 10 + 2, `answer ${index}`)] : []),
        ];
        expected.push(...batch);
        await (index % 2 === 0 ? storage : other).sessions.saveEvents('batched', batch);
      }
      const last = expected.at(-1)?.timestamp;
      expect(await storage.sessions.loadSession('batched')).toStrictEqual(expected);
      expect(await other.sessions.loadSession('batched')).toStrictEqual(expected);
      const messages = expected.filter((event) => event.payload.type !== 'metadata').length;
      expect((await other.sessions.listSessions(undefined, 5)).sessions).toEqual([
        {
          sessionId: 'batched',
          title: 'turn 0',
          createdAt: new Date(BASE_MS),
          updatedAt: last,
          messageCount: messages,
        },
      ]);
      // A single event after the batches lands right after them.
      await storage.sessions.saveEvent('batched', user(500, 'after'));
      expect((await other.sessions.loadSession('batched'))?.length).toBe(expected.length + 1);
    } finally {
      await other.close();
    }
  });

  test('event ids stay safe integers: the limits of a session and of the file are STORAGE_ERRORs', () => {
    expect(
      Number.isSafeInteger(
        eventId({ sessionKey: MAX_SESSION_KEY, sequence: MAX_EVENTS_PER_SESSION, sessionId: 's' }),
      ),
    ).toBe(true);
    expect(() => eventId({ sessionKey: 1, sequence: MAX_EVENTS_PER_SESSION + 1, sessionId: 's' })).toThrow(
      /most events a session can/,
    );
    expect(() => eventId({ sessionKey: MAX_SESSION_KEY + 1, sequence: 1, sessionId: 's' })).toThrow(
      /too many sessions/,
    );
  });
});
