import { afterEach, describe, expect, test } from 'vitest';
import type { AgentError, JsonSchema } from '../src/index.js';
import { InMemorySessionStorage } from '../src/index.js';
import { ScriptedModelProvider, scriptedModel } from '../src/testing/index.js';
import {
  buildAgent,
  collectTurn,
  defineTool,
  shutdownAgents,
  storedPayloads,
} from './support/agent-fixtures.js';

afterEach(shutdownAgents);

const WEATHER: JsonSchema = {
  type: 'object',
  properties: { city: { type: 'string' }, celsius: { type: 'number' } },
  required: ['city', 'celsius'],
  additionalProperties: false,
};

/** A scripted model that says it honours responseFormat itself. */
const NATIVE = [
  scriptedModel({ capabilities: { toolUse: true, vision: true, streaming: true, structuredOutput: true } }),
];

function turnRequests(provider: ScriptedModelProvider) {
  return provider.requests.filter((request) => request.purpose === 'turn');
}

describe('structured output (sendMessage options.output)', () => {
  test('a valid JSON answer comes back parsed in turn_complete and RunningTurn.done', async () => {
    const provider = new ScriptedModelProvider({
      models: NATIVE,
      responses: [[{ type: 'json', value: { city: 'Oslo', celsius: -3 }, chunks: 4 }]],
    });
    const { agent } = await buildAgent({ provider });
    const session = await agent.newSession();
    const turn = await session.sendMessage('weather in Oslo?', {
      output: { schema: WEATHER, name: 'weather', description: 'the current weather' },
    });
    const record = await collectTurn(turn);
    expect(record.types).toEqual(['text_delta', 'text_delta', 'text_delta', 'text_delta', 'turn_complete']);
    expect(record.payloads.at(-1)).toEqual({
      type: 'turn_complete',
      usage: expect.any(Object),
      output: { city: 'Oslo', celsius: -3 },
    });
    expect(await turn.done).toMatchObject({ status: 'completed', output: { city: 'Oslo', celsius: -3 } });
    expect((await turn.done).status).toBe('completed');
    const request = turnRequests(provider)[0];
    expect(request?.responseFormat).toEqual({
      type: 'json_schema',
      name: 'weather',
      description: 'the current weather',
      schema: WEATHER,
      strict: true,
    });
    // The model enforces the format itself: the prompt does not repeat the schema.
    expect(request?.systemPromptParts.dynamic).toBe('');
  });

  test('a turn without options.output sends no responseFormat and carries no output', async () => {
    const provider = new ScriptedModelProvider({ responses: [[{ type: 'text', text: '{"a":1}' }]] });
    const { agent } = await buildAgent({ provider });
    const session = await agent.newSession();
    const turn = await session.sendMessage('hi');
    const record = await collectTurn(turn);
    expect(record.payloads.at(-1)).toEqual({ type: 'turn_complete', usage: expect.any(Object) });
    const settled = await turn.done;
    expect(settled.status).toBe('completed');
    expect(settled).not.toHaveProperty('output');
    expect(turnRequests(provider)[0]?.responseFormat).toBeUndefined();
  });

  test('tools run before the final structured answer, and the output is the final answer only', async () => {
    const provider = new ScriptedModelProvider({
      responses: [
        [{ type: 'tool_call', toolName: 'thermometer', arguments: { city: 'Oslo' }, callId: 't1' }],
        [{ type: 'json', value: { city: 'Oslo', celsius: 4.5 } }],
      ],
    });
    const thermometer = defineTool({
      name: 'thermometer',
      execute: () => ({ content: '4.5', isError: false }),
    });
    const { agent } = await buildAgent({ provider, tools: [thermometer] });
    const session = await agent.newSession();
    const turn = await session.sendMessage('weather?', { output: { schema: WEATHER } });
    const record = await collectTurn(turn);
    expect(record.types).toEqual(['tool_call_start', 'tool_call_end', 'text_delta', 'turn_complete']);
    expect((await turn.done).output).toEqual({ city: 'Oslo', celsius: 4.5 });
    // Both model calls of the turn carry the format and the tools.
    const requests = turnRequests(provider);
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      expect(request.responseFormat?.name).toBe('output');
      expect(request.tools.map((tool) => tool.name)).toEqual(['thermometer']);
    }
    expect(session.messages().map((message) => message.type)).toEqual([
      'user',
      'tool_call',
      'tool_result',
      'assistant',
    ]);
  });

  test('an invalid answer gets one repair round with the errors; the repaired answer is the output', async () => {
    const provider = new ScriptedModelProvider({
      responses: [
        [{ type: 'text', text: '{"city":"Oslo","celsius":"cold"}' }],
        [{ type: 'json', value: { city: 'Oslo', celsius: -1 } }],
      ],
    });
    const storage = new InMemorySessionStorage();
    const { agent } = await buildAgent({ provider, sessionStorage: storage });
    const session = await agent.newSession();
    const turn = await session.sendMessage('weather?', { output: { schema: WEATHER } });
    const record = await collectTurn(turn);
    expect(record.errors).toEqual([]);
    expect(record.types).toEqual(['text_delta', 'output_repair', 'text_delta', 'turn_complete']);
    const repairEvent = record.payloads[1];
    expect(repairEvent?.type === 'output_repair' ? repairEvent.errors.join(' ') : '').toContain('/celsius');
    expect(record.payloads.at(-1)).toEqual({
      type: 'turn_complete',
      usage: expect.any(Object),
      output: { city: 'Oslo', celsius: -1 },
    });
    const second = turnRequests(provider)[1];
    const repair = second?.messages.at(-1);
    expect(repair?.type).toBe('system');
    // The validation error names the failing path.
    expect(repair?.type === 'system' ? repair.content : '').toContain('/celsius');
    // The invalid answer and the repair message are saved like any other message.
    await session.close();
    const types = (await storedPayloads(storage, session.id)).map((payload) => payload.type);
    expect(types.filter((type) => type !== 'metadata')).toEqual([
      'user_message',
      'assistant_message',
      'system_message',
      'assistant_message',
    ]);
  });

  test('still invalid after the repair: OUTPUT_INVALID with the errors and the raw text, turn failed', async () => {
    const provider = new ScriptedModelProvider({
      responses: [
        [{ type: 'text', text: 'It is cold in Oslo.' }],
        [{ type: 'text', text: '{"city":"Oslo"}' }],
      ],
    });
    const { agent } = await buildAgent({ provider });
    const session = await agent.newSession();
    const turn = await session.sendMessage('weather?', { output: { schema: WEATHER } });
    const record = await collectTurn(turn);
    expect(record.types).toEqual(['text_delta', 'output_repair', 'text_delta', 'error', 'turn_complete']);
    expect(record.payloads.at(-1)).toEqual({ type: 'turn_complete', usage: expect.any(Object) });
    const error = record.errors[0] as AgentError & { validationErrors: string[]; rawText: string };
    expect(error.code).toBe('OUTPUT_INVALID');
    expect(error.rawText).toBe('{"city":"Oslo"}');
    expect(error.validationErrors.some((line) => line.includes('celsius'))).toBe(true);
    const settled = await turn.done;
    expect(settled.status).toBe('failed');
    expect(settled).not.toHaveProperty('output');
    expect((await turn.done).status).toBe('failed');
    // Exactly one repair round: two model calls, and the raw answers stay in the context.
    expect(turnRequests(provider)).toHaveLength(2);
    const assistants = session.messages().filter((message) => message.type === 'assistant');
    expect(assistants.map((message) => message.content)).toEqual([
      [{ type: 'text', text: 'It is cold in Oslo.' }],
      [{ type: 'text', text: '{"city":"Oslo"}' }],
    ]);
  });

  test('the repair round is used once per turn, even when the repaired answer calls tools first', async () => {
    const provider = new ScriptedModelProvider({
      responses: [
        [{ type: 'text', text: '{}' }],
        [{ type: 'tool_call', toolName: 'thermometer', callId: 'after-repair' }],
        [{ type: 'text', text: '{"city":7}' }],
      ],
    });
    const { agent } = await buildAgent({ provider, tools: [defineTool({ name: 'thermometer' })] });
    const session = await agent.newSession();
    const turn = await session.sendMessage('weather?', { output: { schema: WEATHER } });
    const record = await collectTurn(turn);
    expect(record.types).toEqual([
      'text_delta',
      'output_repair',
      'tool_call_start',
      'tool_call_end',
      'text_delta',
      'error',
      'turn_complete',
    ]);
    expect(record.errors.map((error) => error.code)).toEqual(['OUTPUT_INVALID']);
    expect(JSON.parse(JSON.stringify(record.errors[0])).validationErrors.length).toBeGreaterThan(0);
    expect(turnRequests(provider)).toHaveLength(3);
    expect(session.messages().filter((message) => message.type === 'system')).toHaveLength(1);
  });

  test('a bad schema or bad options reject the call with INVALID_INPUT and start no turn', async () => {
    const provider = new ScriptedModelProvider();
    const { agent } = await buildAgent({ provider });
    const session = await agent.newSession();
    const bad: unknown[] = [
      { output: { schema: { type: 'string' } } },
      { output: { schema: { type: 'object', properties: { a: { type: 'no-such-type' } } } } },
      { output: { schema: { type: 'object', required: 'a' } } },
      { output: { schema: WEATHER, name: 'has space' } },
      { output: { schema: WEATHER, description: 7 } },
      { output: 'json' },
      'output',
    ];
    for (const options of bad) {
      await expect(
        session.sendMessage('hi', options as Parameters<typeof session.sendMessage>[1]),
      ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    }
    expect(session.isTurnRunning).toBe(false);
    expect(provider.requests).toHaveLength(0);
  });

  test('a model without native structured output is told the schema in the system prompt; a fenced answer is accepted', async () => {
    const provider = new ScriptedModelProvider({
      models: [
        scriptedModel({
          capabilities: { toolUse: true, vision: false, streaming: true, structuredOutput: false },
        }),
      ],
      responses: [[{ type: 'text', text: '```json\n{"city":"Rome","celsius":20}\n```' }]],
    });
    const { agent } = await buildAgent({ provider });
    const session = await agent.newSession();
    const turn = await session.sendMessage('weather?', { output: { schema: WEATHER } });
    await collectTurn(turn);
    expect((await turn.done).output).toEqual({ city: 'Rome', celsius: 20 });
    const request = turnRequests(provider)[0];
    expect(request?.systemPromptParts.dynamic).toContain(JSON.stringify(WEATHER));
  });

  test('a cancelled structured turn carries no output', async () => {
    const provider = new ScriptedModelProvider({
      responses: [[{ type: 'text', text: '{"ci' }, { type: 'hang' }]],
    });
    const { agent } = await buildAgent({ provider });
    const session = await agent.newSession();
    const turn = await session.sendMessage('weather?', { output: { schema: WEATHER } });
    for await (const event of turn) if (event.payload.type === 'text_delta') turn.cancel();
    const settled = await turn.done;
    expect(settled.status).toBe('cancelled');
    expect(settled).not.toHaveProperty('output');
  });
});

