import { describe, expect, test } from 'vitest';
import { AgentBuilder, type AgentError, type AgentEvent, type ToolHandler } from '../src/index.js';
import { InMemorySessionStorage } from '../src/testing/index.js';
import { RawProvider } from './support/raw-provider.js';
import { expectTurnInvariants, expectWellTypedLog } from './support/well-typed.js';

const received: unknown[] = [];
const lookup: ToolHandler = {
  name: 'lookup',
  description: 'reads a key',
  parametersSchema: { type: 'object', properties: { key: { type: 'string' } }, required: ['key'] },
  isMutating: false,
  execute: async ({ arguments: args }) => {
    received.push(args);
    return { content: `value of ${JSON.stringify(args)}`, isError: false };
  },
};

/** Runs one turn whose first model answer yields `values` as they are; the second answers plain text. */
async function turnYielding(values: readonly unknown[]) {
  received.length = 0;
  const provider = new RawProvider({ id: 'broken-llm', answers: [{ values }] });
  const storage = new InMemorySessionStorage();
  const agent = await new AgentBuilder({ defaultModel: 'scripted-model' })
    .registerModelProvider(provider)
    .registerSessionStorage(storage)
    .registerTool(lookup)
    .build();
  const session = await agent.newSession();
  const turn = await session.sendMessage('go');
  const events: AgentEvent[] = [];
  for await (const event of turn) events.push(event);
  const logged = (await storage.loadSession(session.id)) ?? [];
  await agent.shutdown();
  expectTurnInvariants(events);
  expectWellTypedLog(logged);
  // A failed turn ends its log with the record that it ended (not cut by a crash); the messages come before it.
  const saved = logged.filter(({ payload }) => payload.type !== 'metadata' || payload.key !== 'turn_ended');
  const errors = events.flatMap((event) => (event.payload.type === 'error' ? [event.payload.error] : []));
  return { events, saved, errors, provider, types: events.map((event) => event.payload.type) };
}

/** The turn failed on the bad event with one PROVIDER_ERROR naming the provider and the field. */
function expectProviderError(errors: AgentError[], field: string): void {
  expect(errors).toHaveLength(1);
  expect(errors[0]?.code).toBe('PROVIDER_ERROR');
  expect(errors[0]?.sourceComponent).toBe('provider');
  expect(errors[0]?.message).toContain("'broken-llm'");
  expect(errors[0]?.message).toContain(field);
}

const call = (fields: Record<string, unknown>) => ({
  type: 'tool_call',
  callId: 'call_1',
  toolName: 'lookup',
  arguments: '{"key":"a"}',
  ...fields,
});

describe('a malformed tool_call from a provider is a PROVIDER_ERROR naming the field, and is neither run nor saved', () => {
  test.each<[string, string, unknown]>([
    ['arguments as a number', 'arguments', call({ arguments: 42 })],
    ['arguments as null', 'arguments', call({ arguments: null })],
    ['arguments missing', 'arguments', call({ arguments: undefined })],
    ['arguments as an array', 'arguments', call({ arguments: ['a'] })],
    ['toolName null', 'toolName', call({ toolName: null })],
    ['toolName a number', 'toolName', call({ toolName: 7 })],
    ['toolName missing', 'toolName', call({ toolName: undefined })],
    ['callId missing', 'callId', call({ callId: undefined })],
    ['callId a number', 'callId', call({ callId: 1 })],
    ['callId empty', 'callId', call({ callId: '' })],
  ])('%s', async (_label, field, bad) => {
    const { errors, saved, types } = await turnYielding([{ type: 'text_delta', text: 'let me look' }, bad]);
    expectProviderError(errors, field);
    expect(types).not.toContain('tool_call_start');
    expect(types.at(-1)).toBe('turn_complete');
    expect(received).toEqual([]);
    const payloads = saved.map((event) => event.payload);
    expect(payloads.some((payload) => payload.type === 'tool_call')).toBe(false);
    // The text before the bad event is kept, as an interrupted answer.
    expect(payloads.at(-1)).toEqual({
      type: 'assistant_message',
      content: [{ type: 'text', text: 'let me look' }],
      status: 'incomplete',
    });
  });

  test('two calls with one callId in an answer cannot be paired: PROVIDER_ERROR', async () => {
    const { errors, types } = await turnYielding([call({}), call({ arguments: '{"key":"b"}' })]);
    expectProviderError(errors, 'call_1');
    expect(types).not.toContain('tool_call_start');
    expect(received).toEqual([]);
  });

  test('arguments given as an object are taken as their JSON text: the call runs and is saved well-typed', async () => {
    const { errors, saved, events } = await turnYielding([call({ arguments: { key: 'a' } })]);
    expect(errors).toEqual([]);
    expect(received).toEqual([{ key: 'a' }]);
    expect(saved.map((event) => event.payload)).toContainEqual({
      type: 'tool_call',
      callId: 'call_1',
      toolName: 'lookup',
      arguments: { key: 'a' },
    });
    expect(events.find((event) => event.payload.type === 'tool_call_start')?.payload).toMatchObject({
      arguments: { key: 'a' },
    });
  });
});

