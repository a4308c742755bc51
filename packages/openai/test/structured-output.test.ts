import { AgentBuilder, InMemoryMemoryStorage, type JsonSchema } from '@youyou/agent';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { chatFinish, chatTextChunks, sseReply } from '../../../test-support/openai-wire.js';
import { startWireServer, type WireServer } from '../../../test-support/wire-server.js';
import { meetsStrictRules, openaiCompatibleProvider } from '../src/index.js';
import { collect, DIALECTS, lookupTool, startSession, TEST_API_KEY, typesOf } from './support/dialects.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await server.close();
});

type Json = Record<string, unknown>;

/** Meets OpenAI's strict rules: every object closed, every property required. */
const STRICT: JsonSchema = {
  type: 'object',
  properties: {
    title: { type: 'string' },
    tags: {
      type: 'array',
      items: {
        type: 'object',
        properties: { name: { type: 'string' } },
        required: ['name'],
        additionalProperties: false,
      },
    },
  },
  required: ['title', 'tags'],
  additionalProperties: false,
};

/** Breaks them: `note` is optional. */
const LOOSE: JsonSchema = {
  type: 'object',
  properties: { title: { type: 'string' }, note: { type: 'string' } },
  required: ['title'],
  additionalProperties: false,
};

/** The format as the request body carries it, whatever the API calls the field. */
function sentFormat(api: 'chat' | 'responses', body: Json): Json | undefined {
  if (api === 'chat') {
    const format = body.response_format as Json | undefined;
    expect(format?.type).toBe('json_schema');
    return format?.json_schema as Json | undefined;
  }
  const format = (body.text as Json | undefined)?.format as Json | undefined;
  expect(format?.type).toBe('json_schema');
  return format;
}

/** OpenAI's own APIs; the compatible provider is tested on its own below, as it sends the format only to capable models. */
const OPENAI_APIS = DIALECTS.filter((dialect) => dialect.name !== 'openai-compatible');

describe.each(OPENAI_APIS)('$name: structured output on the wire', (dialect) => {
  test('the request carries the json_schema format (strict) and the streamed JSON becomes the output', async () => {
    const answer = { title: 'Plan', tags: [{ name: 'a' }] };
    const text = JSON.stringify(answer);
    server.enqueue(dialect.text([text.slice(0, 7), text.slice(7, 20), text.slice(20)]));
    const { agent, session } = await startSession({
      provider: dialect.provider({ server }),
      modelId: dialect.modelId,
    });
    const turn = await session.sendMessage('make a plan', {
      output: { schema: STRICT, name: 'plan', description: 'A plan.' },
    });
    const events = await collect(turn);
    expect(events.at(-1)?.payload).toEqual({
      type: 'turn_complete',
      usage: expect.any(Object),
      output: answer,
    });
    expect((await turn.done).output).toEqual(answer);
    const body = server.requests[0]?.body as Json;
    expect(dialect.problems(body)).toEqual([]);
    expect(sentFormat(dialect.api, body)).toEqual({
      ...(dialect.api === 'responses' ? { type: 'json_schema' } : {}),
      name: 'plan',
      description: 'A plan.',
      schema: STRICT,
      strict: true,
    });
    await agent.shutdown();
  });

  test('a schema that breaks the strict rules is sent with strict false', async () => {
    server.enqueue(dialect.text(['{"title":"x"}']));
    const { agent, session } = await startSession({
      provider: dialect.provider({ server }),
      modelId: dialect.modelId,
    });
    const turn = await session.sendMessage('title?', { output: { schema: LOOSE } });
    await collect(turn);
    expect((await turn.done).output).toEqual({ title: 'x' });
    const format = sentFormat(dialect.api, server.requests[0]?.body as Json);
    expect(format?.strict).toBe(false);
    expect(format?.name).toBe('output');
    await agent.shutdown();
  });

  test('tools run first; every request of the turn carries the format; a plain turn carries none', async () => {
    server.enqueue(
      dialect.toolCalls([{ id: 'call_1', name: 'lookup', fragments: ['{"q":"plan"}'] }]),
      dialect.text(['{"title":"found","tags":[]}']),
      dialect.text(['ok']),
    );
    const { agent, session } = await startSession({
      provider: dialect.provider({ server }),
      modelId: dialect.modelId,
      tools: [lookupTool()],
    });
    const turn = await session.sendMessage('look it up', { output: { schema: STRICT } });
    const events = await collect(turn);
    // `usage` events (tested in usage.test.ts) left out.
    expect(typesOf(events).filter((type) => type !== 'usage')).toEqual([
      'tool_call_start',
      'tool_call_end',
      'text_delta',
      'turn_complete',
    ]);
    expect((await turn.done).output).toEqual({ title: 'found', tags: [] });
    for (const request of server.requests) {
      expect(sentFormat(dialect.api, request.body as Json)?.schema).toEqual(STRICT);
      expect(dialect.problems(request.body)).toEqual([]);
    }
    await collect(await session.sendMessage('thanks'));
    const plain = server.requests[2]?.body as Json;
    expect(plain.response_format).toBeUndefined();
    expect(plain.text).toBeUndefined();
    await agent.shutdown();
  });
});

