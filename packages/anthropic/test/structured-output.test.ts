import type { JsonSchema } from '@youyou/agent';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { messageEvents, sseReply, textReply, toolUseBlock } from '../../../test-support/anthropic-wire.js';
import { messagesApiViolations } from '../../../test-support/anthropic-wire-rules.js';
import { startWireServer, type WireServer } from '../../../test-support/wire-server.js';
import { type AnthropicModelInfo, closesEveryObject } from '../src/index.js';
import { agentFor, bodyOf, collect, lookupTool, types } from './support/harness.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await server.close();
});

const CLOSED: JsonSchema = {
  type: 'object',
  properties: { answer: { type: 'string' }, confidence: { type: 'number' } },
  required: ['answer', 'confidence'],
  additionalProperties: false,
};

/** Leaves its object open: Anthropic's JSON outputs would refuse it. */
const OPEN: JsonSchema = {
  type: 'object',
  properties: { answer: { type: 'string' } },
  required: ['answer'],
};

/** A model this adapter does not know to take `output_config.format`. */
const PLAIN_MODEL: AnthropicModelInfo = {
  id: 'claude-custom',
  displayName: 'Custom',
  contextWindow: 200_000,
  capabilities: { toolUse: true, vision: true, streaming: true },
};

/** A streamed tool_use answer of one call, stopping for tool use. */
function toolAnswer(id: string, name: string, chunks: readonly string[]) {
  return sseReply(
    messageEvents({ blocks: [toolUseBlock(0, { id, name, jsonChunks: chunks })], stopReason: 'tool_use' }),
  );
}

describe('structured output over the Messages API', () => {
  test('a model with JSON outputs gets output_config.format; the streamed JSON is the output', async () => {
    server.enqueue(textReply(['{"answer":"4",', '"confidence":0.9}']));
    const agent = await agentFor({ server });
    const session = await agent.newSession();
    const turn = await session.sendMessage('2+2?', { output: { schema: CLOSED, name: 'sum' } });
    const events = await collect(turn);
    expect(events.at(-1)?.payload).toEqual({
      type: 'turn_complete',
      usage: expect.any(Object),
      output: { answer: '4', confidence: 0.9 },
    });
    const body = bodyOf(server, 0);
    expect(messagesApiViolations(body)).toEqual([]);
    expect(body.output_config).toEqual({ format: { type: 'json_schema', schema: CLOSED } });
    expect(body.tools).toBeUndefined();
    expect(body.tool_choice).toBeUndefined();
    await agent.shutdown();
  });

  test('a model without it gets a forced final tool whose input becomes the output', async () => {
    server.enqueue(
      toolAnswer('toolu_1', 'sum', ['{"answer":', '"4","confidence":1}']),
      textReply(['You are welcome.']),
    );
    const agent = await agentFor({
      server,
      provider: { models: [PLAIN_MODEL] },
      config: { defaultModel: 'claude-custom' },
    });
    const session = await agent.newSession();
    const turn = await session.sendMessage('2+2?', {
      output: { schema: CLOSED, name: 'sum', description: 'The sum.' },
    });
    const events = await collect(turn);
    expect(types(events).filter((type) => type !== 'usage')).toEqual(['text_delta', 'turn_complete']);
    expect((await turn.done).output).toEqual({ answer: '4', confidence: 1 });
    const body = bodyOf(server, 0);
    expect(messagesApiViolations(body)).toEqual([]);
    expect(body.output_config).toBeUndefined();
    expect(body.tool_choice).toEqual({ type: 'any' });
    expect(body.tools).toEqual([
      expect.objectContaining({
        name: 'sum',
        input_schema: CLOSED,
        description: expect.stringContaining('The sum.'),
      }),
    ]);
    // The answer is kept as text: the next request is valid and holds no unanswered tool_use.
    expect(session.messages().at(-1)).toEqual({
      type: 'assistant',
      content: [{ type: 'text', text: '{"answer":"4","confidence":1}' }],
      status: 'complete',
    });
    await collect(await session.sendMessage('thanks'));
    const next = bodyOf(server, 1);
    expect(messagesApiViolations(next)).toEqual([]);
    expect(next.tools).toBeUndefined();
    expect(next.tool_choice).toBeUndefined();
    await agent.shutdown();
  });

  test('a schema with an open object goes by the forced tool even on a model with JSON outputs', async () => {
    server.enqueue(toolAnswer('toolu_1', 'output', ['{"answer":"yes"}']));
    const agent = await agentFor({ server });
    const session = await agent.newSession();
    const turn = await session.sendMessage('well?', { output: { schema: OPEN } });
    await collect(turn);
    expect((await turn.done).output).toEqual({ answer: 'yes' });
    const body = bodyOf(server, 0);
    expect(body.output_config).toBeUndefined();
    expect((body.tools as { name: string }[]).map((tool) => tool.name)).toEqual(['output']);
  });

  test('the agent tools run before the forced final tool, whose name avoids theirs', async () => {
    const calls: unknown[] = [];
    server.enqueue(
      toolAnswer('toolu_1', 'lookup', ['{"q":"four"}']),
      toolAnswer('toolu_2', 'lookup_2', ['{"answer":"four","confidence":0.5}']),
    );
    const agent = await agentFor({
      server,
      provider: { models: [PLAIN_MODEL] },
      config: { defaultModel: 'claude-custom' },
      tools: [lookupTool(calls)],
    });
    const session = await agent.newSession();
    const turn = await session.sendMessage('look it up', { output: { schema: CLOSED, name: 'lookup' } });
    const events = await collect(turn);
    expect(types(events).filter((type) => type !== 'usage')).toEqual([
      'tool_call_start',
      'tool_call_end',
      'text_delta',
      'turn_complete',
    ]);
    expect(calls).toEqual([{ q: 'four' }]);
    expect((await turn.done).output).toEqual({ answer: 'four', confidence: 0.5 });
    for (const index of [0, 1]) {
      const body = bodyOf(server, index);
      expect(messagesApiViolations(body)).toEqual([]);
      expect((body.tools as { name: string }[]).map((tool) => tool.name)).toEqual(['lookup', 'lookup_2']);
    }
    await agent.shutdown();
  });

  test('with thinking on, the forced tool is offered with tool_choice auto (the API refuses any)', async () => {
    server.enqueue(toolAnswer('toolu_1', 'output', ['{"answer":"a","confidence":0}']));
    const agent = await agentFor({
      server,
      provider: { models: [PLAIN_MODEL], thinking: { budgetTokens: 2048 } },
      config: { defaultModel: 'claude-custom' },
    });
    const session = await agent.newSession();
    const turn = await session.sendMessage('go', { output: { schema: CLOSED } });
    await collect(turn);
    expect((await turn.done).output).toEqual({ answer: 'a', confidence: 0 });
    expect(bodyOf(server, 0).tool_choice).toEqual({ type: 'auto' });
    await agent.shutdown();
  });
});

test('closesEveryObject finds an open object at any depth', () => {
  expect(closesEveryObject(CLOSED)).toBe(true);
  expect(closesEveryObject(OPEN)).toBe(false);
  expect(
    closesEveryObject({
      type: 'object',
      properties: { items: { type: 'array', items: { type: 'object', properties: {} } } },
      additionalProperties: false,
    }),
  ).toBe(false);
});
