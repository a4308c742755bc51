import assert from 'node:assert/strict';
import type {
  Memory,
  MemoryStorage,
  SessionEvent,
  SessionEventPayload,
  SessionStorage,
  SessionSummary,
} from '../ports/storage.js';

/** The one function of a test framework the suites need (vitest's, node:test's or jest's `test`). */
export interface ConformanceTestApi {
  test: (name: string, fn: () => Promise<void>) => void;
}

/** A fresh, empty storage for one test, and how to dispose of it. */
export type StorageFactory<S> = () => Promise<{ storage: S; cleanup?: () => Promise<void> }>;

/** What `defineSessionStorageConformance` takes. */
export interface SessionStorageConformanceOptions {
  api: ConformanceTestApi;
  create: StorageFactory<SessionStorage>;
}

/** What `defineMemoryStorageConformance` takes. */
export interface MemoryStorageConformanceOptions {
  api: ConformanceTestApi;
  create: StorageFactory<MemoryStorage>;
}

/** A fixed time with milliseconds, so that a storage that drops them fails. */
const BASE_MS = Date.UTC(2024, 0, 15, 9, 30, 0, 123);

function at(offsetMs: number): Date {
  return new Date(BASE_MS + offsetMs);
}

function event(offsetMs: number, payload: SessionEventPayload): SessionEvent {
  return { timestamp: at(offsetMs), payload };
}

function userEvent(offsetMs: number, text: string): SessionEvent {
  return event(offsetMs, { type: 'user_message', content: [{ type: 'text', text }] });
}

function assistantEvent(offsetMs: number, text: string): SessionEvent {
  return event(offsetMs, {
    type: 'assistant_message',
    content: [{ type: 'text', text }],
    status: 'complete',
  });
}

/** Runs `body` against a fresh storage and always disposes of it. */
async function withStorage<S>(create: StorageFactory<S>, body: (storage: S) => Promise<void>): Promise<void> {
  const { storage, cleanup } = await create();
  try {
    await body(storage);
  } finally {
    await cleanup?.();
  }
}

/** The session ids of every page, walking the cursors to the end. */
async function listAll(storage: SessionStorage, limit: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await storage.listSessions(cursor, limit);
    pages += 1;
    assert.ok(page.sessions.length <= limit, `a page holds at most ${limit} sessions`);
    if (page.nextCursor !== null) assert.equal(page.sessions.length, limit, 'only the last page is short');
    ids.push(...page.sessions.map((session) => session.sessionId));
    cursor = page.nextCursor ?? undefined;
    assert.ok(pages <= 1000, 'listSessions never reaches a last page');
  } while (cursor !== undefined);
  return { ids, pages };
}

const findIds = async (storage: SessionStorage, query: string) =>
  (await storage.findSession(query)).map((summary) => summary.sessionId);

