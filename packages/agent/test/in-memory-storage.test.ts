import { createHook } from 'node:async_hooks';
import { describe, expect, test } from 'vitest';
import { AgentBuilder } from '../src/index.js';
import { isAgentError } from '../src/kernel/error.js';
import type { Memory, SessionEvent } from '../src/ports/storage.js';
import { InMemoryMemoryStorage, InMemorySessionStorage } from '../src/storage/in-memory.js';
import {
  defineMemoryStorageConformance,
  defineSessionStorageConformance,
} from '../src/testing/storage-conformance.js';

describe('InMemorySessionStorage conformance', () => {
  defineSessionStorageConformance({
    api: { test },
    create: async () => ({ storage: new InMemorySessionStorage() }),
    agent: ({ storage, provider }) =>
      new AgentBuilder({ defaultModel: 'scripted-model' })
        .registerModelProvider(provider)
        .registerSessionStorage(storage)
        .build(),
  });
});

describe('InMemoryMemoryStorage conformance', () => {
  defineMemoryStorageConformance({
    api: { test },
    create: async () => ({ storage: new InMemoryMemoryStorage() }),
  });
});

function userEvent(text: string, timestamp = new Date(1_700_000_000_000)): SessionEvent {
  return { timestamp, payload: { type: 'user_message', content: [{ type: 'text', text }] } };
}

async function expectInvalidInput(promise: Promise<unknown>): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(isAgentError(error), 'rejects with an AgentError').toBe(true);
  expect(error).toMatchObject({ code: 'INVALID_INPUT' });
}

