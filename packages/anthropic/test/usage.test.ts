import type { AgentEventPayload } from '@youyou/agent';
import { afterEach, beforeEach, expect, test } from 'vitest';
import {
  messageDelta,
  messageStart,
  messageStop,
  sseReply,
  textBlock,
} from '../../../test-support/anthropic-wire.js';
import { startWireServer, type WireServer } from '../../../test-support/wire-server.js';
import { ANTHROPIC_MODELS } from '../src/index.js';
import { agentFor, collect } from './support/harness.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await server.close();
});

type UsagePayload = Extract<AgentEventPayload, { type: 'usage' }>;

test('an Agent turn: the prompt is input + cache reads + cache writes, each priced once from the catalogue', async () => {
  server.enqueue(
    sseReply([
      messageStart(
        { input_tokens: 40, cache_read_input_tokens: 3_000, cache_creation_input_tokens: 500 },
        'claude-haiku-4-5',
      ),
      ...textBlock(0, ['Hi']),
      messageDelta('end_turn', { output_tokens: 120, thinking_tokens: 30 }),
      messageStop(),
    ]),
  );
  const agent = await agentFor({ server, config: { defaultModel: 'claude-haiku-4-5' } });
  const session = await agent.newSession();
  const events = await collect(await session.sendMessage('hi'));
  const usage = events
    .map((event) => event.payload)
    .filter((payload): payload is UsagePayload => payload.type === 'usage');
  expect(usage).toHaveLength(1);
  expect(usage[0]).toMatchObject({
    purpose: 'turn',
    providerId: 'anthropic-messages',
    modelId: 'claude-haiku-4-5',
    usage: {
      inputTokens: 3_540,
      cachedInputTokens: 3_000,
      cacheWriteTokens: 500,
      outputTokens: 120,
      reasoningTokens: 30,
    },
  });
  // Haiku 4.5: $1 input, $0.10 cache read, $1.25 cache write, $5 output, per million tokens.
  expect(usage[0]?.costUsd).toBeCloseTo((40 * 1 + 3_000 * 0.1 + 500 * 1.25 + 120 * 5) / 1_000_000, 15);
  expect(session.usage()).toMatchObject({ inputTokens: 3_540, cacheWriteTokens: 500, modelCalls: 1 });
  await agent.shutdown();
});

test('a model whose price is not known has no pricing, and its calls no cost', async () => {
  server.enqueue(
    sseReply([
      messageStart({ input_tokens: 10 }),
      ...textBlock(0, ['Hi']),
      messageDelta('end_turn', { output_tokens: 3 }),
      messageStop(),
    ]),
  );
  expect(ANTHROPIC_MODELS.find((model) => model.id === 'claude-sonnet-5-5')?.pricing).toBeUndefined();
  const agent = await agentFor({ server });
  const session = await agent.newSession();
  const events = await collect(await session.sendMessage('hi'));
  const usage = events.map((event) => event.payload).find((payload) => payload.type === 'usage');
  expect(usage).toEqual({
    type: 'usage',
    purpose: 'turn',
    providerId: 'anthropic-messages',
    modelId: 'claude-sonnet-5-5',
    usage: { inputTokens: 10, outputTokens: 3 },
  });
  await agent.shutdown();
});