describe('ill-typed deltas and signatures are a PROVIDER_ERROR; nothing ill-typed is emitted or saved', () => {
  test.each<[string, string, unknown]>([
    ['text_delta text a number', 'text', { type: 'text_delta', text: 42 }],
    ['text_delta text an object', 'text', { type: 'text_delta', text: { value: 'hi' } }],
    ['text_delta text missing', 'text', { type: 'text_delta' }],
    ['reasoning_delta text a number', 'text', { type: 'reasoning_delta', text: 1 }],
    ['reasoning_delta text missing', 'text', { type: 'reasoning_delta' }],
    ['reasoning_signature an object', 'signature', { type: 'reasoning_signature', signature: { sig: 1 } }],
    ['reasoning_signature missing', 'signature', { type: 'reasoning_signature' }],
    ['usage without counts', 'inputTokens', { type: 'usage', usage: {} }],
    [
      'usage with a negative count',
      'outputTokens',
      { type: 'usage', usage: { inputTokens: 1, outputTokens: -1 } },
    ],
    ['usage as a string', 'usage', { type: 'usage', usage: '12 tokens' }],
    ['done with an unknown stop reason', 'stopReason', { type: 'done', stopReason: 42 }],
    [
      'done with a responseModel that is not a string',
      'responseModel',
      { type: 'done', stopReason: 'end_turn', responseModel: { id: 'gpt' } },
    ],
    ['an unknown event type', 'thinking', { type: 'thinking', text: 'hm' }],
    ['an event without a type', 'type', { text: 'hello' }],
    ['null as an event', 'null', null],
    ['a string as an event', 'a string', 'hello'],
  ])('%s', async (_label, field, bad) => {
    const { errors, events, saved } = await turnYielding([
      { type: 'reasoning_delta', text: 'thinking' },
      { type: 'text_delta', text: 'partial' },
      bad,
    ]);
    expectProviderError(errors, field);
    const deltas = events.filter((event) => event.payload.type === 'text_delta');
    expect(deltas.map((event) => event.payload)).toEqual([{ type: 'text_delta', text: 'partial' }]);
    expect(saved.at(-1)?.payload).toEqual({
      type: 'assistant_message',
      content: [
        { type: 'reasoning', text: 'thinking' },
        { type: 'text', text: 'partial' },
      ],
      status: 'incomplete',
    });
  });

  test('an event whose field throws when read is a PROVIDER_ERROR, not a crash', async () => {
    const hostile = {
      type: 'text_delta',
      get text(): string {
        throw new Error('boom');
      },
    };
    const { errors } = await turnYielding([hostile]);
    expectProviderError(errors, 'boom');
  });

  test('a provider whose chat() answers something that is not a stream is a PROVIDER_ERROR naming it', async () => {
    const storage = new InMemorySessionStorage();
    const provider = new RawProvider({ id: 'broken-llm' });
    provider.chat = (() => 42) as unknown as RawProvider['chat'];
    const agent = await new AgentBuilder({ defaultModel: 'scripted-model' })
      .registerModelProvider(provider)
      .registerSessionStorage(storage)
      .build();
    const session = await agent.newSession();
    const events: AgentEvent[] = [];
    for await (const event of await session.sendMessage('go')) events.push(event);
    expectTurnInvariants(events);
    const errors = events.flatMap((event) => (event.payload.type === 'error' ? [event.payload.error] : []));
    expectProviderError(errors, 'chat()');
    await agent.shutdown();
  });

  test('the stream of the bad event is closed, and good events before and after a well-typed answer pass', async () => {
    const { errors, provider } = await turnYielding([{ type: 'text_delta', text: 'a' }, { type: 'done' }]);
    expect(errors).toHaveLength(1);
    expect(provider.returnCalls[0]).toBe(1);
    const good = await turnYielding([
      { type: 'reasoning_delta', text: 'r' },
      { type: 'reasoning_signature', signature: 'sig' },
      { type: 'text_delta', text: '' },
      { type: 'text_delta', text: 'answer' },
      { type: 'usage', usage: { inputTokens: 3, outputTokens: 2, cachedInputTokens: 1 } },
      { type: 'done', stopReason: 'end_turn', responseModel: 'model-2026-01-01' },
    ]);
    expect(good.errors).toEqual([]);
    expect(good.saved.at(-1)?.payload).toEqual({
      type: 'assistant_message',
      content: [
        { type: 'reasoning', text: 'r', signature: 'sig' },
        { type: 'text', text: 'answer' },
      ],
      status: 'complete',
    });
  });
});
