import {
  type Agent,
  AgentBuilder,
  type HookPayload,
  type HookResult,
  InMemoryMemoryStorage,
  type ModelProvider,
  type Plugin,
} from '@youyou/agent';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { startWireServer, type WireServer } from '../../../test-support/wire-server.js';
import { openaiChatProvider, openaiCompatibleProvider, openaiResponsesProvider } from '../src/index.js';
import { collect, DIALECTS, lookupTool, TEST_API_KEY } from './support/dialects.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await server.close();
});

type Json = Record<string, unknown>;

/** A plugin whose TurnStart section names the turn, so the dynamic part changes every turn. */
function turnCounter(): Plugin {
  let turn = 0;
  return {
    id: 'counter',
    displayName: 'Counter',
    description: 'Names the turn.',
    initialize: async () => undefined,
    apply: (context) => {
      context.tap('TurnStart', (payload: HookPayload): HookResult => {
        turn += 1;
        const data = payload.data as { userInput: string; dynamicSections: string[] };
        return { type: 'continue_with', data: { ...data, dynamicSections: [`This is turn ${turn}.`] } };
      });
    },
    shutdown: async () => undefined,
  };
}

function cachingAgent(provider: ModelProvider, modelId: string, memory = true): Promise<Agent> {
  const builder = new AgentBuilder({
    defaultModel: modelId,
    systemInstructions: ['You are a test agent.'],
    environmentContext: { cwd: '/work', date: '2026-12-03' },
    onBackgroundError: () => undefined,
  })
    .registerModelProvider(provider)
    .registerTool(lookupTool())
    .registerPlugin(turnCounter());
  return (memory ? builder.registerMemoryStorage(new InMemoryMemoryStorage()) : builder).build();
}

function bodyAt(index: number): Json {
  const request = server.requests[index];
  if (request === undefined) throw new Error(`the server got no request #${index}`);
  return request.body as Json;
}

const CACHE_KEY = /^youyou-[0-9a-f]{32}$/;

describe.each(DIALECTS)('$name: prompt caching', (dialect) => {
  const sendsKey = dialect.name !== 'openai-compatible';
  /** The conversation as the API takes it: Chat Completions `messages`, Responses `input`. */
  const conversation = (body: Json): Json[] =>
    (dialect.api === 'chat' ? body.messages : body.input) as Json[];
  const conversationText = (index: number): string => JSON.stringify(conversation(bodyAt(index)));

  test('each step extends the previous request byte for byte; a changed TurnStart section leaves the system message as it was', async () => {
    server.enqueue(
      dialect.toolCalls([{ id: 'call_a', name: 'lookup', fragments: ['{"q":"apple"}'] }]),
      dialect.text(['Apple found.']),
      dialect.text(['Second.']),
    );
    const agent = await cachingAgent(dialect.provider({ server, maxRetries: 0 }), dialect.modelId);
    const session = await agent.newSession();
    await collect(await session.sendMessage('look up apple'));
    await collect(await session.sendMessage('and now?'));
    expect(server.requests).toHaveLength(3);
    for (let index = 0; index < 3; index += 1) expect(dialect.problems(bodyAt(index))).toEqual([]);

    // Step 1 of the tool loop is a byte prefix of step 2: only the call and its result follow.
    const step1 = conversationText(0);
    const step2 = conversationText(1);
    expect(step2.startsWith(step1.slice(0, -1))).toBe(true);
    expect(step2.length).toBeGreaterThan(step1.length);

    // The first message (the system prompt) is the same bytes in both turns, the dynamic part is not in it.
    const first = conversation(bodyAt(0))[0];
    expect(first?.role).toBe(dialect.api === 'chat' ? 'system' : 'developer');
    expect(String(first?.content)).toContain('You are a test agent.');
    const systemBytes = [0, 1, 2].map((index) => JSON.stringify(conversation(bodyAt(index))[0]));
    expect(new Set(systemBytes).size).toBe(1);
    expect(systemBytes[0]).not.toContain('This is turn');
    expect(systemBytes[0]).not.toContain('/work');

    // The dynamic part sits right before the newest user message, with this turn's section.
    const turn2 = conversation(bodyAt(2));
    expect(turn2.at(-1)).toMatchObject({ role: 'user', content: 'and now?' });
    expect(String(turn2.at(-2)?.content)).toContain('This is turn 2.');
    expect(String(turn2.at(-2)?.content)).toContain('cwd: /work');
    expect(JSON.stringify(turn2)).not.toContain('This is turn 1.');
    // Everything of turn 1 before its dynamic part is unchanged in turn 2.
    const turn1 = conversation(bodyAt(1));
    const dynamicAt = turn1.findIndex((message) => String(message.content).includes('This is turn 1.'));
    expect(dynamicAt).toBeGreaterThan(0);
    expect(turn2.slice(0, dynamicAt)).toEqual(turn1.slice(0, dynamicAt));
    await agent.shutdown();
  });

  test('a tool loop of three steps: each request extends the one before byte for byte', async () => {
    server.enqueue(
      dialect.toolCalls([{ id: 'call_a', name: 'lookup', fragments: ['{"q":"apple"}'] }]),
      dialect.toolCalls([{ id: 'call_b', name: 'lookup', fragments: ['{"q":"pear"}'] }]),
      dialect.text(['Both found.']),
    );
    const agent = await cachingAgent(dialect.provider({ server, maxRetries: 0 }), dialect.modelId, false);
    const session = await agent.newSession();
    await collect(await session.sendMessage('look up two fruits'));
    expect(server.requests).toHaveLength(3);
    for (const index of [1, 2]) {
      const before = conversationText(index - 1);
      const after = conversationText(index);
      expect(after.startsWith(before.slice(0, -1)), `step ${index + 1}`).toBe(true);
      expect(after.length).toBeGreaterThan(before.length);
      expect(dialect.problems(bodyAt(index))).toEqual([]);
    }
    await agent.shutdown();
  });

  test(`prompt_cache_key is ${sendsKey ? 'sent' : 'not sent by default'}: one per session, on turn and memory calls`, async () => {
    server.enqueue(dialect.text(['One.']), dialect.text(['{"memories": []}']), dialect.text(['Other.']));
    const agent = await cachingAgent(dialect.provider({ server, maxRetries: 0 }), dialect.modelId);
    const session = await agent.newSession();
    await collect(await session.sendMessage('hi'));
    await session.close(); // extracts memories: a request of purpose memory_extraction
    const other = await agent.newSession();
    await collect(await other.sendMessage('hi'));
    expect(server.requests).toHaveLength(3);
    const keys = [0, 1, 2].map((index) => bodyAt(index).prompt_cache_key);
    if (sendsKey) {
      expect(keys[0]).toMatch(CACHE_KEY);
      // The memory extraction of the session shares its key; another session has its own.
      expect(keys[1]).toBe(keys[0]);
      expect(keys[2]).toMatch(CACHE_KEY);
      expect(keys[2]).not.toBe(keys[0]);
      for (const request of server.requests) expect(request.rawBody).not.toContain(session.id);
    } else {
      for (const index of [0, 1, 2]) expect(bodyAt(index)).not.toHaveProperty('prompt_cache_key');
    }
    await agent.shutdown();
  });
});

