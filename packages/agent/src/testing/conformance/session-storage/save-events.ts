import assert from 'node:assert/strict';
import { isAgentError } from '../../../kernel/error.js';
import type { SessionEvent, SessionStorage } from '../../../ports/storage.js';
import { assistantEvent, type ConformanceTest, event, listAll, userEvent } from '../support.js';

/** The code a rejected promise's AgentError carries, or 'resolved'. */
async function rejectionCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    return isAgentError(error) ? error.code : `not an AgentError: ${String(error)}`;
  }
}

/** A small log: config, a user message, a usage record, the answer, a tool call and its result. */
function turn(offsetMs: number, text: string): SessionEvent[] {
  return [
    event(offsetMs, { type: 'metadata', key: 'session_config', value: { modelId: 'm' } }),
    userEvent(offsetMs + 1, text),
    event(offsetMs + 2, { type: 'metadata', key: 'usage', value: { input: 10, output: 5 } }),
    assistantEvent(offsetMs + 3, `answer to ${text}`),
    event(offsetMs + 4, { type: 'tool_call', callId: 'c1', toolName: 'read', arguments: { path: 'a' } }),
    event(offsetMs + 5, { type: 'tool_result', callId: 'c1', content: 'text', isError: false }),
  ];
}

/**
 * saveEvents (optional in the port): a storage without it passes trivially. With it, a batch leaves exactly
 * what saving its events one by one leaves, in order, after the events already saved; a batch that cannot
 * be saved leaves nothing.
 */
export function saveEventsTests(test: ConformanceTest<SessionStorage>): void {
  test('saveEvents leaves what saveEvent one by one leaves: log, order, summary, search', async (storage) => {
    if (storage.saveEvents === undefined) return;
    const events = turn(0, 'batched needle');
    for (const item of events) await storage.saveEvent('one-by-one', item);
    await storage.saveEvents('batched', events.slice(0, 2));
    await storage.saveEvents('batched', events.slice(2, 5));
    await storage.saveEvent('batched', events[5] as SessionEvent);
    assert.deepStrictEqual(await storage.loadSession('batched'), events);
    const summaries = (await storage.listSessions(undefined, 10)).sessions;
    const batched = summaries.find((summary) => summary.sessionId === 'batched');
    const single = summaries.find((summary) => summary.sessionId === 'one-by-one');
    assert.deepStrictEqual({ ...batched, sessionId: 'x' }, { ...single, sessionId: 'x' });
    assert.equal(batched?.title, 'batched needle');
    assert.equal(batched?.messageCount, 4);
    assert.deepStrictEqual(batched?.updatedAt, events[5]?.timestamp);
    const found = (await storage.findSession('ANSWER TO batched')).map((summary) => summary.sessionId);
    assert.deepStrictEqual([...found].sort(), ['batched', 'one-by-one']);
  });

  test('saveEvents appends after the saved events, and a later batch keeps the first title', async (storage) => {
    if (storage.saveEvents === undefined) return;
    const first = turn(0, 'first title');
    const second = turn(100, 'second message');
    await storage.saveEvent('log', first[0] as SessionEvent);
    await storage.saveEvents('log', first.slice(1));
    await storage.saveEvents('log', second);
    assert.deepStrictEqual(await storage.loadSession('log'), [...first, ...second]);
    const [summary] = (await storage.listSessions(undefined, 1)).sessions;
    assert.equal(summary?.title, 'first title');
    assert.equal(summary?.messageCount, 8);
    assert.deepStrictEqual(summary?.createdAt, first[0]?.timestamp);
  });

  test('saveEvents writes all of a batch or none of it', async (storage) => {
    if (storage.saveEvents === undefined) return;
    const kept = turn(0, 'kept');
    await storage.saveEvents('all-or-none', kept);
    const badTime = { timestamp: new Date(Number.NaN), payload: { type: 'system_message', content: 'x' } };
    const badValue = event(20, { type: 'metadata', key: 'f', value: () => 1 });
    for (const broken of [
      [userEvent(10, 'left out'), badTime as SessionEvent],
      [userEvent(10, 'left out'), badValue],
      [badValue, userEvent(10, 'left out')],
    ]) {
      assert.equal(await rejectionCode(storage.saveEvents('all-or-none', broken)), 'INVALID_INPUT');
    }
    assert.equal(
      await rejectionCode(storage.saveEvents('fresh', [userEvent(0, 'left out'), badValue])),
      'INVALID_INPUT',
    );
    assert.deepStrictEqual(await storage.loadSession('all-or-none'), kept);
    assert.equal(await storage.loadSession('fresh'), null);
    assert.deepStrictEqual(await storage.findSession('left out'), []);
    assert.deepStrictEqual((await listAll(storage, 10)).ids, ['all-or-none']);
    await storage.saveEvents('all-or-none', []);
    await storage.saveEvents('empty', []);
    assert.deepStrictEqual(await storage.loadSession('all-or-none'), kept);
    assert.equal(await storage.loadSession('empty'), null);
  });

  test('concurrent saveEvents batches of one session never interleave nor lose events', async (storage) => {
    if (storage.saveEvents === undefined) return;
    const batches = Array.from({ length: 8 }, (_, index) => turn(index * 10, `writer ${index}`));
    await Promise.all(batches.map((batch) => storage.saveEvents?.('shared', batch)));
    const loaded = await storage.loadSession('shared');
    assert.equal(loaded?.length, 48);
    for (let start = 0; start < 48; start += 6) {
      const chunk = loaded?.slice(start, start + 6);
      assert.ok(
        batches.some((batch) => JSON.stringify(batch) === JSON.stringify(chunk)),
        `events ${start}..${start + 5} are one batch, in order`,
      );
    }
    const [summary] = (await storage.listSessions(undefined, 1)).sessions;
    assert.equal(summary?.messageCount, 32);
  });
}
