import { type ChatEvent, type ChatRequest, isAgentError, type ModelProvider } from '@youyou/agent';
import { afterEach, beforeEach, expect, test } from 'vitest';
import {
  chatChunk,
  chatFinish,
  chatReasoningChunks,
  chatTextChunks,
  chatToolCallChunks,
  sseReply,
} from '../../../test-support/openai-wire.js';
import type { WireEvent } from '../../../test-support/wire-server.js';
import { startWireServer, type WireServer } from '../../../test-support/wire-server.js';
import { openaiChatProvider, openaiCompatibleProvider } from '../src/index.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await server.close();
});

type Json = Record<string, unknown>;

function chatProvider(): ModelProvider {
  return openaiChatProvider({ apiKey: 'sk-test-key-123456', baseURL: `${server.url}/v1`, maxRetries: 0 });
}

function compatibleProvider(): ModelProvider {
  return openaiCompatibleProvider({
    baseURL: `${server.url}/v1`,
    models: [
      {
        id: 'qwen3',
        displayName: 'Qwen 3',
        contextWindow: 32_768,
        capabilities: { toolUse: true, vision: false, streaming: true },
      },
    ],
    maxRetries: 0,
  });
}

function request(modelId: string, extra: Partial<ChatRequest> = {}): ChatRequest {
  return {
    modelId,
    purpose: 'turn',
    systemPrompt: 'Be brief.',
    systemPromptParts: { stable: 'Be brief.', dynamic: '' },
    messages: [{ type: 'user', content: [{ type: 'text', text: 'hi' }] }],
    tools: [],
    ...extra,
  };
}

/** Streams one answer of `events` through the provider and returns its ChatEvents. */
async function run(provider: ModelProvider, events: WireEvent[], modelId: string): Promise<ChatEvent[]> {
  server.enqueue(sseReply(events));
  const output: ChatEvent[] = [];
  for await (const event of await provider.chat(request(modelId), new AbortController().signal))
    output.push(event);
  return output;
}

test('usage: inputTokens is the whole prompt, cached and reasoning tokens are reported as its parts', async () => {
  const events = await run(
    chatProvider(),
    [
      ...chatTextChunks(['Hi']),
      ...chatFinish({ usage: { prompt: 100, completion: 30, cached: 40, reasoning: 7 } }),
    ],
    'gpt-4o',
  );
  expect(events.slice(-2)).toEqual([
    {
      type: 'usage',
      usage: { inputTokens: 100, outputTokens: 30, cachedInputTokens: 40, reasoningTokens: 7 },
    },
    { type: 'done', stopReason: 'end_turn', responseModel: 'wire-model' },
  ]);
});

test.each([
  ['length', 'max_tokens'],
  ['content_filter', 'other'],
  ['tool_calls', 'tool_use'],
])('finish reason %s is stop reason %s', async (finishReason, stopReason) => {
  const events = await run(
    chatProvider(),
    [...chatTextChunks(['x']), ...chatFinish({ finishReason })],
    'gpt-4o',
  );
  expect(events.at(-1)).toEqual({ type: 'done', stopReason, responseModel: 'wire-model' });
});

test('a server that omits usage and sends the whole tool call in one chunk', async () => {
  const events = await run(
    compatibleProvider(),
    [
      chatChunk({
        delta: {
          role: 'assistant',
          tool_calls: [
            {
              index: 0,
              id: 'call_x',
              type: 'function',
              function: { name: 'lookup', arguments: '{"q":"a"}' },
            },
          ],
        },
      }),
      // Ollama ends a tool-calling answer with `stop`.
      ...chatFinish({ finishReason: 'stop', usage: null }),
    ],
    'qwen3',
  );
  expect(events).toEqual([
    { type: 'tool_call', callId: 'call_x', toolName: 'lookup', arguments: '{"q":"a"}' },
    { type: 'done', stopReason: 'tool_use', responseModel: 'wire-model' },
  ]);
});

test('calls numbered 0 with different ids stay separate; fragments without index continue the last call', async () => {
  const events = await run(
    compatibleProvider(),
    [
      chatChunk({
        delta: { tool_calls: [{ index: 0, id: 'a', function: { name: 'one', arguments: '{}' } }] },
      }),
      chatChunk({
        delta: { tool_calls: [{ index: 0, id: 'b', function: { name: 'two', arguments: '{"k"' } }] },
      }),
      chatChunk({ delta: { tool_calls: [{ function: { arguments: ':1}' } }] } }),
      ...chatFinish({ finishReason: 'tool_calls' }),
    ],
    'qwen3',
  );
  expect(events.filter((event) => event.type === 'tool_call')).toEqual([
    { type: 'tool_call', callId: 'a', toolName: 'one', arguments: '{}' },
    { type: 'tool_call', callId: 'b', toolName: 'two', arguments: '{"k":1}' },
  ]);
});