test('a model whose capabilities.structuredOutput is not a boolean is refused at build()', async () => {
  const provider = new ScriptedModelProvider({
    models: [
      scriptedModel({
        capabilities: {
          toolUse: true,
          vision: true,
          streaming: true,
          structuredOutput: 'yes' as unknown as boolean,
        },
      }),
    ],
  });
  await expect(buildAgent({ provider })).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
});

describe('resume of a session whose last turn had a structured answer', () => {
  test('the resumed context equals the live one, repair round included, and the next turn sees it', async () => {
    const storage = new InMemorySessionStorage();
    const provider = new ScriptedModelProvider({
      responses: [
        [{ type: 'tool_call', toolName: 'thermometer', arguments: {}, callId: 'r1' }],
        [{ type: 'text', text: 'not json' }],
        [{ type: 'json', value: { city: 'Oslo', celsius: 1 } }],
        [{ type: 'text', text: 'It was 1 degree.' }],
      ],
    });
    const thermometer = defineTool({ name: 'thermometer' });
    const first = await buildAgent({ provider, tools: [thermometer], sessionStorage: storage });
    const session = await first.agent.newSession();
    const turn = await session.sendMessage('weather?', { output: { schema: WEATHER } });
    await collectTurn(turn);
    expect((await turn.done).output).toEqual({ city: 'Oslo', celsius: 1 });
    const live = session.messages();
    await session.close();
    await first.agent.shutdown();

    const second = await buildAgent({ provider, tools: [thermometer], sessionStorage: storage });
    const resumed = await second.agent.resumeSession(session.id);
    expect(resumed.messages()).toEqual(live);
    expect(live.map((message) => message.type)).toEqual([
      'user',
      'tool_call',
      'tool_result',
      'assistant',
      'system',
      'assistant',
    ]);
    await collectTurn(await resumed.sendMessage('and yesterday?'));
    const next = turnRequests(provider).at(-1);
    expect(next?.responseFormat).toBeUndefined();
    expect(next?.messages.slice(0, live.length)).toEqual(live);
  });
});