describe('InMemorySessionStorage', () => {
  test('a saved event is a copy: mutating the original changes nothing stored', async () => {
    const storage = new InMemorySessionStorage();
    const event = userEvent('original');
    await storage.saveEvent('s', event);
    if (event.payload.type === 'user_message') event.payload.content.push({ type: 'text', text: 'added' });
    event.timestamp.setFullYear(1999);
    expect(await storage.loadSession('s')).toEqual([userEvent('original')]);
  });

  test('a loaded payload of plain objects is read-only: changing it throws and leaves the log as it was', async () => {
    const storage = new InMemorySessionStorage();
    const call: SessionEvent = {
      timestamp: new Date(1_700_000_000_001),
      payload: {
        type: 'tool_call',
        callId: 'c1',
        toolName: 'read',
        arguments: { path: 'a.ts', deep: { n: 1 } },
      },
    };
    const result: SessionEvent = {
      timestamp: new Date(1_700_000_000_002),
      payload: { type: 'tool_result', callId: 'c1', content: 'text', isError: false },
    };
    await storage.saveEvent('s', call);
    await storage.saveEvent('s', result);
    const loaded = await storage.loadSession('s');
    const [first, second] = loaded ?? [];
    if (first?.payload.type !== 'tool_call' || second?.payload.type !== 'tool_result') {
      throw new Error('the log did not come back in order');
    }
    const args = first.payload.arguments as { path: string; deep: { n: number } };
    const resultPayload = second.payload;
    // Test files are ES modules, so strict mode: a write to a frozen object throws.
    expect(() => {
      args.path = '/etc/passwd';
    }).toThrow(TypeError);
    expect(() => {
      args.deep.n = 2;
    }).toThrow(TypeError);
    expect(() => {
      resultPayload.content = 'changed';
    }).toThrow(TypeError);
    expect(() => {
      first.payload.type = 'system_message';
    }).toThrow(TypeError);
    // The event objects, their Dates and the array are the caller's own.
    first.timestamp.setFullYear(1999);
    second.payload = { type: 'system_message', content: 'replaced' };
    loaded?.push(userEvent('extra'));
    expect(await storage.loadSession('s')).toEqual([call, result]);
  });

  test('a loaded message has its own payload object and content array, around read-only blocks', async () => {
    const storage = new InMemorySessionStorage();
    const saved: SessionEvent = {
      timestamp: new Date(1_700_000_000_000),
      payload: {
        type: 'assistant_message',
        content: [
          { type: 'reasoning', text: 'think' },
          { type: 'text', text: 'answer' },
        ],
        status: 'complete',
      },
    };
    await storage.saveEvent('s', saved);
    for (let load = 0; load < 2; load++) {
      const [loaded] = (await storage.loadSession('s')) ?? [];
      if (loaded?.payload.type !== 'assistant_message') throw new Error('the message did not come back');
      const message = loaded.payload;
      const block = message.content[1] as { type: 'text'; text: string };
      // Test files are ES modules, so strict mode: a write to a frozen block throws.
      expect(() => {
        block.text = 'changed';
      }).toThrow(TypeError);
      // The payload object and the array are this load's own: changing them is allowed and changes nothing saved.
      message.content.push({ type: 'text', text: 'added' });
      message.content[0] = { type: 'text', text: 'replaced' };
      message.status = 'incomplete';
    }
    expect(await storage.loadSession('s')).toEqual([saved]);
    // A block that is not flat (an object inside it) is copied on every load instead, and stays changeable.
    await storage.saveEvent('nested', {
      timestamp: new Date(1_700_000_000_000),
      payload: { type: 'user_message', content: [{ type: 'text', text: 'hi', extra: { n: 1 } } as never] },
    });
    const [nested] = (await storage.loadSession('nested')) ?? [];
    if (nested === undefined) throw new Error('the nested message did not come back');
    const nestedBlock = (nested.payload as unknown as { content: { text: string; extra: { n: number } }[] })
      .content[0];
    if (nestedBlock === undefined) throw new Error('the nested block did not come back');
    nestedBlock.text = 'changed';
    nestedBlock.extra.n = 2;
    const [again] = (await storage.loadSession('nested')) ?? [];
    expect((again?.payload as { content: unknown[] } | undefined)?.content).toEqual([
      { type: 'text', text: 'hi', extra: { n: 1 } },
    ]);
  });

  test('a loaded payload holding an array or a Date is a copy: changing it leaves the log as it was', async () => {
    const storage = new InMemorySessionStorage();
    const at = new Date(1_600_000_000_000);
    await storage.saveEvent('s', userEvent('original'));
    await storage.saveEvent('s', {
      timestamp: new Date(1_700_000_000_000),
      payload: { type: 'metadata', key: 'note', value: { at, list: [1] } },
    });
    const [message, note] = (await storage.loadSession('s')) ?? [];
    if (message?.payload.type === 'user_message')
      message.payload.content[0] = { type: 'text', text: 'changed' };
    const value =
      note?.payload.type === 'metadata' ? (note.payload.value as { at: Date; list: number[] }) : undefined;
    value?.at.setFullYear(1999);
    value?.list.push(2);
    expect(await storage.loadSession('s')).toEqual([
      userEvent('original'),
      {
        timestamp: new Date(1_700_000_000_000),
        payload: { type: 'metadata', key: 'note', value: { at, list: [1] } },
      },
    ]);
  });

  test('findSession finds messages saved after an earlier search, and earlier ones still', async () => {
    const storage = new InMemorySessionStorage();
    await storage.saveEvent('s', userEvent('Alpha question'));
    expect((await storage.findSession('alpha')).map((summary) => summary.sessionId)).toEqual(['s']);
    expect(await storage.findSession('beta')).toEqual([]);
    await storage.saveEvent('s', userEvent('Beta follow-up'));
    await storage.saveEvent('t', userEvent('Gamma'));
    expect((await storage.findSession('beta')).map((summary) => summary.sessionId)).toEqual(['s']);
    expect((await storage.findSession('alpha')).map((summary) => summary.sessionId)).toEqual(['s']);
    expect((await storage.findSession('follow')).map((summary) => summary.sessionId)).toEqual(['s']);
  });

  test('rejects a limit that is not an integer of at least 1', async () => {
    const storage = new InMemorySessionStorage();
    await storage.saveEvent('s', userEvent('hi'));
    for (const limit of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expectInvalidInput(storage.listSessions(undefined, limit));
    }
  });

  test('rejects a malformed cursor', async () => {
    const storage = new InMemorySessionStorage();
    await storage.saveEvent('a', userEvent('hi'));
    await storage.saveEvent('b', userEvent('hi'));
    const { nextCursor } = await storage.listSessions(undefined, 1);
    expect(nextCursor).not.toBeNull();
    const notOurs = Buffer.from(JSON.stringify({ updatedAt: 'soon', sessionId: 'a' })).toString('base64url');
    for (const cursor of ['', 'not a cursor!', `${nextCursor}!`, notOurs, 'e30']) {
      await expectInvalidInput(storage.listSessions(cursor, 1));
    }
    expect((await storage.listSessions(nextCursor ?? undefined, 1)).sessions).toHaveLength(1);
  });

  test('rejects an empty or non-string session id', async () => {
    const storage = new InMemorySessionStorage();
    await expectInvalidInput(storage.saveEvent('', userEvent('hi')));
    await expectInvalidInput(storage.saveEvent(42 as unknown as string, userEvent('hi')));
    await expectInvalidInput(storage.loadSession(''));
    await expectInvalidInput(storage.deleteSession(''));
  });

  test('rejects an event without a valid Date timestamp or a known payload type', async () => {
    const storage = new InMemorySessionStorage();
    const bad = [
      { timestamp: '2024-01-01', payload: { type: 'system_message', content: 'x' } },
      { timestamp: new Date(Number.NaN), payload: { type: 'system_message', content: 'x' } },
      { timestamp: new Date(), payload: { type: 'telepathy' } },
      { timestamp: new Date() },
      { timestamp: new Date(), payload: { type: 'user_message', content: 'not an array' } },
      { timestamp: new Date(), payload: { type: 'metadata', key: 'k', value: () => 1 } },
    ];
    for (const event of bad)
      await expectInvalidInput(storage.saveEvent('s', event as unknown as SessionEvent));
    expect(await storage.loadSession('s')).toBeNull();
  });

  test('a long log comes back whole and in order, by loadSession and loadPayloads, loaded once or again', async () => {
    const storage = new InMemorySessionStorage();
    const saved: SessionEvent[] = [];
    for (let index = 0; index < 1_000; index++) {
      // Times out of order: a log keeps each event's own.
      const timestamp = new Date(1_700_000_000_000 + ((index * 7_919) % 1_000) * 1_000);
      const payloads: SessionEvent['payload'][] = [
        { type: 'user_message', content: [{ type: 'text', text: `question ${index}` }] },
        { type: 'tool_call', callId: `c${index}`, toolName: 'read', arguments: { n: index } },
        { type: 'tool_result', callId: `c${index}`, content: `result ${index}`, isError: false },
        { type: 'metadata', key: 'note', value: { list: [index] } },
      ];
      saved.push({ timestamp, payload: payloads[index % payloads.length] as SessionEvent['payload'] });
      await storage.saveEvent('long', saved[index] as SessionEvent);
    }
    expect(await storage.loadPayloads('long')).toEqual(saved.map((event) => event.payload));
    expect(await storage.loadSession('long')).toEqual(saved);
    expect(await storage.loadPayloads('long')).toEqual(saved.map((event) => event.payload));
    const [summary] = (await storage.listSessions(undefined, 1)).sessions;
    expect(summary?.messageCount).toBe(750);
    expect(summary?.updatedAt).toEqual(saved.at(-1)?.timestamp);
  });

  test('saveEvent never throws: bad input rejects, and a good save resolves once stored', async () => {
    const storage = new InMemorySessionStorage();
    let rejected: Promise<void> | undefined;
    expect(() => {
      rejected = storage.saveEvent('', userEvent('no id'));
    }).not.toThrow();
    await expectInvalidInput(rejected as Promise<void>);
    const first = storage.saveEvent('s', userEvent('one'));
    const second = storage.saveEvent('s', userEvent('two'));
    await expect(Promise.all([first, second])).resolves.toEqual([undefined, undefined]);
    expect((await storage.loadPayloads('s'))?.length).toBe(2);
  });

  test('saving works for a host whose async_hooks watch every promise (the shared settled promise takes their mark)', async () => {
    const storage = new InMemorySessionStorage();
    const hook = createHook({
      init: () => undefined,
      before: () => undefined,
      after: () => undefined,
    }).enable();
    try {
      await storage.saveEvent('hooked', userEvent('one'));
      await storage.saveEvent('hooked', userEvent('two'));
    } finally {
      hook.disable();
    }
    expect((await storage.loadPayloads('hooked'))?.length).toBe(2);
  });

  test('appending to an older session moves it to the front', async () => {
    const storage = new InMemorySessionStorage();
    await storage.saveEvent('old', userEvent('first', new Date(1000)));
    await storage.saveEvent('new', userEvent('second', new Date(2000)));
    await storage.saveEvent('old', userEvent('again', new Date(3000)));
    const page = await storage.listSessions(undefined, 10);
    expect(page.sessions.map((summary) => summary.sessionId)).toEqual(['old', 'new']);
    expect(page.sessions[0]).toMatchObject({ title: 'first', messageCount: 2, updatedAt: new Date(3000) });
  });
});

