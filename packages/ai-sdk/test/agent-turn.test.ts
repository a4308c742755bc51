import { APICallError, type LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { type AgentError, type AgentEventPayload, type ToolHandler, templates } from '@youyou/agent';
import { MockLanguageModelV3 } from 'ai/test';
import { afterEach, describe, expect, test } from 'vitest';
import { aiSdkProvider } from '../src/index.js';
import {
  buildAgent,
  finish,
  MODEL_ID,
  mockModel,
  modelInfo,
  runTurn,
  SYSTEM_INSTRUCTION,
  shutdownAgents,
  textParts,
} from './support.js';

afterEach(shutdownAgents);

const lookup: ToolHandler = {
  name: 'lookup',
  description: 'Looks up the weather of a city.',
  parametersSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  isMutating: false,
  execute: async (input) => {
    const { city } = input.arguments as { city: string };
    return city === 'Rome'
      ? { content: 'no data for Rome', isError: true }
      : { content: `sunny in ${city}`, isError: false };
  },
};

function errorOf(payloads: AgentEventPayload[]): AgentError {
  const event = payloads.find((payload) => payload.type === 'error');
  if (event?.type !== 'error') throw new Error('no error event');
  return event.error;
}

describe('an Agent turn over an AI SDK model', () => {
  test('plain text streams as text deltas and becomes the assistant message', async () => {
    const model = mockModel([[...textParts('Hel', 'lo'), finish('stop')]]);
    const agent = await buildAgent(aiSdkProvider({ id: 'ai-sdk', models: [{ model, info: modelInfo() }] }));
    const session = await agent.newSession();

    expect(await runTurn(session, 'hi')).toEqual([
      { type: 'text_delta', text: 'Hel' },
      { type: 'text_delta', text: 'lo' },
      expect.objectContaining({ type: 'usage', purpose: 'turn', providerId: 'ai-sdk' }),
      expect.objectContaining({ type: 'turn_complete' }),
    ]);
    expect(session.messages().at(-1)).toEqual({
      type: 'assistant',
      content: [{ type: 'text', text: 'Hello' }],
      status: 'complete',
    });
    const call = model.doStreamCalls[0];
    expect(call?.prompt[0]).toEqual({ role: 'system', content: expect.stringContaining(SYSTEM_INSTRUCTION) });
    expect(call?.prompt.slice(1)).toEqual([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]);
    expect(call?.tools).toBeUndefined();
    expect(call?.abortSignal).toBeInstanceOf(AbortSignal);
  });

  test('reasoning keeps its signature and is replayed with it on the next turn', async () => {
    const reasoning: LanguageModelV3StreamPart[] = [
      { type: 'reasoning-start', id: 'r1' },
      { type: 'reasoning-delta', id: 'r1', delta: 'Let me think.' },
      // The AI SDK's Anthropic provider sends the signature as an empty delta with metadata.
      {
        type: 'reasoning-delta',
        id: 'r1',
        delta: '',
        providerMetadata: { anthropic: { signature: 'sig-abc' } },
      },
      { type: 'reasoning-end', id: 'r1' },
    ];
    const model = mockModel(
      [
        [...reasoning, ...textParts('42'), finish('stop')],
        [...textParts('ok'), finish('stop')],
      ],
      'anthropic.messages',
    );
    const agent = await buildAgent(aiSdkProvider({ id: 'ai-sdk', models: [{ model, info: modelInfo() }] }));
    const session = await agent.newSession();

    expect(await runTurn(session, 'question')).toEqual([
      { type: 'reasoning_delta', text: 'Let me think.' },
      { type: 'text_delta', text: '42' },
      expect.objectContaining({ type: 'usage' }),
      expect.objectContaining({ type: 'turn_complete' }),
    ]);
    expect(session.messages().at(-1)).toEqual({
      type: 'assistant',
      content: [
        { type: 'reasoning', text: 'Let me think.', signature: 'sig-abc' },
        { type: 'text', text: '42' },
      ],
      status: 'complete',
    });

    await runTurn(session, 'next');
    expect(model.doStreamCalls[1]?.prompt.slice(1, 3)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'question' }] },
      {
        role: 'assistant',
        content: [
          {
            type: 'reasoning',
            text: 'Let me think.',
            providerOptions: { youyou: { signature: 'sig-abc' }, anthropic: { signature: 'sig-abc' } },
          },
          { type: 'text', text: '42' },
        ],
      },
    ]);
  });

  test('two tool calls in one answer run, and the next request pairs each call with its result', async () => {
    const calls: LanguageModelV3StreamPart[] = [
      { type: 'tool-input-start', id: 'call-1', toolName: 'lookup' },
      { type: 'tool-input-delta', id: 'call-1', delta: '{"city":' },
      { type: 'tool-input-delta', id: 'call-1', delta: '"Paris"}' },
      { type: 'tool-input-end', id: 'call-1' },
      { type: 'tool-call', toolCallId: 'call-1', toolName: 'lookup', input: '{"city":"Paris"}' },
      { type: 'tool-call', toolCallId: 'call-2', toolName: 'lookup', input: '{"city":"Rome"}' },
    ];
    const model = mockModel([
      [...textParts('Checking.'), ...calls, finish('tool-calls')],
      [...textParts('Done.'), finish('stop')],
    ]);
    const agent = await buildAgent(aiSdkProvider({ id: 'ai-sdk', models: [{ model, info: modelInfo() }] }), [
      lookup,
    ]);
    const session = await agent.newSession();

    const payloads = await runTurn(session, 'weather?');
    expect(payloads.map((payload) => payload.type)).toEqual([
      'text_delta',
      'usage',
      'tool_call_start',
      'tool_call_start',
      'tool_call_end',
      'tool_call_end',
      'text_delta',
      'usage',
      'turn_complete',
    ]);
    expect(payloads[2]).toEqual({
      type: 'tool_call_start',
      callId: 'call-1',
      toolName: 'lookup',
      arguments: { city: 'Paris' },
    });

    expect(model.doStreamCalls[0]?.tools).toEqual([
      {
        type: 'function',
        name: 'lookup',
        description: 'Looks up the weather of a city.',
        inputSchema: lookup.parametersSchema,
      },
    ]);
    expect(model.doStreamCalls).toHaveLength(2);
    expect(model.doStreamCalls[1]?.prompt.slice(1)).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'weather?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool-call', toolCallId: 'call-1', toolName: 'lookup', input: { city: 'Paris' } },
          { type: 'tool-call', toolCallId: 'call-2', toolName: 'lookup', input: { city: 'Rome' } },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'call-1',
            toolName: 'lookup',
            output: { type: 'text', value: 'sunny in Paris' },
          },
          {
            type: 'tool-result',
            toolCallId: 'call-2',
            toolName: 'lookup',
            output: { type: 'error-text', value: 'no data for Rome' },
          },
        ],
      },
    ]);
  });

  test('an error part mid-stream ends the turn with error PROVIDER_ERROR, then turn_complete', async () => {
    const model = mockModel([
      [...textParts('Par'), { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }],
    ]);
    const agent = await buildAgent(aiSdkProvider({ id: 'ai-sdk', models: [{ model, info: modelInfo() }] }));
    const session = await agent.newSession();

    const payloads = await runTurn(session, 'hi');
    expect(payloads.map((payload) => payload.type)).toEqual(['text_delta', 'error', 'turn_complete']);
    const error = errorOf(payloads);
    expect(error.code).toBe('PROVIDER_ERROR');
    expect(error.message).toContain('Overloaded');
    // Output had already arrived, so the adapter did not retry.
    expect(model.doStreamCalls).toHaveLength(1);
    expect(session.messages().slice(-2)).toEqual([
      { type: 'assistant', content: [{ type: 'text', text: 'Par' }], status: 'incomplete' },
      { type: 'system', content: templates.INTERRUPTED_MESSAGE_NOTICE },
    ]);
  });

  test.each([
    { status: 429, isRetryable: true, retryable: true },
    { status: 400, isRetryable: false, retryable: false },
  ])(
    'an APICallError $status from doStream is an error event with retryable $retryable',
    async (scenario) => {
      const model = new MockLanguageModelV3({
        modelId: MODEL_ID,
        doStream: async () => {
          throw new APICallError({
            message: `HTTP ${scenario.status}`,
            url: 'http://127.0.0.1/v1/chat',
            requestBodyValues: {},
            statusCode: scenario.status,
            isRetryable: scenario.isRetryable,
          });
        },
      });
      const provider = aiSdkProvider({ id: 'ai-sdk', models: [{ model, info: modelInfo() }], maxRetries: 0 });
      const agent = await buildAgent(provider);
      const session = await agent.newSession();

      const payloads = await runTurn(session, 'hi');
      expect(payloads.map((payload) => payload.type)).toEqual(['error', 'turn_complete']);
      const error = errorOf(payloads);
      expect(error.code).toBe('PROVIDER_ERROR');
      expect(error.retryable).toBe(scenario.retryable);
      expect(error.contextLengthExceeded).toBe(false);
      expect(error.message).toContain(`HTTP ${scenario.status}`);
    },
  );

  test('an image in the user input becomes a file part with its media type and base64 data', async () => {
    const model = mockModel([[...textParts('A cat.'), finish('stop')]]);
    const agent = await buildAgent(aiSdkProvider({ id: 'ai-sdk', models: [{ model, info: modelInfo() }] }));
    const session = await agent.newSession();

    await runTurn(session, {
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image', data: 'iVBORw0KGgo=', mediaType: 'image/png' },
      ],
    });
    expect(model.doStreamCalls[0]?.prompt.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'file', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
      ],
    });
  });

  test('cancelling mid-stream aborts the signal the model got and cancels its stream', async () => {
    let sourceCancelled!: () => void;
    const cancelled = new Promise<void>((resolve) => {
      sourceCancelled = resolve;
    });
    const model = new MockLanguageModelV3({
      modelId: MODEL_ID,
      // A model that ignores its abortSignal: the stream stays open after the first delta.
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            controller.enqueue({ type: 'text-start', id: 't' });
            controller.enqueue({ type: 'text-delta', id: 't', delta: 'Hel' });
          },
          cancel() {
            sourceCancelled();
          },
        }),
      }),
    });
    const agent = await buildAgent(aiSdkProvider({ id: 'ai-sdk', models: [{ model, info: modelInfo() }] }));
    const session = await agent.newSession();

    const turn = await session.sendMessage('hi');
    const payloads: AgentEventPayload[] = [];
    for await (const event of turn) {
      payloads.push(event.payload);
      if (event.payload.type === 'text_delta') turn.cancel();
    }
    await cancelled;
    expect(payloads).toEqual([{ type: 'text_delta', text: 'Hel' }, { type: 'turn_cancelled' }]);
    expect(model.doStreamCalls[0]?.abortSignal?.aborted).toBe(true);
    expect(session.messages().at(-2)).toEqual({
      type: 'assistant',
      content: [{ type: 'text', text: 'Hel' }],
      status: 'incomplete',
    });
  });
});
