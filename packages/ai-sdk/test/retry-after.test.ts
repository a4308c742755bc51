/**
 * The bridge's own retries honour the server's Retry-After: with a backoff set far beyond the test's time-out,
 * a turn that completes after a 429 carrying `Retry-After: 0` shows the header's wait was taken instead.
 * No duration is measured: the count of requests the server received is the effect.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError } from '@ai-sdk/provider';
import { AgentBuilder, type AgentEvent } from '@youyou/agent';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { chatFinish, chatTextChunks, errorReply, sseReply } from '../../../test-support/openai-wire.js';
import { startWireServer, type WireServer } from '../../../test-support/wire-server.js';
import { aiSdkProvider } from '../src/index.js';
import { retryAfterMs } from '../src/provider.js';
import { MODEL_ID, modelInfo } from './support.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await server.close();
});

/** Ten minutes: a retry that waited for this backoff would not finish within the test's time-out. */
const BACKOFF_BEYOND_TEST_TIMEOUT = 600_000;

async function turnTexts(): Promise<{ types: string[]; text: string }> {
  const compatible = createOpenAICompatible({
    name: 'local',
    baseURL: `${server.url}/v1`,
    apiKey: 'test-key',
  });
  const provider = aiSdkProvider({
    id: 'ai-sdk',
    models: [{ model: compatible.chatModel(MODEL_ID), info: modelInfo() }],
    maxRetries: 2,
    retryDelayMs: BACKOFF_BEYOND_TEST_TIMEOUT,
  });
  const agent = await new AgentBuilder({ defaultModel: MODEL_ID }).registerModelProvider(provider).build();
  const session = await agent.newSession();
  const events: AgentEvent[] = [];
  for await (const event of await session.sendMessage('hi')) events.push(event);
  await agent.shutdown();
  const text = events
    .map((event) => (event.payload.type === 'text_delta' ? event.payload.text : ''))
    .join('');
  return { types: events.map((event) => event.payload.type), text };
}

test('a 429 with Retry-After: 0 is retried at once, not after the backoff', async () => {
  server.enqueue(
    errorReply({
      status: 429,
      message: 'slow down',
      type: 'rate_limit_error',
      headers: { 'retry-after': '0' },
    }),
    sseReply([...chatTextChunks(['after the wait']), ...chatFinish()]),
  );
  const { types, text } = await turnTexts();
  expect(server.requests).toHaveLength(2);
  expect(text).toBe('after the wait');
  expect(types.at(-1)).toBe('turn_complete');
});

test('a 529 (overloaded) with retry-after-ms: 0 is retried at once as well', async () => {
  server.enqueue(
    errorReply({ status: 529, message: 'overloaded', headers: { 'retry-after-ms': '0' } }),
    errorReply({ status: 503, message: 'unavailable', headers: { 'retry-after': '0' } }),
    sseReply([...chatTextChunks(['third time']), ...chatFinish()]),
  );
  const { text } = await turnTexts();
  expect(server.requests).toHaveLength(3);
  expect(text).toBe('third time');
});

function failure(headers: Record<string, string> | undefined): APICallError {
  return new APICallError({
    message: 'rate limited',
    url: 'http://127.0.0.1/v1/chat/completions',
    requestBodyValues: {},
    statusCode: 429,
    ...(headers === undefined ? {} : { responseHeaders: headers }),
  });
}

test('Retry-After is read as milliseconds, seconds or a date; an unusable or over-long one is ignored', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  expect(retryAfterMs(failure({ 'retry-after-ms': '250' }), now)).toBe(250);
  expect(retryAfterMs(failure({ 'Retry-After': '2' }), now)).toBe(2_000);
  expect(retryAfterMs(failure({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }), now)).toBe(5_000);
  expect(retryAfterMs(failure({ 'retry-after': 'soon' }), now)).toBeUndefined();
  expect(retryAfterMs(failure({ 'retry-after': '3600' }), now)).toBeUndefined();
  expect(retryAfterMs(failure({ 'retry-after': '-1' }), now)).toBeUndefined();
  expect(retryAfterMs(failure(undefined), now)).toBeUndefined();
  expect(retryAfterMs(new Error('not an API error'), now)).toBeUndefined();
});
