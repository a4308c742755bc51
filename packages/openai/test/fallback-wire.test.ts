/**
 * Fallback across providers on real HTTP: an OpenAI model behind one local server fails after the SDK's own
 * retries (429 with Retry-After, 529, a dropped connection, a refused connection) and the call moves to an
 * Anthropic model behind another. The effects: the requests each server received, the events, the usage's model.
 */
import { createServer } from 'node:net';
import { AgentBuilder, type AgentEvent } from '@youyou/agent';
import { anthropicProvider } from '@youyou/anthropic';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { textReply } from '../../../test-support/anthropic-wire.js';
import { chatFinish, chatTextChunks, errorReply, sseReply } from '../../../test-support/openai-wire.js';
import { startWireServer, type WireServer } from '../../../test-support/wire-server.js';
import { openaiChatProvider } from '../src/index.js';
import { TEST_API_KEY } from './support/dialects.js';

let openai: WireServer;
let anthropic: WireServer;
beforeEach(async () => {
  openai = await startWireServer();
  anthropic = await startWireServer();
});
afterEach(async () => {
  await openai.close();
  await anthropic.close();
});

const BACKUP = 'claude-haiku-4-5';

async function turnOn(options: { baseURL: string; maxRetries: number }) {
  const agent = await new AgentBuilder({ defaultModel: 'gpt-4o-mini', fallbackModels: [BACKUP] })
    .registerModelProvider(
      openaiChatProvider({ apiKey: TEST_API_KEY, baseURL: options.baseURL, maxRetries: options.maxRetries }),
    )
    .registerModelProvider(anthropicProvider({ apiKey: 'test-key', baseURL: anthropic.url, maxRetries: 0 }))
    .build();
  const session = await agent.newSession();
  const events: AgentEvent[] = [];
  for await (const event of await session.sendMessage('hello')) events.push(event);
  await agent.shutdown();
  const payloads = events.map((event) => event.payload);
  return {
    payloads,
    types: payloads.map((payload) => payload.type),
    text: payloads.map((payload) => (payload.type === 'text_delta' ? payload.text : '')).join(''),
    fallback: payloads.find((payload) => payload.type === 'model_fallback'),
    usage: payloads.find((payload) => payload.type === 'usage'),
  };
}

test('429 with Retry-After: the SDK retries as told, then the call moves to the Anthropic model', async () => {
  const limited = () =>
    errorReply({
      status: 429,
      message: 'Rate limit reached',
      type: 'rate_limit_error',
      headers: { 'retry-after': '0' },
    });
  openai.enqueue(limited(), limited());
  anthropic.enqueue(textReply(['answered by claude'], { input_tokens: 12 }));
  const turn = await turnOn({ baseURL: `${openai.url}/v1`, maxRetries: 1 });
  // One attempt and the one retry the provider was allowed, then the fallback.
  expect(openai.requests).toHaveLength(2);
  expect(anthropic.requests).toHaveLength(1);
  expect(anthropic.requests[0]?.body).toMatchObject({ model: BACKUP });
  expect(turn.fallback).toMatchObject({ type: 'model_fallback', from: 'gpt-4o-mini', to: BACKUP });
  expect(turn.text).toBe('answered by claude');
  expect(turn.usage).toMatchObject({ providerId: 'anthropic-messages', modelId: BACKUP });
  expect(turn.types.at(-1)).toBe('turn_complete');
});

test('529 overloaded moves the call', async () => {
  openai.enqueue(errorReply({ status: 529, message: 'Overloaded', type: 'overloaded_error' }));
  anthropic.enqueue(textReply(['fallback answer']));
  const turn = await turnOn({ baseURL: `${openai.url}/v1`, maxRetries: 0 });
  expect(openai.requests).toHaveLength(1);
  expect(turn.fallback).toMatchObject({ from: 'gpt-4o-mini', to: BACKUP });
  expect(turn.text).toBe('fallback answer');
});

test('a connection dropped before the first event moves the call', async () => {
  openai.enqueue(sseReply([...chatTextChunks(['never seen']), ...chatFinish()], { dropAfter: 0 }));
  anthropic.enqueue(textReply(['after the drop']));
  const turn = await turnOn({ baseURL: `${openai.url}/v1`, maxRetries: 0 });
  expect(openai.requests).toHaveLength(1);
  expect(turn.fallback).toMatchObject({ from: 'gpt-4o-mini', to: BACKUP });
  expect(turn.text).toBe('after the drop');
});

test('a refused connection moves the call', async () => {
  // A port that was just free and is closed again: nothing listens there.
  const port = await new Promise<number>((resolve) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
  anthropic.enqueue(textReply(['nobody was there']));
  const turn = await turnOn({ baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
  expect(turn.fallback).toMatchObject({ from: 'gpt-4o-mini', to: BACKUP });
  expect(turn.text).toBe('nobody was there');
});

test('a connection dropped after the answer began is not moved: the partial answer stays, the turn fails', async () => {
  openai.enqueue(sseReply([...chatTextChunks(['half an ', 'answer']), ...chatFinish()], { dropAfter: 2 }));
  const turn = await turnOn({ baseURL: `${openai.url}/v1`, maxRetries: 0 });
  expect(anthropic.requests).toHaveLength(0);
  expect(turn.fallback).toBeUndefined();
  expect(turn.types).toContain('error');
});

test('the other way round: Anthropic answers 429 with Retry-After, its SDK retries, then the OpenAI model answers', async () => {
  const limited = () => ({
    type: 'json' as const,
    status: 429,
    body: { type: 'error', error: { type: 'rate_limit_error', message: 'Number of requests exceeded' } },
    headers: { 'retry-after': '0' },
  });
  anthropic.enqueue(limited(), limited());
  openai.enqueue(sseReply([...chatTextChunks(['answered by gpt']), ...chatFinish()]));
  const agent = await new AgentBuilder({ defaultModel: BACKUP, fallbackModels: ['gpt-4o-mini'] })
    .registerModelProvider(anthropicProvider({ apiKey: 'test-key', baseURL: anthropic.url, maxRetries: 1 }))
    .registerModelProvider(
      openaiChatProvider({ apiKey: TEST_API_KEY, baseURL: `${openai.url}/v1`, maxRetries: 0 }),
    )
    .build();
  const session = await agent.newSession();
  const events: AgentEvent[] = [];
  for await (const event of await session.sendMessage('hello')) events.push(event);
  await agent.shutdown();
  expect(anthropic.requests).toHaveLength(2);
  expect(openai.requests).toHaveLength(1);
  expect(events.map((event) => event.payload)).toContainEqual(
    expect.objectContaining({ type: 'model_fallback', from: BACKUP, to: 'gpt-4o-mini' }),
  );
});
