import type { LanguageModelV2, LanguageModelV2StreamPart, LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { isAgentError } from '@youyou/agent';
import { simulateReadableStream } from 'ai';
import { describe, expect, test } from 'vitest';
import { type AiSdkProviderOptions, aiSdkProvider } from '../src/index.js';
import { chatRequest, collect, finish, MODEL_ID, mockModel, modelInfo, textParts } from './support.js';

const request = chatRequest([{ type: 'user', content: [{ type: 'text', text: 'hi' }] }]);

async function eventsFor(parts: LanguageModelV3StreamPart[]) {
  const model = mockModel([parts]);
  return collect(aiSdkProvider({ id: 'ai-sdk', models: [{ model, info: modelInfo() }] }), request);
}

describe('usage and stop reasons', () => {
  test('usage: inputTokens is the whole prompt, cache reads and writes and reasoning tokens are reported as parts', async () => {
    const events = await eventsFor([
      ...textParts('ok'),
      finish('stop', {
        input: 1000,
        noCache: 200,
        cacheRead: 700,
        cacheWrite: 100,
        output: 50,
        text: 30,
        reasoning: 20,
      }),
    ]);
    expect(events.slice(-2)).toEqual([
      {
        type: 'usage',
        usage: {
          inputTokens: 1000,
          cachedInputTokens: 700,
          cacheWriteTokens: 100,
          outputTokens: 50,
          reasoningTokens: 20,
        },
      },
      { type: 'done', stopReason: 'end_turn', responseModel: MODEL_ID },
    ]);
  });

  test('usage without a total is built from its parts; usage with no counts is not reported', async () => {
    const partial = await eventsFor([finish('stop', { noCache: 40, cacheWrite: 10, text: 7, reasoning: 3 })]);
    expect(partial[0]).toEqual({
      type: 'usage',
      usage: { inputTokens: 50, cacheWriteTokens: 10, outputTokens: 10, reasoningTokens: 3 },
    });

    const none = await eventsFor([finish('stop', {})]);
    expect(none).toEqual([{ type: 'done', stopReason: 'end_turn' }]);
  });

  test.each([
    ['stop', 'end_turn'],
    ['tool-calls', 'tool_use'],
    ['length', 'max_tokens'],
    ['content-filter', 'other'],
    ['other', 'other'],
  ] as const)('finish reason %s → %s', async (reason, stopReason) => {
    const events = await eventsFor([finish(reason)]);
    expect(events.at(-1)).toEqual({ type: 'done', stopReason });
  });

  test('the last response-metadata modelId is the responseModel; an ill-typed one is dropped', async () => {
    const named = await eventsFor([
      { type: 'response-metadata', id: 'r', modelId: 'first' },
      { type: 'response-metadata', id: 'r', modelId: 'mock-model-v2' },
      finish('stop', {}),
    ]);
    expect(named).toEqual([{ type: 'done', stopReason: 'end_turn', responseModel: 'mock-model-v2' }]);
    const junk = await eventsFor([
      { type: 'response-metadata', id: 'r', modelId: 42 as unknown as string },
      finish('stop', {}),
    ]);
    expect(junk).toEqual([{ type: 'done', stopReason: 'end_turn' }]);
  });

  test('a stream that closes without a finish part still ends with done', async () => {
    expect(await eventsFor(textParts('ok'))).toEqual([
      { type: 'text_delta', text: 'ok' },
      { type: 'done', stopReason: 'other', responseModel: MODEL_ID },
    ]);
  });
});

describe('tool calls and reasoning in the stream', () => {
  test('streamed tool input becomes a tool_call when no tool-call part arrives', async () => {
    const events = await eventsFor([
      { type: 'tool-input-start', id: 'c1', toolName: 'lookup' },
      { type: 'tool-input-delta', id: 'c1', delta: '{"ci' },
      { type: 'tool-input-delta', id: 'c1', delta: 'ty":"Oslo"}' },
      { type: 'tool-input-end', id: 'c1' },
      { type: 'tool-input-start', id: 'c2', toolName: 'lookup' },
      { type: 'tool-input-delta', id: 'c2', delta: '{"city":"Bergen"}' },
      { type: 'tool-call', toolCallId: 'c2', toolName: 'lookup', input: '{"city":"Bergen"}' },
      finish('tool-calls', {}),
    ]);
    expect(events).toEqual([
      { type: 'tool_call', callId: 'c2', toolName: 'lookup', arguments: '{"city":"Bergen"}' },
      { type: 'tool_call', callId: 'c1', toolName: 'lookup', arguments: '{"city":"Oslo"}' },
      { type: 'done', stopReason: 'tool_use' },
    ]);
  });

  test('tool calls the provider ran itself are not passed on', async () => {
    const events = await eventsFor([
      { type: 'tool-input-start', id: 'w1', toolName: 'web_search', providerExecuted: true },
      { type: 'tool-call', toolCallId: 'w1', toolName: 'web_search', input: '{}', providerExecuted: true },
      { type: 'tool-result', toolCallId: 'w1', toolName: 'web_search', result: { hits: 0 } },
      ...textParts('nothing found'),
      finish('stop', {}),
    ]);
    expect(events).toEqual([
      { type: 'text_delta', text: 'nothing found' },
      { type: 'done', stopReason: 'end_turn', responseModel: MODEL_ID },
    ]);
  });

  test('a signature on reasoning-end (any provider key) closes the block; unsigned reasoning gets none', async () => {
    const events = await eventsFor([
      { type: 'reasoning-start', id: 'r1' },
      { type: 'reasoning-delta', id: 'r1', delta: 'one' },
      { type: 'reasoning-end', id: 'r1', providerMetadata: { vendor: { signature: 'sig-1' } } },
      { type: 'reasoning-start', id: 'r2' },
      { type: 'reasoning-delta', id: 'r2', delta: 'two' },
      { type: 'reasoning-end', id: 'r2', providerMetadata: { vendor: { itemId: 'x' } } },
      finish('stop', {}),
    ]);
    expect(events).toEqual([
      { type: 'reasoning_delta', text: 'one' },
      { type: 'reasoning_signature', signature: 'sig-1' },
      { type: 'reasoning_delta', text: 'two' },
      { type: 'done', stopReason: 'end_turn' },
    ]);
  });
});

describe('AI SDK V2 models', () => {
  test('a V2 model streams, with its flat usage and string finish reason mapped', async () => {
    const calls: unknown[] = [];
    const chunks: LanguageModelV2StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'old but fine' },
      { type: 'text-end', id: 't' },
      {
        type: 'finish',
        finishReason: 'length',
        usage: {
          inputTokens: 120,
          outputTokens: 30,
          totalTokens: 150,
          cachedInputTokens: 100,
          reasoningTokens: 5,
        },
      },
    ];
    const model: LanguageModelV2 = {
      specificationVersion: 'v2',
      provider: 'legacy.chat',
      modelId: MODEL_ID,
      supportedUrls: {},
      doGenerate: async () => {
        throw new Error('not used');
      },
      doStream: async (options) => {
        calls.push(options);
        return { stream: simulateReadableStream({ chunks, initialDelayInMs: null, chunkDelayInMs: null }) };
      },
    };
    const events = await collect(
      aiSdkProvider({ id: 'legacy', models: [{ model, info: modelInfo() }] }),
      request,
    );
    expect(events).toEqual([
      { type: 'text_delta', text: 'old but fine' },
      {
        type: 'usage',
        usage: { inputTokens: 120, cachedInputTokens: 100, outputTokens: 30, reasoningTokens: 5 },
      },
      { type: 'done', stopReason: 'max_tokens' },
    ]);
    expect(calls).toHaveLength(1);
  });
});

