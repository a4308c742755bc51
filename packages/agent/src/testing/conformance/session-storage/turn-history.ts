import assert from 'node:assert/strict';
import type { SessionEvent, SessionStorage } from '../../../ports/storage.js';
import { assistantEvent, type ConformanceTest, event } from '../support.js';

/**
 * What rewinds and forks need of a storage: the turn ids that mark where turns begin, the rewind and fork
 * records, and a session written from another's history that lives on its own.
 */
export function turnHistoryTests(test: ConformanceTest<SessionStorage>): void {
  test('keeps the turn id of a user or system message, and rewind and fork records, exactly', async (storage) => {
    const events: SessionEvent[] = [
      event(0, { type: 'metadata', key: 'session_config', value: { modelId: 'model-a' } }),
      event(1, { type: 'system_message', content: 'A skill was invoked.', turnId: 'turn-1' }),
      event(2, { type: 'user_message', content: [{ type: 'text', text: 'first' }], turnId: 'turn-1' }),
      assistantEvent(3, 'one'),
      event(4, { type: 'user_message', content: [{ type: 'text', text: 'steered, no turn id' }] }),
      event(5, { type: 'user_message', content: [{ type: 'text', text: 'second' }], turnId: 'turn-2' }),
      event(6, { type: 'metadata', key: 'rewind', value: { toTurnId: 'turn-2' } }),
      event(7, { type: 'metadata', key: 'fork', value: { sessionId: 'the-fork', atTurnId: 'turn-1' } }),
      event(8, { type: 'metadata', key: 'forked_from', value: { sessionId: 'the-source' } }),
    ];
    for (const item of events) await storage.saveEvent('turns', item);
    assert.deepStrictEqual(await storage.loadSession('turns'), events);
  });

  test('a session written from another one’s history is its own: appending to or deleting either leaves the other', async (storage) => {
    const history: SessionEvent[] = [
      event(0, { type: 'metadata', key: 'session_config', value: { modelId: 'model-a' } }),
      event(1, { type: 'user_message', content: [{ type: 'text', text: 'shared start' }], turnId: 't1' }),
      assistantEvent(2, 'shared answer'),
    ];
    for (const item of history) await storage.saveEvent('source', item);
    const copied = (await storage.loadSession('source')) ?? [];
    const link = event(3, { type: 'metadata', key: 'forked_from', value: { sessionId: 'source' } });
    for (const item of [...copied, link]) await storage.saveEvent('copy', item);
    const sourceLink = event(4, { type: 'metadata', key: 'fork', value: { sessionId: 'copy' } });
    await storage.saveEvent('source', sourceLink);
    const onlyInCopy = event(5, { type: 'user_message', content: [{ type: 'text', text: 'only the copy' }] });
    await storage.saveEvent('copy', onlyInCopy);

    assert.deepStrictEqual(await storage.loadSession('source'), [...history, sourceLink]);
    assert.deepStrictEqual(await storage.loadSession('copy'), [...history, link, onlyInCopy]);
    const found = (await storage.findSession('only the copy')).map((summary) => summary.sessionId);
    assert.deepStrictEqual(found, ['copy']);
    await storage.deleteSession('copy');
    assert.equal(await storage.loadSession('copy'), null);
    assert.deepStrictEqual(await storage.loadSession('source'), [...history, sourceLink]);
  });
}