function memory(id: string, content: string, updatedMs: number): Memory {
  return { id, namespace: 'ns', content, createdAt: new Date(0), updatedAt: new Date(updatedMs) };
}

describe('InMemoryMemoryStorage', () => {
  test('saved and returned memories are copies', async () => {
    const storage = new InMemoryMemoryStorage();
    const original = memory('m', 'original', 1);
    await storage.save(original);
    original.content = 'changed';
    const [found] = await storage.search('ns', '', 10);
    expect(found?.content).toBe('original');
    if (found) found.content = 'changed again';
    expect((await storage.search('ns', '', 10))[0]?.content).toBe('original');
  });

  test('a query of punctuation only lists most recent first, like an empty one', async () => {
    const storage = new InMemoryMemoryStorage();
    await storage.save(memory('a', 'alpha', 1));
    await storage.save(memory('b', 'beta', 2));
    expect((await storage.search('ns', ' ?! ', 10)).map((item) => item.id)).toEqual(['b', 'a']);
  });

  test('rejects a bad limit or memory', async () => {
    const storage = new InMemoryMemoryStorage();
    for (const limit of [-1, 1.5, Number.NaN, Number.NEGATIVE_INFINITY]) {
      await expectInvalidInput(storage.search('ns', '', limit));
    }
    await expectInvalidInput(storage.save({ ...memory('', 'x', 1) }));
    await expectInvalidInput(storage.save({ ...memory('m', 'x', 1), updatedAt: new Date(Number.NaN) }));
    await expectInvalidInput(storage.save({ ...memory('m', 'x', 1), content: 5 as unknown as string }));
  });
});
