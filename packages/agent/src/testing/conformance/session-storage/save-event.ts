import assert from 'node:assert/strict';
import type { SessionEvent, SessionStorage } from '../../../ports/storage.js';
import { type ConformanceTest, event, listAll, userEvent } from '../support.js';

/** Runs `change`; a storage may hand out read-only payloads, and then the change throws a TypeError instead. */
function tryToChange(change: () => void): void {
  try {
    change();
  } catch (error) {
    assert.ok(error instanceof TypeError, `changing a loaded event threw ${String(error)}, not a TypeError`);
  }
}

/** saveEvent and loadSession: every payload comes back exactly, in order, whatever its size or its writers. */
export function saveEventTests(test: ConformanceTest<SessionStorage>): void {
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

  test('neither the saved object nor a loaded one is the stored log: changing them changes nothing', async (storage) => {
    const saved: SessionEvent[] = [
      userEvent(0, 'original'),
      event(1, { type: 'tool_call', callId: 'c1', toolName: 'read', arguments: { path: 'a.ts', deep: [1] } }),
      event(2, { type: 'metadata', key: 'note', value: { list: [1, { x: 'y' }] } }),
    ];
    const expected = structuredClone(saved);
    for (const item of saved) await storage.saveEvent('owned', item);
    const [user, call, note] = saved;
    if (user?.payload.type === 'user_message') user.payload.content.push({ type: 'text', text: 'added' });
    if (call?.payload.type === 'tool_call') (call.payload.arguments as { path: string }).path = 'b.ts';
    note?.timestamp.setTime(0);
    assert.deepStrictEqual(await storage.loadSession('owned'), expected);
    // A storage may hand out copies or read-only (frozen) payloads; either way the log stays as it was saved.
    const loaded = (await storage.loadSession('owned')) ?? [];
    for (const item of loaded) {
      item.timestamp.setTime(0);
      const payload = item.payload as unknown as Record<string, unknown>;
      tryToChange(() => {
        payload.type = 'system_message';
      });
      const content = payload.content;
      if (Array.isArray(content)) tryToChange(() => content.push({ type: 'text', text: 'added' }));
      const value = (payload.arguments ?? payload.value) as { path?: string; list?: unknown[] } | undefined;
      if (value === undefined) continue;
      tryToChange(() => {
        value.path = 'c.ts';
      });
      const list = value.list;
      if (list !== undefined) tryToChange(() => list.push(2));
    }
    loaded.pop();
    assert.deepStrictEqual(await storage.loadSession('owned'), expected);
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
}
