import type { ChatEvent, ChatRequest, ModelProvider } from '@youyou/agent';
import { afterEach, beforeEach, expect, test } from 'vitest';
import {
  responseObject,
  responsesCompleted,
  responsesEvent,
  responsesFunctionCall,
  responsesOpening,
  responsesReasoning,
  responsesText,
  sseReply,
} from '../../../test-support/openai-wire.js';
import type { WireEvent } from '../../../test-support/wire-server.js';
import { startWireServer, type WireServer } from '../../../test-support/wire-server.js';
import { openaiResponsesProvider } from '../src/index.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await server.close();
});

type Json = Record<string, unknown>;

function provider(extra: Parameters<typeof openaiResponsesProvider>[0] = {}): ModelProvider {
  return openaiResponsesProvider({
    apiKey: 'sk-test-key-123456',
    baseURL: `${server.url}/v1`,
    maxRetries: 0,
    ...extra,
  });
}

function request(extra: Partial<ChatRequest> = {}): ChatRequest {
  return {
    modelId: 'o4-mini',
    purpose: 'turn',
    systemPrompt: 'Be brief.',
    systemPromptParts: { stable: 'Be brief.', dynamic: '' },
    messages: [{ type: 'user', content: [{ type: 'text', text: 'hi' }] }],
    tools: [],
    ...extra,
  };
}

/** Streams one answer of `events` and returns its ChatEvents, or the error it ended with. */
async function run(
  events: WireEvent[],
  options: { provider?: ModelProvider; request?: ChatRequest } = {},
): Promise<{ events: ChatEvent[]; error: unknown }> {
  server.enqueue(sseReply(events));
  const output: ChatEvent[] = [];
  try {
    const stream = await (options.provider ?? provider()).chat(
      options.request ?? request(),
      new AbortController().signal,
    );
    for await (const event of stream) output.push(event);
  } catch (error) {
    return { events: output, error };
  }
  return { events: output, error: undefined };
}

test('usage: inputTokens is the whole prompt, cached and reasoning tokens are reported as its parts', async () => {
  const { events } = await run([
    ...responsesOpening(),
    ...responsesText(['Hi']),
    responsesCompleted({ usage: { prompt: 1000, completion: 80, cached: 900, reasoning: 64 } }),
  ]);
  expect(events).toEqual([
    { type: 'text_delta', text: 'Hi' },
    {
      type: 'usage',
      usage: { inputTokens: 1000, outputTokens: 80, cachedInputTokens: 900, reasoningTokens: 64 },
    },
    { type: 'done', stopReason: 'end_turn', responseModel: 'wire-model' },
  ]);
});

test('an incomplete response stopped by max_output_tokens ends with max_tokens', async () => {
  const { events } = await run([
    ...responsesOpening(),
    ...responsesText(['Trunc']),
    responsesCompleted({ incompleteReason: 'max_output_tokens' }),
  ]);
  expect(events.at(-1)).toEqual({ type: 'done', stopReason: 'max_tokens', responseModel: 'wire-model' });
});

test('a reasoning item streams its summary; its encrypted content closes the block as a signature', async () => {
  const { events } = await run([
    ...responsesOpening(),
    ...responsesReasoning({ summary: [['a', 'b']], encryptedContent: 'ENC', itemId: 'rs_9' }),
    ...responsesReasoning({ summary: [['plain']], itemId: 'rs_10', outputIndex: 1 }),
    ...responsesFunctionCall(
      { id: 'call_9', name: 'lookup', fragments: ['{"q"', ':"z"}'] },
      { outputIndex: 2 },
    ),
    responsesCompleted(),
  ]);
  expect(events).toEqual([
    { type: 'reasoning_delta', text: 'a' },
    { type: 'reasoning_delta', text: 'b' },
    {
      type: 'reasoning_signature',
      signature: JSON.stringify({
        id: 'rs_9',
        encrypted_content: 'ENC',
        summary: [{ type: 'summary_text', text: 'ab' }],
      }),
    },
    // Without encrypted content there is nothing to send back, so no signature.
    { type: 'reasoning_delta', text: 'plain' },
    { type: 'tool_call', callId: 'call_9', toolName: 'lookup', arguments: '{"q":"z"}' },
    { type: 'usage', usage: { inputTokens: 20, outputTokens: 5, cachedInputTokens: 0, reasoningTokens: 0 } },
    { type: 'done', stopReason: 'tool_use', responseModel: 'wire-model' },
  ]);
});

test('a function call whose item never reports done is still emitted once the response completes', async () => {
  const call = responsesFunctionCall({ id: 'call_z', name: 'lookup', fragments: ['{"q":', '"w"}'] });
  const { events } = await run([...responsesOpening(), ...call.slice(0, 3), responsesCompleted()]);
  expect(events.filter((event) => event.type === 'tool_call')).toEqual([
    { type: 'tool_call', callId: 'call_z', toolName: 'lookup', arguments: '{"q":"w"}' },
  ]);
  expect(events.at(-1)).toEqual({ type: 'done', stopReason: 'tool_use', responseModel: 'wire-model' });
});

test('response.failed is a PROVIDER_ERROR; a server error is retryable', async () => {
  const { events, error } = await run([
    ...responsesOpening(),
    ...responsesText(['par']).slice(0, 3),
    responsesEvent('response.failed', {
      response: responseObject({
        status: 'failed',
        error: { code: 'server_error', message: 'The server had an error' },
      }),
    }),
  ]);
  expect(events).toEqual([{ type: 'text_delta', text: 'par' }]);
  expect(error).toMatchObject({
    code: 'PROVIDER_ERROR',
    retryable: true,
    message: expect.stringMatching(/server had an error/),
  });
});

test('an error event is a PROVIDER_ERROR; a context-length one is marked so', async () => {
  const { error } = await run([
    ...responsesOpening(),
    responsesEvent('error', {
      code: 'context_length_exceeded',
      message: 'Your input exceeds the context window of this model.',
      param: 'input',
    }),
  ]);
  expect(error).toMatchObject({ code: 'PROVIDER_ERROR', contextLengthExceeded: true, retryable: false });
});

test('a stream that ends without response.completed is a retryable error', async () => {
  const { events, error } = await run([...responsesOpening(), ...responsesText(['cut']).slice(0, 3)]);
  expect(events).toEqual([{ type: 'text_delta', text: 'cut' }]);
  expect(error).toMatchObject({ code: 'PROVIDER_ERROR', retryable: true });
  expect(String(error)).toMatch(/ended before the answer was finished/);
});

test('request parameters: stateless, tools, limits and reasoning settings', async () => {
  const tools = [
    { name: 'lookup', description: 'Looks up.', parameters: { type: 'object', properties: {} } },
  ];
  await run([...responsesOpening(), ...responsesText(['x']), responsesCompleted()], {
    provider: provider({ reasoningEffort: 'low', reasoningSummary: 'detailed' }),
    request: request({ tools, maxOutputTokens: 512, temperature: 1 }),
  });
  const body = server.requests[0]!.body as Json;
  expect(body).toMatchObject({
    model: 'o4-mini',
    stream: true,
    store: false,
    include: ['reasoning.encrypted_content'],
    reasoning: { effort: 'low', summary: 'detailed' },
    max_output_tokens: 512,
    temperature: 1,
    tools: [
      {
        type: 'function',
        name: 'lookup',
        description: 'Looks up.',
        parameters: tools[0]!.parameters,
        strict: false,
      },
    ],
  });
  expect((body.input as Json[])[0]).toEqual({ type: 'message', role: 'developer', content: 'Be brief.' });
});
