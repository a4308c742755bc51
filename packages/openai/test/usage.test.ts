import { AgentBuilder, type AgentEvent, type AgentEventPayload, usageCost } from '@youyou/agent';
import { afterEach, beforeEach, expect, test } from 'vitest';
import {
  chatFinish,
  chatTextChunks,
  responsesCompleted,
  responsesOpening,
  responsesText,
  sseReply,
} from '../../../test-support/openai-wire.js';
import { startWireServer, type WireServer } from '../../../test-support/wire-server.js';
import { OPENAI_MODELS } from '../src/index.js';
import { collect, DIALECTS, startSession } from './support/dialects.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await server.close();
});

type UsagePayload = Extract<AgentEventPayload, { type: 'usage' }>;

/** The turn's one usage event. */
function usageEvent(events: readonly AgentEvent[]): UsagePayload | undefined {
  const found = events
    .map((event) => event.payload)
    .filter((payload): payload is UsagePayload => payload.type === 'usage');
  expect(found).toHaveLength(1);
  return found[0];
}

test('Chat Completions: the usage event has the whole prompt, its cached part and reasoning, priced from the catalogue', async () => {
  const chat = DIALECTS.find((dialect) => dialect.name === 'openai-chat')!;
  server.enqueue(
    sseReply([
      ...chatTextChunks(['Hi']),
      ...chatFinish({ usage: { prompt: 1_000, completion: 200, cached: 600, reasoning: 50 } }),
    ]),
  );
  const { agent, session } = await startSession({
    provider: chat.provider({ server }),
    modelId: 'gpt-4o-mini',
  });
  const events = await collect(await session.sendMessage('hi'));
  const usage = { inputTokens: 1_000, outputTokens: 200, cachedInputTokens: 600, reasoningTokens: 50 };
  expect(usageEvent(events)).toEqual({
    type: 'usage',
    purpose: 'turn',
    providerId: 'openai-chat',
    modelId: 'gpt-4o-mini',
    usage,
    // 400 uncached × $0.15 + 600 cached × $0.075 + 200 output × $0.60, per million.
    costUsd: expect.closeTo((400 * 0.15 + 600 * 0.075 + 200 * 0.6) / 1_000_000, 15),
  });
  expect(events.at(-1)?.payload).toMatchObject({
    type: 'turn_complete',
    usage: { inputTokens: 1_000, cachedInputTokens: 600, reasoningTokens: 50, modelCalls: 1 },
  });
  await agent.shutdown();
});

test('Responses: cached and reasoning tokens come from input_tokens_details and output_tokens_details', async () => {
  const responses = DIALECTS.find((dialect) => dialect.name === 'openai-responses')!;
  server.enqueue(
    sseReply([
      ...responsesOpening(),
      ...responsesText(['Hi']),
      responsesCompleted({ usage: { prompt: 5_000, completion: 900, cached: 4_096, reasoning: 640 } }),
    ]),
  );
  const { agent, session } = await startSession({
    provider: responses.provider({ server }),
    modelId: 'gpt-5-mini',
  });
  const events = await collect(await session.sendMessage('hi'));
  const usage = { inputTokens: 5_000, outputTokens: 900, cachedInputTokens: 4_096, reasoningTokens: 640 };
  const pricing = OPENAI_MODELS.find((model) => model.id === 'gpt-5-mini')?.pricing;
  expect(pricing).toBeDefined();
  expect(usageEvent(events)).toMatchObject({ providerId: 'openai-responses', modelId: 'gpt-5-mini', usage });
  expect(usageEvent(events)?.costUsd).toBeCloseTo((904 * 0.25 + 4_096 * 0.025 + 900 * 2) / 1_000_000, 15);
  expect(usageCost(usage, pricing!)).toBeCloseTo((904 * 0.25 + 4_096 * 0.025 + 900 * 2) / 1_000_000, 15);
  expect(session.usage()).toMatchObject({ inputTokens: 5_000, outputTokens: 900, modelCalls: 1 });
  await agent.shutdown();
});

test('the catalogue builds: every price is a finite number of 0 or more, and a model without a known price has none', async () => {
  for (const model of OPENAI_MODELS) {
    if (model.pricing === undefined) continue;
    for (const price of Object.values(model.pricing)) {
      expect(Number.isFinite(price) && price >= 0).toBe(true);
    }
  }
  expect(OPENAI_MODELS.find((model) => model.id === 'gpt-5.2')?.pricing).toBeUndefined();
  const chat = DIALECTS.find((dialect) => dialect.name === 'openai-chat')!;
  // build() checks every model's pricing.
  const agent = await new AgentBuilder({ defaultModel: 'gpt-5' })
    .registerModelProvider(chat.provider({ server }))
    .build();
  await agent.shutdown();
});
