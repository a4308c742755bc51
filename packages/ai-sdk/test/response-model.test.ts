/**
 * The model that answered, as the AI SDK's `response-metadata` part names it (`modelId`), reaches the runtime
 * on `done` and surfaces on the observers' `model_call_end`. Through a real AI SDK provider
 * (`@ai-sdk/openai-compatible`) talking HTTP to the local wire server, which takes it from the chunks' `model`.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { AgentBuilder, type Observation, type Plugin } from '@youyou/agent';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { chatFinish, chatTextChunks, sseReply } from '../../../test-support/openai-wire.js';
import { startWireServer, type WireEvent, type WireServer } from '../../../test-support/wire-server.js';
import { aiSdkProvider } from '../src/index.js';
import { MODEL_ID, modelInfo } from './support.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await server.close();
});

type ModelCallEnd = Extract<Observation, { type: 'model_call_end' }>;

/** A text answer whose chunks name `model` as the answerer (left out when undefined). */
function answerBy(model: string | undefined): WireEvent[] {
  return [...chatTextChunks(['Hi']), ...chatFinish()].map((event) => {
    if (!('data' in event) || typeof event.data !== 'object' || event.data === null) return event;
    const { model: _default, ...data } = event.data as Record<string, unknown>;
    return { ...event, data: model === undefined ? data : { ...data, model } };
  });
}

async function turnOver(events: WireEvent[]) {
  server.enqueue(sseReply(events));
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
  const compatible = createOpenAICompatible({
    name: 'local',
    baseURL: `${server.url}/v1`,
    apiKey: 'test-key',
  });
  const provider = aiSdkProvider({
    id: 'ai-sdk',
    models: [{ model: compatible.chatModel(MODEL_ID), info: modelInfo() }],
    retryDelayMs: 1,
  });
  const agent = await new AgentBuilder({ defaultModel: MODEL_ID })
    .registerModelProvider(provider)
    .registerPlugin(recorder)
    .build();
  const session = await agent.newSession();
  const turn = await session.sendMessage('hi');
  const types: string[] = [];
  for await (const event of turn) types.push(event.payload.type);
  await agent.shutdown();
  return { ends, last: types.at(-1) };
}

test('the response-metadata modelId is the call end’s responseModel', async () => {
  const { ends, last } = await turnOver(answerBy('mock-model-2026-01-01'));
  expect(last).toBe('turn_complete');
  expect(ends).toHaveLength(1);
  expect(ends[0]).toMatchObject({
    modelId: MODEL_ID,
    responseModel: 'mock-model-2026-01-01',
    outcome: 'completed',
  });
});

test('without a model on the wire there is no responseModel and the turn completes', async () => {
  const { ends, last } = await turnOver(answerBy(undefined));
  expect(last).toBe('turn_complete');
  expect(ends).toHaveLength(1);
  expect(ends[0]?.outcome).toBe('completed');
  expect(ends[0]).not.toHaveProperty('responseModel');
});