describe.each(OPENAI_APIS)('$name: memory extraction', (dialect) => {
  test('asks for the memories schema, strict, and saves the JSON answer', async () => {
    server.enqueue(
      dialect.text(['Noted.']),
      dialect.text(['{"memories":[{"content":"The user likes tea.","category":null}]}']),
    );
    const memory = new InMemoryMemoryStorage();
    const agent = await new AgentBuilder({ defaultModel: dialect.modelId, memoryCheckpointInterval: 1 })
      .registerModelProvider(dialect.provider({ server }))
      .registerMemoryStorage(memory)
      .build();
    const session = await agent.newSession();
    await collect(await session.sendMessage('I like tea.'));
    const format = sentFormat(dialect.api, server.requests[1]?.body as Json);
    expect(format?.name).toBe('memories');
    expect(format?.strict).toBe(true);
    expect((await memory.search('default', '', 10)).map((saved) => saved.content)).toEqual([
      'The user likes tea.',
    ]);
    await agent.shutdown();
  });
});

describe('openai-compatible: structured output on the wire', () => {
  function compatible(structuredOutput: boolean) {
    return openaiCompatibleProvider({
      baseURL: `${server.url}/v1`,
      apiKey: TEST_API_KEY,
      models: [
        {
          id: 'llama3.2',
          displayName: 'Llama 3.2',
          contextWindow: 131_072,
          capabilities: { toolUse: true, vision: false, streaming: true, structuredOutput },
        },
      ],
    });
  }

  test('a model marked structuredOutput gets response_format; the JSON answer is the output', async () => {
    server.enqueue(sseReply([...chatTextChunks(['{"title":"t",', '"tags":[]}']), ...chatFinish()]));
    const { agent, session } = await startSession({ provider: compatible(true), modelId: 'llama3.2' });
    const turn = await session.sendMessage('go', { output: { schema: STRICT } });
    await collect(turn);
    expect((await turn.done).output).toEqual({ title: 't', tags: [] });
    const body = server.requests[0]?.body as Json;
    expect(sentFormat('chat', body)).toEqual({ name: 'output', schema: STRICT, strict: true });
    await agent.shutdown();
  });

  test('a model not marked gets no response_format (older servers refuse it); the schema is in a system message', async () => {
    server.enqueue(sseReply([...chatTextChunks(['{"title":"t","tags":[]}']), ...chatFinish()]));
    const { agent, session } = await startSession({ provider: compatible(false), modelId: 'llama3.2' });
    const turn = await session.sendMessage('go', { output: { schema: STRICT } });
    await collect(turn);
    expect((await turn.done).output).toEqual({ title: 't', tags: [] });
    const body = server.requests[0]?.body as Json;
    expect(body.response_format).toBeUndefined();
    // The schema is part of the prompt's dynamic part: a system message before the latest user message.
    const systems = (body.messages as Json[]).filter((message) => message.role === 'system');
    expect(systems.some((message) => String(message.content).includes(JSON.stringify(STRICT)))).toBe(true);
    await agent.shutdown();
  });
});

describe('meetsStrictRules', () => {
  test('accepts closed objects with every property required, anywhere in the schema', () => {
    expect(meetsStrictRules(STRICT)).toBe(true);
    expect(
      meetsStrictRules({
        type: 'object',
        properties: { a: { anyOf: [{ type: 'string' }, { $ref: '#/$defs/n' }] } },
        required: ['a'],
        additionalProperties: false,
        $defs: { n: { type: 'object', properties: {}, additionalProperties: false } },
      }),
    ).toBe(true);
  });

  test('rejects an optional property or an open object at any depth', () => {
    expect(meetsStrictRules(LOOSE)).toBe(false);
    expect(meetsStrictRules({ type: 'object', properties: {} })).toBe(false);
    expect(
      meetsStrictRules({
        type: 'object',
        properties: {
          list: { type: 'array', items: { type: 'object', properties: { x: { type: 'number' } } } },
        },
        required: ['list'],
        additionalProperties: false,
      }),
    ).toBe(false);
    expect(
      meetsStrictRules({
        type: 'object',
        properties: {},
        additionalProperties: false,
        $defs: { open: { type: 'object', additionalProperties: true } },
      }),
    ).toBe(false);
  });
});
