/**
 * Structured output through a real AI SDK provider (`@ai-sdk/openai-compatible`) talking HTTP to the local
 * wire server: the adapter's `responseFormat` must reach the request body, and the streamed JSON answer
 * must come back as the turn's output.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { AgentBuilder, type AgentEvent, type JsonSchema, type RunningTurn } from '@youyou/agent';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  chatFinish,
  chatTextChunks,
  chatToolCallChunks,
  sseReply,
} from '../../../test-support/openai-wire.js';
import { startWireServer, type WireServer } from '../../../test-support/wire-server.js';
import { aiSdkProvider } from '../src/index.js';
import { finish, MODEL_ID, mockModel, modelInfo, textParts } from './support.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await server.close();
});

type Json = Record<string, unknown>;

const SCHEMA: JsonSchema = {
  type: 'object',
  properties: { city: { type: 'string' }, days: { type: 'integer' } },
  required: ['city', 'days'],
  additionalProperties: false,
};

async function collect(turn: RunningTurn): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of turn) events.push(event);
  return events;
}

async function agentOverWire(options: { tools?: boolean } = {}) {
  const compatible = createOpenAICompatible({
    name: 'local',
    baseURL: `${server.url}/v1`,
    apiKey: 'test-key',
    supportsStructuredOutputs: true,
  });
  const provider = aiSdkProvider({
    id: 'ai-sdk',
    models: [
      {
        model: compatible.chatModel(MODEL_ID),
        info: modelInfo({
          capabilities: { toolUse: true, vision: false, streaming: true, structuredOutput: true },
        }),
      },
    ],
    retryDelayMs: 1,
  });
  let builder = new AgentBuilder({
    defaultModel: MODEL_ID,
    systemInstructions: ['Be brief.'],
  }).registerModelProvider(provider);
  if (options.tools === true) {
    builder = builder.registerTool({
      name: 'calendar',
      description: 'Tells the trip length.',
      parametersSchema: { type: 'object', properties: {} },
      isMutating: false,
      execute: async () => ({ content: '3 days', isError: false }),
    });
  }
  return builder.build();
}

describe('AI SDK: structured output on the wire', () => {
  test('the request body carries response_format json_schema and the streamed JSON is the output', async () => {
    server.enqueue(sseReply([...chatTextChunks(['{"city":"Li', 'ma","days":', '4}']), ...chatFinish()]));
    const agent = await agentOverWire();
    const session = await agent.newSession();
    const turn = await session.sendMessage('plan a trip', {
      output: { schema: SCHEMA, name: 'trip', description: 'A trip plan.' },
    });
    const events = await collect(turn);
    expect(events.at(-1)?.payload).toEqual({
      type: 'turn_complete',
      usage: expect.any(Object),
      output: { city: 'Lima', days: 4 },
    });
    const body = server.requests[0]?.body as Json;
    expect(body.response_format).toEqual({
      type: 'json_schema',
      json_schema: expect.objectContaining({ name: 'trip', description: 'A trip plan.', schema: SCHEMA }),
    });
    await agent.shutdown();
  });

  test('a tool round first, then the structured answer; both requests carry the format', async () => {
    server.enqueue(
      sseReply([
        ...chatToolCallChunks([{ id: 'call_1', name: 'calendar', fragments: ['{}'] }]),
        ...chatFinish({ finishReason: 'tool_calls' }),
      ]),
      sseReply([...chatTextChunks(['{"city":"Oslo","days":3}']), ...chatFinish()]),
    );
    const agent = await agentOverWire({ tools: true });
    const session = await agent.newSession();
    const turn = await session.sendMessage('plan', { output: { schema: SCHEMA } });
    const events = await collect(turn);
    const types = events.map((event) => event.payload.type).filter((type) => type !== 'usage');
    expect(types).toEqual(['tool_call_start', 'tool_call_end', 'text_delta', 'turn_complete']);
    expect((await turn.done).output).toEqual({ city: 'Oslo', days: 3 });
    expect(server.requests).toHaveLength(2);
    for (const request of server.requests) {
      expect(((request.body as Json).response_format as Json | undefined)?.type).toBe('json_schema');
    }
    await agent.shutdown();
  });
});

test('the V3 call options get responseFormat { type: json, schema, name, description }', async () => {
  const model = mockModel([[...textParts('{"city":"Rome","days":2}'), finish('stop')]]);
  const agent = await new AgentBuilder({ defaultModel: MODEL_ID })
    .registerModelProvider(aiSdkProvider({ id: 'ai-sdk', models: [{ model, info: modelInfo() }] }))
    .build();
  const session = await agent.newSession();
  const turn = await session.sendMessage('go', { output: { schema: SCHEMA, description: 'Where.' } });
  await collect(turn);
  expect((await turn.done).output).toEqual({ city: 'Rome', days: 2 });
  expect(model.doStreamCalls[0]?.responseFormat).toEqual({
    type: 'json',
    schema: SCHEMA,
    name: 'output',
    description: 'Where.',
  });
  await agent.shutdown();
});
