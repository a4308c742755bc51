import assert from 'node:assert/strict';
import type { SessionEvent, SessionEventPayload, SessionStorage } from '../../../ports/storage.js';
import { assistantEvent, type ConformanceTest, event, userEvent } from '../support.js';

/** A log with every payload type: plain objects, a message of blocks, an array and a Date inside a value. */
function varied(): SessionEvent[] {
  return [
    event(0, { type: 'metadata', key: 'session_config', value: { modelId: 'm' } }),
    userEvent(1, 'question'),
    event(2, { type: 'tool_call', callId: 'c1', toolName: 'read', arguments: { path: 'a', deep: { n: 1 } } }),
    event(3, { type: 'tool_result', callId: 'c1', content: 'text', isError: false }),
    event(4, { type: 'metadata', key: 'note', value: { list: [1, 2], at: new Date(5) } }),
    event(5, { type: 'system_message', content: 'a note' }),
    assistantEvent(6, 'answer'),
  ];
}

/**
 * Tries to change every part of a loaded payload; a part frozen read-only throws a TypeError (ES modules are
 * strict), which is allowed: either way the stored log must not change.
 */
function tamper(payload: SessionEventPayload): void {
  const attempt = (change: () => void): void => {
    try {
      change();
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
    }
  };
  const record = payload as unknown as Record<string, unknown>;
  for (const [key, value] of Object.entries(record)) {
    if (Array.isArray(value)) {
      attempt(() => value.push({ type: 'text', text: 'added' }));
      for (const item of value) {
        if (typeof item === 'object' && item !== null)
          attempt(() => Object.assign(item, { text: 'changed' }));
      }
    } else if (value instanceof Date) {
      attempt(() => value.setTime(0));
    } else if (typeof value === 'object' && value !== null) {
      attempt(() => Object.assign(value, { path: 'changed', list: 'changed' }));
    } else if (key !== 'type') {
      attempt(() => {
        record[key] = 'changed';
      });
    }
  }
}

/**
 * loadPayloads (optional in the port): a storage without it passes trivially. With it, the payloads of
 * loadSession's events in save order, null for an unknown session, and changing them never changes the log.
 */
export function loadPayloadsTests(test: ConformanceTest<SessionStorage>): void {
  test('loadPayloads answers the payloads loadSession answers, in order; null for an unknown id', async (storage) => {
    if (storage.loadPayloads === undefined) return;
    const log = varied();
    for (const item of log) await storage.saveEvent('s', item);
    const expected = log.map((item) => item.payload);
    assert.deepStrictEqual(await storage.loadPayloads('s'), expected);
    // Loaded twice, and after loadSession: what a first load prepares must not change what the next one answers.
    await storage.loadSession('s');
    assert.deepStrictEqual(await storage.loadPayloads('s'), expected);
    assert.equal(await storage.loadPayloads('unknown'), null);
  });

  test('changing the payloads loadPayloads answered never changes the log', async (storage) => {
    if (storage.loadPayloads === undefined) return;
    const log = varied();
    for (const item of log) await storage.saveEvent('s', item);
    for (let round = 0; round < 2; round++) {
      const payloads = (await storage.loadPayloads('s')) ?? [];
      for (const payload of payloads) tamper(payload);
      payloads.push({ type: 'system_message', content: 'appended' });
    }
    assert.deepStrictEqual(await storage.loadSession('s'), log);
    assert.deepStrictEqual(
      await storage.loadPayloads('s'),
      log.map((item) => item.payload),
    );
  });
}