describe('options', () => {
  const model = mockModel([]);
  test.each([
    { name: 'an empty id', options: { id: ' ', models: [{ model, info: modelInfo() }] } },
    { name: 'no models', options: { id: 'p', models: [] } },
    { name: 'a model without doStream', options: { id: 'p', models: [{ model: {}, info: modelInfo() }] } },
    {
      name: 'info without an id',
      options: { id: 'p', models: [{ model, info: { ...modelInfo(), id: '' } }] },
    },
    {
      name: 'info without a context window',
      options: { id: 'p', models: [{ model, info: { ...modelInfo(), contextWindow: undefined } }] },
    },
    {
      name: 'info without capabilities',
      options: { id: 'p', models: [{ model, info: { ...modelInfo(), capabilities: undefined } }] },
    },
    {
      name: 'a model id listed twice',
      options: {
        id: 'p',
        models: [
          { model, info: modelInfo() },
          { model, info: modelInfo() },
        ],
      },
    },
    {
      name: 'negative retries',
      options: { id: 'p', models: [{ model, info: modelInfo() }], maxRetries: -1 },
    },
  ])('$name → INVALID_CONFIG', ({ options }) => {
    let thrown: unknown;
    try {
      aiSdkProvider(options as unknown as AiSdkProviderOptions);
    } catch (error) {
      thrown = error;
    }
    expect(isAgentError(thrown) && thrown.code).toBe('INVALID_CONFIG');
  });

  test('the provider lists its models, and a request for another model is MODEL_NOT_SUPPORTED', () => {
    const provider = aiSdkProvider({ id: 'p', models: [{ model, info: modelInfo() }] });
    expect(provider.id).toBe('p');
    expect(provider.models).toEqual([modelInfo()]);
    expect(() => provider.chat({ ...request, modelId: 'other' }, new AbortController().signal)).toThrow(
      expect.objectContaining({ code: 'MODEL_NOT_SUPPORTED' }),
    );
  });
});