describe('the promptCacheKey option', () => {
  const models = [
    {
      id: 'llama3.2',
      displayName: 'Llama 3.2',
      contextWindow: 131_072,
      capabilities: { toolUse: true, vision: false, streaming: true },
    },
  ];

  test('turns the key on for a compatible server and off for OpenAI; anything but a boolean is refused', async () => {
    const compatible = openaiCompatibleProvider({
      baseURL: `${server.url}/v1`,
      models,
      promptCacheKey: true,
    });
    const chatOff = openaiChatProvider({
      apiKey: TEST_API_KEY,
      baseURL: `${server.url}/v1`,
      promptCacheKey: false,
    });
    const responsesOff = openaiResponsesProvider({
      apiKey: TEST_API_KEY,
      baseURL: `${server.url}/v1`,
      promptCacheKey: false,
    });
    const compatibleDialect = DIALECTS.find((dialect) => dialect.name === 'openai-compatible');
    const responsesDialect = DIALECTS.find((dialect) => dialect.name === 'openai-responses');
    if (compatibleDialect === undefined || responsesDialect === undefined)
      throw new Error('dialects missing');
    server.enqueue(
      compatibleDialect.text(['a']),
      compatibleDialect.text(['b']),
      responsesDialect.text(['c']),
    );
    for (const [provider, modelId] of [
      [compatible, 'llama3.2'],
      [chatOff, 'gpt-4o-mini'],
      [responsesOff, 'gpt-5-mini'],
    ] as const) {
      const agent = await cachingAgent(provider, modelId, false);
      const session = await agent.newSession();
      await collect(await session.sendMessage('hi'));
      await agent.shutdown();
    }
    expect(bodyAt(0).prompt_cache_key).toMatch(CACHE_KEY);
    expect(bodyAt(1)).not.toHaveProperty('prompt_cache_key');
    expect(bodyAt(2)).not.toHaveProperty('prompt_cache_key');

    const wrong = { apiKey: TEST_API_KEY, promptCacheKey: 'yes' as unknown as boolean };
    expect(() => openaiChatProvider(wrong)).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
    expect(() => openaiResponsesProvider(wrong)).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
    expect(() =>
      openaiCompatibleProvider({ baseURL: server.url, models, promptCacheKey: 1 as unknown as boolean }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
  });
});