test('three parallel calls with arguments split over many chunks are assembled by index', async () => {
  const events = await run(
    chatProvider(),
    [
      ...chatToolCallChunks([
        { id: 'c0', name: 'lookup', fragments: ['{', '"q"', ':', '"x', 'y', 'z"', '}'] },
        { id: 'c1', name: 'lookup', fragments: ['{"q":"1"}'] },
        { id: 'c2', name: 'other', fragments: [] },
      ]),
      ...chatFinish({ finishReason: 'tool_calls' }),
    ],
    'gpt-4o',
  );
  expect(events.filter((event) => event.type === 'tool_call')).toEqual([
    { type: 'tool_call', callId: 'c0', toolName: 'lookup', arguments: '{"q":"xyz"}' },
    { type: 'tool_call', callId: 'c1', toolName: 'lookup', arguments: '{"q":"1"}' },
    { type: 'tool_call', callId: 'c2', toolName: 'other', arguments: '' },
  ]);
  expect(events.at(-1)).toEqual({ type: 'done', stopReason: 'tool_use', responseModel: 'wire-model' });
});

test('reasoning under the `reasoning` field is a reasoning_delta too', async () => {
  const events = await run(
    compatibleProvider(),
    [...chatReasoningChunks(['hm'], 'reasoning'), ...chatTextChunks(['ok']), ...chatFinish()],
    'qwen3',
  );
  expect(events.slice(0, 2)).toEqual([
    { type: 'reasoning_delta', text: 'hm' },
    { type: 'text_delta', text: 'ok' },
  ]);
});

test('a stream that ends cleanly without a finish reason is a retryable error', async () => {
  server.enqueue(sseReply(chatTextChunks(['cut'])));
  const seen: ChatEvent[] = [];
  const failure = await (async () => {
    try {
      for await (const event of await chatProvider().chat(request('gpt-4o'), new AbortController().signal)) {
        seen.push(event);
      }
    } catch (error) {
      return error;
    }
    return undefined;
  })();
  expect(seen).toEqual([{ type: 'text_delta', text: 'cut' }]);
  expect(isAgentError(failure) && failure.code === 'PROVIDER_ERROR' && failure.retryable).toBe(true);
  expect(String(failure)).toMatch(/ended before the answer was finished/);
});

test('an error object inside the stream becomes a PROVIDER_ERROR', async () => {
  server.enqueue(
    sseReply([
      ...chatTextChunks(['a']),
      { data: { error: { message: 'The server is overloaded', type: 'server_error' } } },
    ]),
  );
  await expect(
    (async () => {
      for await (const _event of await chatProvider().chat(request('gpt-4o'), new AbortController().signal)) {
        // Draining.
      }
    })(),
  ).rejects.toMatchObject({
    code: 'PROVIDER_ERROR',
    retryable: true,
    message: expect.stringMatching(/overloaded/),
  });
});

test('request parameters: tools, max tokens and temperature as each server expects them', async () => {
  const tools = [
    { name: 'lookup', description: 'Looks up.', parameters: { type: 'object', properties: {} } },
  ];
  for (const [provider, modelId] of [
    [chatProvider(), 'gpt-4o'],
    [compatibleProvider(), 'qwen3'],
  ] as const) {
    server.enqueue(sseReply([...chatTextChunks(['x']), ...chatFinish()]));
    const stream = await provider.chat(
      request(modelId, { tools, maxOutputTokens: 256, temperature: 0.2 }),
      new AbortController().signal,
    );
    for await (const _event of stream) {
      // Only the request matters.
    }
  }
  const [openai, compatible] = server.requests.map((entry) => entry.body as Json);
  expect(openai).toMatchObject({ max_completion_tokens: 256, temperature: 0.2 });
  expect(openai).not.toHaveProperty('max_tokens');
  expect(compatible).toMatchObject({ max_tokens: 256, temperature: 0.2 });
  expect(compatible).not.toHaveProperty('max_completion_tokens');
  for (const body of [openai, compatible]) {
    expect(body?.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'lookup',
          description: 'Looks up.',
          parameters: { type: 'object', properties: {} },
        },
      },
    ]);
    expect(body?.stream_options).toEqual({ include_usage: true });
  }
});

test('no tools, no max tokens and no temperature are sent when the request has none', async () => {
  await run(chatProvider(), [...chatTextChunks(['x']), ...chatFinish()], 'gpt-4o');
  const body = server.requests[0]!.body as Json;
  expect(Object.keys(body).sort()).toEqual(['messages', 'model', 'stream', 'stream_options']);
});
