import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { AgentError, isAgentError } from '../src/kernel/error.js';
import { readChatStream } from '../src/model/model-call.js';
import type { ChatEvent, ChatPurpose, ChatRequest } from '../src/ports/model.js';
import { ScriptedModelProvider, scriptedModel } from '../src/testing/scripted-provider.js';

function request(purpose: ChatPurpose = 'turn', text = 'hi'): ChatRequest {
  return {
    modelId: 'scripted-model',
    systemPrompt: 'stable',
    systemPromptParts: { stable: 'stable', dynamic: '' },
    messages: [{ type: 'user', content: [{ type: 'text', text }] }],
    tools: [],
    purpose,
  };
}

async function collect(stream: AsyncIterable<ChatEvent>): Promise<ChatEvent[]> {
  const events: ChatEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The rejection of a promise (fails the test if it resolves). */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
    },
    (reason: unknown) => reason,
  );
}

function expectCode(error: unknown, code: string): void {
  expect(isAgentError(error), `an AgentError, got ${String(error)}`).toBe(true);
  expect(error).toMatchObject({ code });
}

afterEach(() => {
  vi.useRealTimers();
});

describe('ScriptedModelProvider', () => {
  test('maps every step to its ChatEvents', async () => {
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'reasoning', text: 'thinking', signature: 'sig' },
          { type: 'reasoning', text: 'unsigned' },
          { type: 'text', text: 'Hello' },
          { type: 'tool_call', toolName: 'read', arguments: { path: 'a.ts' } },
          { type: 'tool_call', toolName: 'raw', arguments: '{"broken": ', callId: 'mine' },
          { type: 'tool_call', toolName: 'bare' },
          { type: 'usage', usage: { inputTokens: 10, outputTokens: 5, cachedInputTokens: 2 } },
          { type: 'done', stopReason: 'max_tokens' },
        ],
      ],
    });
    expect(await collect(provider.chat(request(), new AbortController().signal))).toEqual([
      { type: 'reasoning_delta', text: 'thinking' },
      { type: 'reasoning_signature', signature: 'sig' },
      { type: 'reasoning_delta', text: 'unsigned' },
      { type: 'text_delta', text: 'Hello' },
      { type: 'tool_call', callId: 'call_1', toolName: 'read', arguments: '{"path":"a.ts"}' },
      { type: 'tool_call', callId: 'mine', toolName: 'raw', arguments: '{"broken": ' },
      { type: 'tool_call', callId: 'call_3', toolName: 'bare', arguments: '{}' },
      { type: 'usage', usage: { inputTokens: 10, outputTokens: 5, cachedInputTokens: 2 } },
      { type: 'done', stopReason: 'max_tokens' },
    ]);
  });

  test("appends 'done': tool_use after a tool call, else end_turn; call ids count across requests", async () => {
    const provider = new ScriptedModelProvider()
      .enqueue([{ type: 'text', text: 'plain' }])
      .enqueue([{ type: 'tool_call', toolName: 'a' }], [{ type: 'tool_call', toolName: 'b' }]);
    const signal = new AbortController().signal;
    expect((await collect(provider.chat(request(), signal))).at(-1)).toEqual({
      type: 'done',
      stopReason: 'end_turn',
    });
    const second = await collect(provider.chat(request(), signal));
    const third = await collect(provider.chat(request(), signal));
    expect(second).toEqual([
      { type: 'tool_call', callId: 'call_1', toolName: 'a', arguments: '{}' },
      { type: 'done', stopReason: 'tool_use' },
    ]);
    expect(third[0]).toMatchObject({ callId: 'call_2' });
  });

  test('takes from the purpose queue while it has entries, else from the default queue', async () => {
    const provider = new ScriptedModelProvider({
      responses: [[{ type: 'text', text: 'default 1' }], [{ type: 'text', text: 'default 2' }]],
      byPurpose: { compaction: [[{ type: 'text', text: 'summary' }]] },
    }).enqueueFor('memory_extraction', [{ type: 'text', text: '{"memories":[]}' }]);
    expect(provider.pending).toBe(4);
    const signal = new AbortController().signal;
    const textOf = async (purpose: ChatPurpose) =>
      (await collect(provider.chat(request(purpose), signal)))
        .map((event) => (event.type === 'text_delta' ? event.text : ''))
        .join('');
    expect(await textOf('compaction')).toBe('summary');
    expect(await textOf('turn')).toBe('default 1');
    expect(await textOf('compaction')).toBe('default 2');
    expect(await textOf('memory_extraction')).toBe('{"memories":[]}');
    expect(provider.pending).toBe(0);
    expect(provider.requests.map((item) => item.purpose)).toEqual([
      'compaction',
      'turn',
      'compaction',
      'memory_extraction',
    ]);
  });

  test('an exhausted script throws a non-retryable PROVIDER_ERROR', async () => {
    const provider = new ScriptedModelProvider();
    const error = await rejectionOf(
      collect(provider.chat(request('memory_extraction'), new AbortController().signal)),
    );
    expectCode(error, 'PROVIDER_ERROR');
    expect(error).toMatchObject({ retryable: false });
    expect((error as Error).message).toContain(
      "script exhausted: no response left for a 'memory_extraction' request",
    );
  });

  test('an error step throws its error as it is, after the events before it', async () => {
    const plain = new Error('boom');
    const agentError = new AgentError({ code: 'PROVIDER_ERROR', message: 'rate limited', retryable: true });
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'text', text: 'partial' },
          { type: 'error', error: plain },
        ],
        [{ type: 'error', error: agentError }],
      ],
    });
    const signal = new AbortController().signal;
    const seen: ChatEvent[] = [];
    const error = await rejectionOf(
      (async () => {
        for await (const event of provider.chat(request(), signal)) seen.push(event);
      })(),
    );
    expect(error).toBe(plain);
    expect(seen).toEqual([{ type: 'text_delta', text: 'partial' }]);
    expect(await rejectionOf(collect(provider.chat(request(), signal)))).toBe(agentError);
  });

  test('through readChatStream, a thrown non-AgentError becomes a PROVIDER_ERROR', async () => {
    const provider = new ScriptedModelProvider({ responses: [[{ type: 'error', error: 'socket closed' }]] });
    const error = await rejectionOf(
      readChatStream({
        provider,
        request: request(),
        signal: new AbortController().signal,
        onEvent: () => true,
      }),
    );
    expectCode(error, 'PROVIDER_ERROR');
  });

  test('hang yields nothing more until the signal aborts, then throws REQUEST_CANCELLED', async () => {
    const provider = new ScriptedModelProvider({
      responses: [[{ type: 'text', text: 'before' }, { type: 'hang' }]],
    });
    const controller = new AbortController();
    const iterator = provider.chat(request(), controller.signal)[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({ done: false, value: { type: 'text_delta', text: 'before' } });
    let settled = false;
    const next = iterator.next().finally(() => {
      settled = true;
    });
    for (let tick = 0; tick < 5; tick += 1) await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    controller.abort();
    expectCode(await rejectionOf(next), 'REQUEST_CANCELLED');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  test('delay waits for its timer and leaves no listener or timer behind', async () => {
    vi.useFakeTimers();
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'delay', ms: 5000 },
          { type: 'text', text: 'late' },
        ],
      ],
    });
    const controller = new AbortController();
    const iterator = provider.chat(request(), controller.signal)[Symbol.asyncIterator]();
    let settled = false;
    const next = iterator.next().finally(() => {
      settled = true;
    });
    await vi.advanceTimersByTimeAsync(4999);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await next).toEqual({ done: false, value: { type: 'text_delta', text: 'late' } });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  test('an abort during a delay throws REQUEST_CANCELLED and clears the timer', async () => {
    vi.useFakeTimers();
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'delay', ms: 60_000 },
          { type: 'text', text: 'never' },
        ],
      ],
    });
    const controller = new AbortController();
    const next = provider.chat(request(), controller.signal)[Symbol.asyncIterator]().next();
    await vi.advanceTimersByTimeAsync(10);
    controller.abort();
    expectCode(await rejectionOf(next), 'REQUEST_CANCELLED');
    expect(vi.getTimerCount()).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  test('stops between steps once the signal is aborted', async () => {
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
        ],
        [{ type: 'text', text: 'never' }],
      ],
    });
    const controller = new AbortController();
    const iterator = provider.chat(request(), controller.signal)[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toEqual({ type: 'text_delta', text: 'one' });
    controller.abort();
    expectCode(await rejectionOf(iterator.next()), 'REQUEST_CANCELLED');
    expectCode(await rejectionOf(collect(provider.chat(request(), controller.signal))), 'REQUEST_CANCELLED');
  });

  test('records each request as a snapshot taken when chat is called', async () => {
    const seenByScript: ChatRequest[] = [];
    const provider = new ScriptedModelProvider({
      responses: [
        (received) => {
          seenByScript.push(received);
          return [{ type: 'text', text: `you said ${received.messages.length} message(s)` }];
        },
      ],
    });
    const original = request('turn', 'first');
    const stream = provider.chat(original, new AbortController().signal);
    original.messages.push({ type: 'assistant', content: [], status: 'complete' });
    original.systemPrompt = 'changed';
    const events = await collect(stream);
    expect(events[0]).toEqual({ type: 'text_delta', text: 'you said 1 message(s)' });
    expect(provider.requests).toEqual([request('turn', 'first')]);
    expect(seenByScript).toEqual([request('turn', 'first')]);
  });

  test('defaults and scriptedModel overrides', () => {
    const provider = new ScriptedModelProvider();
    expect(provider.id).toBe('scripted');
    expect(provider.models).toEqual([
      {
        id: 'scripted-model',
        displayName: 'Scripted model',
        contextWindow: 128_000,
        capabilities: { toolUse: true, vision: true, streaming: true },
      },
    ]);
    const small = scriptedModel({
      id: 'tiny',
      contextWindow: 1000,
      capabilities: { toolUse: true, vision: false, streaming: true },
    });
    expect(small).toEqual({
      id: 'tiny',
      displayName: 'Scripted model',
      contextWindow: 1000,
      capabilities: { toolUse: true, vision: false, streaming: true },
    });
    expect(new ScriptedModelProvider({ id: 'other', models: [small] }).models).toEqual([small]);
  });

  test('replays 10,000 text steps', async () => {
    const steps = Array.from(
      { length: 10_000 },
      (_, index) => ({ type: 'text', text: `${index} ` }) as const,
    );
    const provider = new ScriptedModelProvider({ responses: [steps] });
    const events = await collect(provider.chat(request(), new AbortController().signal));
    expect(events).toHaveLength(10_001);
    expect(events[9_999]).toEqual({ type: 'text_delta', text: '9999 ' });
  });
});
