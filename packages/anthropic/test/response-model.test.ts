/**
 * The model that answered, as `message_start.message.model` names it, reaches the runtime on `done` and
 * surfaces on the observers' `model_call_end`; also when a forced output tool stands in for structured output.
 */
import { AgentBuilder, type JsonSchema, type Observation, type Plugin } from '@youyou/agent';
import { afterEach, beforeEach, expect, test } from 'vitest';
import {
  messageDelta,
  messageStart,
  messageStop,
  sseReply,
  textBlock,
  toolUseBlock,
} from '../../../test-support/anthropic-wire.js';
import { startWireServer, type WireEvent, type WireServer } from '../../../test-support/wire-server.js';
import type { AnthropicModelInfo, AnthropicProviderOptions } from '../src/index.js';
import { collect, providerFor } from './support/harness.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await server.close();
});

type ModelCallEnd = Extract<Observation, { type: 'model_call_end' }>;

/** An answer of these blocks whose `message_start` names `model` (left out when undefined). */
function answerBy(model: unknown, blocks: WireEvent[], stopReason = 'end_turn'): WireEvent[] {
  const start = messageStart({ input_tokens: 10 });
  if (!('data' in start)) throw new Error('expected a data event');
  const data = start.data as { message: Record<string, unknown> };
  const { model: _default, ...message } = data.message;
  return [
    { ...start, data: { ...data, message: model === undefined ? message : { ...message, model } } },
    ...blocks,
    messageDelta(stopReason, { output_tokens: 3 }),
    messageStop(),
  ];
}

/** Runs one turn against `events`; the observers' model_call_end events and the turn's last event type. */
async function turnOver(options: {
  events: WireEvent[];
  modelId?: string;
  provider?: AnthropicProviderOptions;
  output?: JsonSchema;
}) {
  server.enqueue(sseReply(options.events));
  const ends: ModelCallEnd[] = [];
  const recorder: Plugin = {
    id: 'recorder',
    displayName: 'recorder',
    description: 'records model_call_end',
    initialize: async () => {},
    apply: (ctx) => {
      ctx.observe((observation) => {
        if (observation.type === 'model_call_end') ends.push(observation);
      });
    },
    shutdown: async () => {},
  };
  const agent = await new AgentBuilder({ defaultModel: options.modelId ?? 'claude-sonnet-5-5' })
    .registerModelProvider(providerFor(server, options.provider))
    .registerPlugin(recorder)
    .build();
  const session = await agent.newSession();
  const turn = await session.sendMessage(
    'hi',
    options.output === undefined ? {} : { output: { schema: options.output, name: 'reply' } },
  );
  const events = await collect(turn);
  await agent.shutdown();
  return { ends, last: events.at(-1)?.payload.type };
}

test('message_start.message.model is the call end’s responseModel', async () => {
  const { ends, last } = await turnOver({
    events: answerBy('claude-sonnet-5-5-20260101', textBlock(0, ['Hi'])),
  });
  expect(last).toBe('turn_complete');
  expect(ends).toHaveLength(1);
  expect(ends[0]).toMatchObject({
    modelId: 'claude-sonnet-5-5',
    responseModel: 'claude-sonnet-5-5-20260101',
    outcome: 'completed',
  });
});

test.each([
  ['absent', undefined],
  ['a number', 7],
  ['empty', ''],
])(
  'a message_start model that is %s gives no responseModel and the turn completes',
  async (_label, model) => {
    const { ends, last } = await turnOver({ events: answerBy(model, textBlock(0, ['Hi'])) });
    expect(last).toBe('turn_complete');
    expect(ends).toHaveLength(1);
    expect(ends[0]?.outcome).toBe('completed');
    expect(ends[0]).not.toHaveProperty('responseModel');
  },
);

test('the forced output tool’s answer keeps the responseModel when its stop becomes end_turn', async () => {
  const plain: AnthropicModelInfo = {
    id: 'claude-custom',
    displayName: 'Custom',
    contextWindow: 200_000,
    capabilities: { toolUse: true, vision: true, streaming: true },
  };
  const schema: JsonSchema = {
    type: 'object',
    properties: { answer: { type: 'string' } },
    required: ['answer'],
    additionalProperties: false,
  };
  const { ends, last } = await turnOver({
    modelId: 'claude-custom',
    provider: { models: [plain] },
    output: schema,
    events: answerBy(
      'claude-custom-v2',
      toolUseBlock(0, { id: 'toolu_1', name: 'reply', jsonChunks: ['{"answer":"4"}'] }),
      'tool_use',
    ),
  });
  expect(last).toBe('turn_complete');
  expect(ends[0]).toMatchObject({ stopReason: 'end_turn', responseModel: 'claude-custom-v2' });
});