/** Newest first by updatedAt, ties by sessionId descending: the order listSessions must give. */
function newestFirst(sessions: { id: string; updatedMs: number }[]): string[] {
  return [...sessions]
    .sort((a, b) => b.updatedMs - a.updatedMs || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    .map((session) => session.id);
}

/** Registers the tests every SessionStorage must pass; each test gets a fresh storage from `create`. */
export function defineSessionStorageConformance(options: SessionStorageConformanceOptions): void {
  const { api, create } = options;
  const test = (name: string, body: (storage: SessionStorage) => Promise<void>) =>
    api.test(`SessionStorage: ${name}`, () => withStorage(create, body));

  test('round-trips every payload type, in order and exactly', async (storage) => {
    const image = Buffer.from('\x89PNG\r\n\x1a\n fake image bytes').toString('base64');
    const events: SessionEvent[] = [
      event(0, {
        type: 'metadata',
        key: 'session_config',
        value: {
          modelId: 'model-a',
          nested: { list: [1, 'two', { three: [true, false, null] }], empty: {}, none: [], half: -1.5 },
          unicode: 'naïve 汉字 😀',
        },
      }),
      event(1, {
        type: 'user_message',
        content: [
          { type: 'text', text: 'Hello 你好 👋🏽 مرحبا — "quotes" \\ back\nline\ttab' },
          { type: 'image', data: image, mediaType: 'image/png' },
        ],
      }),
      event(1001, {
        type: 'assistant_message',
        status: 'complete',
        content: [
          { type: 'reasoning', text: 'thinking…', signature: 'c2lnbmF0dXJl' },
          { type: 'reasoning', text: 'no signature' },
          { type: 'text', text: 'Let me look. 🔍' },
        ],
      }),
      event(1002, {
        type: 'tool_call',
        callId: 'call_1',
        toolName: 'read_file',
        arguments: { path: 'a/b.ts' },
      }),
      event(1003, { type: 'tool_call', callId: 'call_2', toolName: 'broken', arguments: '{"unclosed": ' }),
      event(1004, { type: 'tool_call', callId: 'call_3', toolName: 'noop', arguments: null }),
      event(2005, { type: 'tool_result', callId: 'call_1', content: 'file text 文件', isError: false }),
      event(2006, { type: 'tool_result', callId: 'call_2', content: 'bad JSON', isError: true }),
      event(2007, { type: 'tool_result', callId: 'call_3', content: '', isError: false }),
      event(2008, { type: 'system_message', content: 'A skill was invoked.' }),
      event(2999, { type: 'assistant_message', status: 'incomplete', content: [] }),
      event(3000, { type: 'metadata', key: 'compaction', value: { summary: 'So far…', keptMessages: 4 } }),
      event(3000, { type: 'metadata', key: 'flag', value: true }),
    ];
    for (const item of events) await storage.saveEvent('round-trip', item);
    const loaded = await storage.loadSession('round-trip');
    assert.deepStrictEqual(loaded, events);
    assert.ok(
      loaded?.every((item) => item.timestamp instanceof Date),
      'timestamps come back as Dates',
    );
  });

  test('round-trips a 2 MB tool result', async (storage) => {
    const content = 'line of output, 日本語 😀\n'.repeat(100_000);
    assert.ok(content.length > 2_000_000);
    await storage.saveEvent('big', event(0, { type: 'tool_result', callId: 'c', content, isError: false }));
    const loaded = await storage.loadSession('big');
    const payload = loaded?.[0]?.payload;
    assert.equal(payload?.type, 'tool_result');
    assert.ok(payload.content === content, 'the 2 MB content comes back unchanged');
  });

  test('an unknown id loads as null and deletes without error', async (storage) => {
    assert.equal(await storage.loadSession('missing'), null);
    await storage.deleteSession('missing');
    assert.deepStrictEqual(await storage.listSessions(undefined, 10), { sessions: [], nextCursor: null });
  });

  test('deleteSession removes the session from load, list and find', async (storage) => {
    await storage.saveEvent('keep', userEvent(0, 'keep me'));
    await storage.saveEvent('drop', userEvent(1, 'drop me'));
    await storage.deleteSession('drop');
    assert.equal(await storage.loadSession('drop'), null);
    assert.deepStrictEqual(await findIds(storage, 'drop'), []);
    assert.deepStrictEqual((await listAll(storage, 10)).ids, ['keep']);
    assert.equal((await storage.loadSession('keep'))?.length, 1);
    await storage.saveEvent('drop', userEvent(5, 'again'));
    assert.deepStrictEqual(await storage.loadSession('drop'), [userEvent(5, 'again')]);
  });

  test('summaries: title, message count, createdAt and updatedAt', async (storage) => {
    // 99 letters then an emoji: cutting 100 UTF-16 units would split the emoji's surrogate pair.
    const longText = `${'a'.repeat(99)}😀 and more text after the cut`;
    const saves: [string, SessionEvent][] = [
      ['long', event(0, { type: 'metadata', key: 'session_config', value: { modelId: 'm' } })],
      ['long', assistantEvent(10, 'an assistant message before any user message')],
      ['long', userEvent(20, longText)],
      ['long', assistantEvent(30, 'reply')],
      ['long', userEvent(40, 'a second user message is not the title')],
      ['long', event(50, { type: 'metadata', key: 'note', value: 1 })],
      [
        'blocks',
        event(100, {
          type: 'user_message',
          content: [
            { type: 'text', text: 'Hello' },
            { type: 'image', data: 'AAAA', mediaType: 'image/png' },
            { type: 'text', text: 'world' },
          ],
        }),
      ],
      ['silent', event(200, { type: 'system_message', content: 'no user message yet' })],
    ];
    for (const [sessionId, item] of saves) await storage.saveEvent(sessionId, item);
    const expected: SessionSummary[] = [
      { sessionId: 'silent', title: '', createdAt: at(200), updatedAt: at(200), messageCount: 1 },
      { sessionId: 'blocks', title: 'Hello world', createdAt: at(100), updatedAt: at(100), messageCount: 1 },
      {
        sessionId: 'long',
        title: `${'a'.repeat(99)}😀`,
        createdAt: at(0),
        updatedAt: at(50),
        messageCount: 4,
      },
    ];
    assert.deepStrictEqual((await storage.listSessions(undefined, 10)).sessions, expected);
    assert.deepStrictEqual(await storage.findSession('long'), [expected[2]]);
  });

  test('listSessions pages newest first with no duplicates or gaps', async (storage) => {
    // 23 sessions in groups of three sharing an updatedAt, saved in a scrambled order.
    const sessions = Array.from({ length: 23 }, (_, index) => ({
      id: `session-${String(index).padStart(2, '0')}`,
      updatedMs: Math.floor(index / 3) * 1000 + 500,
    }));
    for (let step = 0; step < sessions.length; step += 1) {
      const session = sessions[(step * 7) % sessions.length]!;
      await storage.saveEvent(session.id, userEvent(0, `hello from ${session.id}`));
      await storage.saveEvent(session.id, assistantEvent(session.updatedMs, 'hi'));
    }
    const expected = newestFirst(sessions);
    for (const limit of [1, 5, 7, 23, 100]) {
      const { ids, pages } = await listAll(storage, limit);
      assert.deepStrictEqual(ids, expected, `paging with limit ${limit}`);
      assert.equal(pages, Math.max(1, Math.ceil(sessions.length / limit)), `page count with limit ${limit}`);
    }
  });

  test('paging is stable when a session is added between pages', async (storage) => {
    const sessions = Array.from({ length: 12 }, (_, index) => ({ id: `s${index}`, updatedMs: index * 10 }));
    for (const session of sessions) await storage.saveEvent(session.id, userEvent(session.updatedMs, 'x'));
    const expected = newestFirst(sessions);
    const first = await storage.listSessions(undefined, 5);
    assert.deepStrictEqual(
      first.sessions.map((summary) => summary.sessionId),
      expected.slice(0, 5),
    );
    assert.ok(first.nextCursor !== null);
    await storage.saveEvent('newcomer', userEvent(10_000, 'I arrived between two pages'));
    const second = await storage.listSessions(first.nextCursor, 5);
    assert.ok(second.nextCursor !== null);
    await storage.saveEvent('latecomer', userEvent(20_000, 'me too'));
    const third = await storage.listSessions(second.nextCursor, 5);
    assert.deepStrictEqual(
      [...second.sessions, ...third.sessions].map((summary) => summary.sessionId),
      expected.slice(5),
    );
    assert.equal(third.nextCursor, null);
    assert.deepStrictEqual((await listAll(storage, 4)).ids, ['latecomer', 'newcomer', ...expected]);
  });

  test('findSession matches an id prefix, title text or message text, newest first', async (storage) => {
    await storage.saveEvent('alpha-1', userEvent(0, 'Plan the Garden party'));
    await storage.saveEvent('alpha-1', assistantEvent(1, 'Sure, let us talk about TULIPS'));
    await storage.saveEvent('beta-1', userEvent(2, 'garden hose'));
    await storage.saveEvent('alpha-2', userEvent(3, 'Fix the bug'));
    assert.deepStrictEqual(await findIds(storage, 'alpha'), ['alpha-2', 'alpha-1']);
    assert.deepStrictEqual(await findIds(storage, 'alpha-1'), ['alpha-1']);
    assert.deepStrictEqual(await findIds(storage, 'lpha'), [], 'an id matches by prefix only');
    assert.deepStrictEqual(await findIds(storage, 'garden'), ['beta-1', 'alpha-1']);
    assert.deepStrictEqual(await findIds(storage, 'GARDEN PARTY'), ['alpha-1']);
    assert.deepStrictEqual(await findIds(storage, 'tulips'), ['alpha-1'], 'assistant text is searched');
    assert.deepStrictEqual(await findIds(storage, 'nothing like this'), []);
    assert.deepStrictEqual(await findIds(storage, ''), []);
    assert.deepStrictEqual(await findIds(storage, '   '), []);
    const [summary] = await storage.findSession('beta');
    assert.deepStrictEqual(summary, {
      sessionId: 'beta-1',
      title: 'garden hose',
      createdAt: at(2),
      updatedAt: at(2),
      messageCount: 1,
    });
  });

  test('hostile text is stored and searched literally', async (storage) => {
    const texts = [
      '50% off',
      'snake_case name',
      'back\\slash C:\\temp',
      `it's "quoted"`,
      '"a" OR b*',
      'plain words here',
      "'; DROP TABLE sessions; --",
    ];
    for (const [index, text] of texts.entries()) await storage.saveEvent(`h${index}`, userEvent(index, text));
    for (const [index, text] of texts.entries()) {
      assert.deepStrictEqual(await storage.loadSession(`h${index}`), [userEvent(index, text)]);
    }
    const cases: [string, string[]][] = [
      ['%', ['h0']],
      ['_', ['h1']],
      ['\\', ['h2']],
      ['"quoted"', ['h3']],
      ['"a" OR b*', ['h4']],
      ['*', ['h4']],
      ["'", ['h6', 'h3']],
      ['DROP TABLE', ['h6']],
      ['a%b', []],
      ['sn_ke', []],
    ];
    for (const [query, expected] of cases) {
      assert.deepStrictEqual(
        await findIds(storage, query),
        expected,
        `findSession(${JSON.stringify(query)})`,
      );
    }
  });

  test('concurrent writers to different sessions lose nothing and keep each order', async (storage) => {
    const sessionIds = Array.from({ length: 8 }, (_, index) => `writer-${index}`);
    const perSession = 25;
    await Promise.all(
      sessionIds.map(async (sessionId, writer) => {
        for (let index = 0; index < perSession; index += 1) {
          await storage.saveEvent(sessionId, userEvent(index * 100 + writer, `${sessionId} #${index}`));
        }
      }),
    );
    for (const [writer, sessionId] of sessionIds.entries()) {
      const expected = Array.from({ length: perSession }, (_, index) =>
        userEvent(index * 100 + writer, `${sessionId} #${index}`),
      );
      assert.deepStrictEqual(await storage.loadSession(sessionId), expected);
    }
    assert.equal((await listAll(storage, 3)).ids.length, sessionIds.length);
  });

  // Claims are optional (storages shared by several processes make them); these run where they exist.
  test('acquireSession (when offered): a held session is refused with SESSION_BUSY until it is released', async (storage) => {
    if (storage.acquireSession === undefined) return;
    const claim = await storage.acquireSession('claimed');
    await storage.saveEvent('claimed', userEvent(0, 'written by the holder'));
    await assert.rejects(storage.acquireSession('claimed'), (error: unknown) => {
      assert.equal((error as { code?: unknown }).code, 'SESSION_BUSY');
      return true;
    });
    // Another session is not held by that claim.
    const other = await storage.acquireSession('other');
    await claim.release();
    await claim.release();
    const again = await storage.acquireSession('claimed');
    await storage.saveEvent('claimed', userEvent(1, 'written by the next holder'));
    assert.deepStrictEqual(await storage.loadSession('claimed'), [
      userEvent(0, 'written by the holder'),
      userEvent(1, 'written by the next holder'),
    ]);
    await again.release();
    await other.release();
  });
}

function memory(id: string, content: string, updatedMs: number, extra: Partial<Memory> = {}): Memory {
  return { id, namespace: 'ns', content, createdAt: at(0), updatedAt: at(updatedMs), ...extra };
}

const searchIds = async (storage: MemoryStorage, namespace: string, query: string, limit: number) =>
  (await storage.search(namespace, query, limit)).map((item) => item.id);

/** Registers the tests every MemoryStorage must pass; each test gets a fresh storage from `create`. */
export function defineMemoryStorageConformance(options: MemoryStorageConformanceOptions): void {
  const { api, create } = options;
  const test = (name: string, body: (storage: MemoryStorage) => Promise<void>) =>
    api.test(`MemoryStorage: ${name}`, () => withStorage(create, body));

  test('save round-trips a memory and upserts by id', async (storage) => {
    const first = memory('m1', 'Prefers tabs 🙂 用户喜欢绿茶 "quotes" 50% _x_ \\', 5, {
      category: 'preference',
      sourceSessionId: 'session-1',
    });
    await storage.save(first);
    assert.deepStrictEqual(await storage.search('ns', '', Number.POSITIVE_INFINITY), [first]);
    const replaced = memory('m1', 'Prefers spaces', 9);
    await storage.save(replaced);
    assert.deepStrictEqual(await storage.search('ns', '', Number.POSITIVE_INFINITY), [replaced]);
  });

  test('delete removes a memory; an unknown id is not an error', async (storage) => {
    await storage.save(memory('m1', 'one', 1));
    await storage.save(memory('m2', 'two', 2));
    await storage.delete('m1');
    await storage.delete('missing');
    assert.deepStrictEqual(await searchIds(storage, 'ns', '', 10), ['m2']);
  });

  test('namespaces are isolated', async (storage) => {
    await storage.save(memory('a1', 'shared word', 1, { namespace: 'a' }));
    await storage.save(memory('b1', 'shared word', 2, { namespace: 'b' }));
    assert.deepStrictEqual(await searchIds(storage, 'a', '', 10), ['a1']);
    assert.deepStrictEqual(await searchIds(storage, 'b', 'shared', 10), ['b1']);
    assert.deepStrictEqual(await searchIds(storage, 'c', '', Number.POSITIVE_INFINITY), []);
  });

  test("search '' lists most recently updated first", async (storage) => {
    const updated = [30, 10, 50, 20, 40];
    for (const [index, updatedMs] of updated.entries()) {
      // createdAt runs the other way, so ordering by it would fail.
      await storage.save(memory(`m${index}`, `memory ${index}`, updatedMs, { createdAt: at(-updatedMs) }));
    }
    assert.deepStrictEqual(await searchIds(storage, 'ns', '', 10), ['m2', 'm4', 'm0', 'm3', 'm1']);
  });

  test('search by words ranks more matched words first, then most recent', async (storage) => {
    await storage.save(memory('both', 'The user writes TypeScript and wants tests', 10));
    await storage.save(memory('none', 'Prefers tabs', 50));
    await storage.save(memory('tests', 'Runs tests nightly', 30));
    await storage.save(memory('three', 'typescript strict mode, tests and coverage reports', 0));
    await storage.save(memory('ts', 'TypeScript only', 20));
    await storage.save(memory('cafe', 'Likes café au lait', 5));
    await storage.save(memory('cafeteria', 'Eats at the cafeteria', 6));
    await storage.save(memory('tea', '用户喜欢绿茶', 7));
    const query = (text: string) => searchIds(storage, 'ns', text, 10);
    assert.deepStrictEqual(await query('TypeScript tests coverage'), ['three', 'both', 'tests', 'ts']);
    assert.deepStrictEqual(await query('typescript, TESTS!'), ['both', 'three', 'tests', 'ts']);
    assert.deepStrictEqual(await query('café?'), ['cafe'], 'words are split Unicode-aware');
    assert.deepStrictEqual(await query('绿茶'), ['tea'], 'a word is found inside unspaced text');
    assert.deepStrictEqual(await query('nothing matches'), []);
  });

  test('search respects limit; Infinity returns the whole namespace', async (storage) => {
    for (let index = 0; index < 6; index += 1)
      await storage.save(memory(`m${index}`, `note ${index}`, index));
    await storage.save(memory('other', 'note elsewhere', 99, { namespace: 'other' }));
    assert.deepStrictEqual(await searchIds(storage, 'ns', '', 2), ['m5', 'm4']);
    assert.deepStrictEqual(await searchIds(storage, 'ns', 'note', 1), ['m5']);
    assert.deepStrictEqual(await searchIds(storage, 'ns', '', 0), []);
    assert.deepStrictEqual(await searchIds(storage, 'ns', '', Number.POSITIVE_INFINITY), [
      'm5',
      'm4',
      'm3',
      'm2',
      'm1',
      'm0',
    ]);
    assert.equal((await storage.search('ns', 'note', Number.POSITIVE_INFINITY)).length, 6);
  });
}
