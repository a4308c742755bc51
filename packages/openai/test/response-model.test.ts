/**
 * The model that answered, as the wire reports it (each Chat chunk's `model`, the Responses events'
 * `response.model`), reaches the runtime on `done` and surfaces on the observers' `model_call_end`.
 */
import { AgentBuilder, type Observation, type Plugin } from '@youyou/agent';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { WireEvent, WireReply, WireServer } from '../../../test-support/wire-server.js';
import { startWireServer } from '../../../test-support/wire-server.js';
import { collect, DIALECTS, type Dialect } from './support/dialects.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await server.close();
});

type ModelCallEnd = Extract<Observation, { type: 'model_call_end' }>;

/** The reply with every `model` (a chunk's own, or its `response.model`) set to `model`, or removed. */
function withModel(reply: WireReply, model: unknown): WireReply {
  if (reply.type !== 'sse') throw new Error('expected an SSE reply');
  const rewrite = (value: Record<string, unknown>): Record<string, unknown> => {
    const { model: _old, ...rest } = value;
    return model === undefined ? rest : { ...rest, model };
  };
  const events = reply.events.map((event): WireEvent => {
    if (!('data' in event) || typeof event.data !== 'object' || event.data === null) return event;
    const data = event.data as Record<string, unknown>;
    if ('model' in data) return { ...event, data: rewrite(data) };
    const response = data.response;
    if (typeof response === 'object' && response !== null && 'model' in response) {
      return { ...event, data: { ...data, response: rewrite(response as Record<string, unknown>) } };
    }
    return event;
  });
  return { ...reply, events };
}

/** Runs one turn of `dialect` against `reply`; the observers' model_call_end events and the turn's end. */
async function turnOver(dialect: Dialect, reply: WireReply) {
  server.enqueue(reply);
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
  const agent = await new AgentBuilder({ defaultModel: dialect.modelId })
    .registerModelProvider(dialect.provider({ server }))
    .registerPlugin(recorder)
    .build();
  const session = await agent.newSession();
  const events = await collect(await session.sendMessage('hi'));
  await agent.shutdown();
  return { ends, last: events.at(-1)?.payload.type };
}

describe.each(DIALECTS.map((dialect) => [dialect.name, dialect] as const))('%s', (_name, dialect) => {
  test('the model the wire names as the answerer is the call end’s responseModel', async () => {
    const answered = `${dialect.modelId}-2026-01-01`;
    const { ends, last } = await turnOver(dialect, withModel(dialect.text(['Hi']), answered));
    expect(last).toBe('turn_complete');
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({
      modelId: dialect.modelId,
      responseModel: answered,
      outcome: 'completed',
    });
  });

  test.each([
    ['absent', undefined],
    ['a number', 42],
    ['empty', ''],
  ])('a wire model that is %s gives no responseModel and the turn completes', async (_label, model) => {
    const { ends, last } = await turnOver(dialect, withModel(dialect.text(['Hi']), model));
    expect(last).toBe('turn_complete');
    expect(ends).toHaveLength(1);
    expect(ends[0]?.outcome).toBe('completed');
    expect(ends[0]).not.toHaveProperty('responseModel');
  });
});
