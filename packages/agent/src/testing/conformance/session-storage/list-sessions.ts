import assert from 'node:assert/strict';
import type { SessionEvent, SessionStorage, SessionSummary } from '../../../ports/storage.js';
import {
  assistantEvent,
  at,
  type ConformanceTest,
  event,
  listAll,
  newestFirst,
  userEvent,
} from '../support.js';

/** listSessions: each session's summary, and pages newest first that stay whole while sessions are added. */
export function listSessionsTests(test: ConformanceTest<SessionStorage>): void {
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
}
