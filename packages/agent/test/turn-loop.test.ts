import { afterEach, describe, expect, test } from 'vitest';
import { ACTIVATE_SKILL_TOOL_NAME, AgentError, type ModelProvider, templates } from '../src/index.js';
import { ScriptedModelProvider, scriptedModel } from '../src/testing/index.js';
import {
  assistantMessage,
  buildAgent,
  ControllableSessionStorage,
  deferred,
  defineTool,
  runTurn,
  shutdownAgents,
  storedPayloads,
  userMessage,
} from './support/agent-fixtures.js';

afterEach(shutdownAgents);

describe('streaming', () => {
  test('text and reasoning are streamed; reasoning blocks come first in the message, signature kept', async () => {
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'text', text: 'The answer ' },
          { type: 'reasoning', text: 'Let me think.', signature: 'sig-1' },
          { type: 'reasoning', text: 'Second thought' },
          { type: 'text', text: 'is 42.' },
        ],
      ],
    });
    const storage = new ControllableSessionStorage();
    const { agent } = await buildAgent({ provider, sessionStorage: storage });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'question');

    expect(turn.payloads).toEqual([
      { type: 'text_delta', text: 'The answer ' },
      { type: 'reasoning_delta', text: 'Let me think.' },
      { type: 'reasoning_delta', text: 'Second thought' },
      { type: 'text_delta', text: 'is 42.' },
      { type: 'turn_complete' },
    ]);
    const content = [
      { type: 'reasoning', text: 'Let me think.', signature: 'sig-1' },
      { type: 'reasoning', text: 'Second thought' },
      { type: 'text', text: 'The answer is 42.' },
    ];
    expect(session.messages()).toEqual([
      userMessage('question'),
      { type: 'assistant', content, status: 'complete' },
    ]);
    expect((await storedPayloads(storage, session.id)).at(-1)).toEqual({
      type: 'assistant_message',
      content,
      status: 'complete',
    });
  });
});

describe('tools', () => {
  test('a tool round trip: events, then the next request holds assistant, tool_call and tool_result in order', async () => {
    const received: unknown[] = [];
    const echo = defineTool({
      name: 'echo',
      execute: (input) => {
        received.push(input.arguments);
        return { content: 'echoed: hi', isError: false };
      },
    });
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'text', text: 'Calling echo.' },
          { type: 'tool_call', toolName: 'echo', arguments: { text: 'hi' }, callId: 'c1' },
        ],
        [{ type: 'text', text: 'Done.' }],
      ],
    });
    const { agent } = await buildAgent({ provider, tools: [echo] });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'please echo');

    expect(received).toEqual([{ text: 'hi' }]);
    expect(turn.types).toEqual([
      'text_delta',
      'tool_call_start',
      'tool_call_end',
      'text_delta',
      'turn_complete',
    ]);
    expect(turn.payloads[1]).toEqual({
      type: 'tool_call_start',
      callId: 'c1',
      toolName: 'echo',
      arguments: { text: 'hi' },
    });
    expect(turn.payloads[2]).toMatchObject({
      type: 'tool_call_end',
      callId: 'c1',
      toolName: 'echo',
      output: { content: 'echoed: hi', isError: false },
      success: true,
    });
    expect(provider.requests).toHaveLength(2);
    expect(provider.requests[1]?.messages).toEqual([
      userMessage('please echo'),
      assistantMessage('Calling echo.'),
      { type: 'tool_call', callId: 'c1', toolName: 'echo', arguments: { text: 'hi' } },
      { type: 'tool_result', callId: 'c1', content: 'echoed: hi', isError: false },
    ]);
    expect(session.messages().at(-1)).toEqual(assistantMessage('Done.'));
  });

  test('two read-only tools of one batch run at the same time', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const secondStarted = deferred();
    const track = (name: string, wait: () => Promise<void>) =>
      defineTool({
        name,
        execute: async () => {
          inFlight += 1;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await wait();
          inFlight -= 1;
          return { content: `${name} done`, isError: false };
        },
      });
    // `first` can only finish once `second` has started; run serially, it would time out instead.
    const first = track('first', () => secondStarted.promise);
    const second = track('second', async () => secondStarted.resolve());
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'tool_call', toolName: 'first' },
          { type: 'tool_call', toolName: 'second' },
        ],
        [{ type: 'text', text: 'both done' }],
      ],
    });
    const { agent } = await buildAgent({
      provider,
      tools: [first, second],
      config: { toolTimeoutMs: 2_000 },
    });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'go');

    expect(maxInFlight).toBe(2);
    expect(turn.types.at(-1)).toBe('turn_complete');
    expect(session.messages().filter((message) => message.type === 'tool_result')).toEqual([
      { type: 'tool_result', callId: 'call_1', content: 'first done', isError: false },
      { type: 'tool_result', callId: 'call_2', content: 'second done', isError: false },
    ]);
  });

  test('a batch with a mutating tool runs one call after another', async () => {
    const log: string[] = [];
    const track = (name: string, isMutating: boolean) =>
      defineTool({
        name,
        isMutating,
        execute: async () => {
          log.push(`start ${name}`);
          await new Promise((resolve) => setImmediate(resolve));
          log.push(`end ${name}`);
          return { content: name, isError: false };
        },
      });
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'tool_call', toolName: 'read' },
          { type: 'tool_call', toolName: 'write' },
          { type: 'tool_call', toolName: 'read' },
        ],
        [{ type: 'text', text: 'ok' }],
      ],
    });
    const { agent } = await buildAgent({ provider, tools: [track('read', false), track('write', true)] });
    const session = await agent.newSession();
    await runTurn(session, 'go');

    // Concurrently, the three would all start before any ends.
    expect(log).toEqual(['start read', 'end read', 'start write', 'end write', 'start read', 'end read']);
  });

  test('an answer with tool calls and no text adds no empty assistant message (SPEC §5.12)', async () => {
    const storage = new ControllableSessionStorage();
    const provider = new ScriptedModelProvider({
      responses: [[{ type: 'tool_call', toolName: 'look', callId: 'c1' }], [{ type: 'text', text: 'seen' }]],
    });
    const { agent } = await buildAgent({
      provider,
      tools: [defineTool({ name: 'look' })],
      sessionStorage: storage,
    });
    const session = await agent.newSession();
    await runTurn(session, 'look');

    expect(session.messages()).toEqual([
      userMessage('look'),
      { type: 'tool_call', callId: 'c1', toolName: 'look', arguments: {} },
      { type: 'tool_result', callId: 'c1', content: 'look ok', isError: false },
      assistantMessage('seen'),
    ]);
    const saved = await storedPayloads(storage, session.id);
    expect(saved.filter((payload) => payload.type === 'assistant_message')).toHaveLength(1);
  });

  test('the tool-call limit: 3 of 5 calls run, 2 get errors, a notice, MAX_TOOL_CALLS_EXCEEDED, turn_complete', async () => {
    let runs = 0;
    const count = defineTool({
      name: 'count',
      execute: () => {
        runs += 1;
        return { content: `run ${runs}`, isError: false };
      },
    });
    const calls = [1, 2, 3, 4, 5].map((n) => ({
      type: 'tool_call' as const,
      toolName: 'count',
      callId: `c${n}`,
    }));
    const provider = new ScriptedModelProvider({ responses: [calls, [{ type: 'text', text: 'never' }]] });
    const { agent } = await buildAgent({ provider, tools: [count], config: { maxToolCallsPerTurn: 3 } });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'count to five');

    expect(runs).toBe(3);
    expect(provider.requests).toHaveLength(1);
    const results = session.messages().filter((message) => message.type === 'tool_result');
    expect(results.map((result) => result.isError)).toEqual([false, false, false, true, true]);
    const notice = templates.fillTemplate(templates.TOOL_LIMIT_NOTICE, { limit: 3 });
    expect(notice).toContain('3');
    expect(session.messages().at(-1)).toEqual({ type: 'system', content: notice });
    expect(turn.types.slice(-2)).toEqual(['error', 'turn_complete']);
    expect(turn.errors.map((error) => error.code)).toEqual(['MAX_TOOL_CALLS_EXCEEDED']);
  });
});

describe('provider failures', () => {
  test('an error before any output: error PROVIDER_ERROR, turn_complete, no assistant message saved', async () => {
    const storage = new ControllableSessionStorage();
    const failure = new AgentError({ code: 'PROVIDER_ERROR', message: 'HTTP 503', retryable: true });
    const provider = new ScriptedModelProvider({ responses: [[{ type: 'error', error: failure }]] });
    const { agent } = await buildAgent({ provider, sessionStorage: storage });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'hello');

    expect(turn.types).toEqual(['error', 'turn_complete']);
    expect(turn.errors[0]?.code).toBe('PROVIDER_ERROR');
    expect(turn.errors[0]?.retryable).toBe(true);
    expect(session.messages()).toEqual([userMessage('hello')]);
    const saved = await storedPayloads(storage, session.id);
    expect(saved.map((payload) => payload.type)).toEqual(['metadata', 'user_message']);
  });

  test.each([
    [
      'while streaming',
      new ScriptedModelProvider({ responses: [[{ type: 'error', error: new Error('socket') }]] }),
    ],
    [
      'from chat() itself',
      {
        id: 'throwing',
        models: [scriptedModel()],
        chat: () => {
          throw new Error('socket');
        },
      } satisfies ModelProvider,
    ],
  ])('a plain Error thrown %s becomes PROVIDER_ERROR, retryable false', async (_where, provider) => {
    const { agent } = await buildAgent({ provider });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'hello');

    expect(turn.types).toEqual(['error', 'turn_complete']);
    expect(turn.errors[0]).toBeInstanceOf(AgentError);
    expect(turn.errors[0]?.code).toBe('PROVIDER_ERROR');
    expect(turn.errors[0]?.retryable).toBe(false);
    expect(turn.errors[0]?.message).toContain('socket');
  });

  test('an error mid-stream: the partial is saved incomplete and the interrupted notice follows it', async () => {
    const storage = new ControllableSessionStorage();
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'text', text: 'Partial ans' },
          { type: 'error', error: new AgentError({ code: 'PROVIDER_ERROR', message: 'reset' }) },
        ],
        [{ type: 'text', text: 'Again.' }],
      ],
    });
    const { agent } = await buildAgent({ provider, sessionStorage: storage });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'hello');

    expect(turn.types).toEqual(['text_delta', 'error', 'turn_complete']);
    const partial = {
      type: 'assistant',
      content: [{ type: 'text', text: 'Partial ans' }],
      status: 'incomplete',
    };
    const notice = { type: 'system', content: templates.INTERRUPTED_MESSAGE_NOTICE };
    expect(session.messages()).toEqual([userMessage('hello'), partial, notice]);
    const saved = await storedPayloads(storage, session.id);
    expect(saved.at(-1)).toEqual({ ...partial, type: 'assistant_message' });

    await runTurn(session, 'go on');
    expect(provider.requests[1]?.messages.slice(0, 3)).toEqual([userMessage('hello'), partial, notice]);
  });
});

describe('the request', () => {
  test('purpose, tools and the system prompt parts where 0006 §10 puts them', async () => {
    const provider = new ScriptedModelProvider({
      responses: [
        [{ type: 'tool_call', toolName: 'look' }],
        [{ type: 'text', text: 'one' }],
        [{ type: 'text', text: 'two' }],
      ],
    });
    const { agent } = await buildAgent({
      provider,
      tools: [defineTool({ name: 'look' })],
      config: {
        systemInstructions: ['Answer briefly.'],
        personality: { name: 'Yoyo', description: 'A calm helper.' },
        environmentContext: { cwd: '/work', platform: 'linux' },
      },
    });
    const session = await agent.newSession({ systemPromptOverride: 'Session override.' });
    await runTurn(session, 'first');
    await runTurn(session, 'second');

    expect(provider.requests).toHaveLength(3);
    const stables = provider.requests.map((request) => request.systemPromptParts.stable);
    expect(new Set(stables).size).toBe(1);
    for (const request of provider.requests) {
      const { stable, dynamic } = request.systemPromptParts;
      expect(request.purpose).toBe('turn');
      expect(request.modelId).toBe('scripted-model');
      expect(request.tools.map((tool) => tool.name)).toEqual(['look']);
      expect(stable).not.toBe('');
      expect(dynamic).not.toBe('');
      expect(request.systemPrompt).toBe(`${stable}\n\n${dynamic}`);
    }
    const { stable, dynamic } = provider.requests[0]!.systemPromptParts;
    const instructions = stable.indexOf('Answer briefly.');
    const override = stable.indexOf('Session override.');
    const personality = stable.indexOf('A calm helper.');
    expect(instructions).toBeGreaterThanOrEqual(0);
    expect(override).toBeGreaterThan(instructions);
    expect(personality).toBeGreaterThan(override);
    expect(stable).toContain('Yoyo');
    expect(stable).not.toContain('/work');
    expect(dynamic).toContain('/work');
    expect(dynamic).toContain('linux');
    expect(dynamic).not.toContain('Answer briefly.');
  });
});

describe('skills', () => {
  const review = { name: 'review', description: 'Reviews code.', prompt: 'Check every line twice.' };

  test("'/review please' injects the skill once, before the user message; no activate_skill offered", async () => {
    const provider = new ScriptedModelProvider({ responses: [[{ type: 'text', text: 'ok' }]] });
    const { agent } = await buildAgent({ provider, skills: [review] });
    const session = await agent.newSession();
    await runTurn(session, '/review please, /review twice');

    const messages = provider.requests[0]?.messages ?? [];
    expect(messages).toHaveLength(2);
    expect(messages[0]).toEqual({
      type: 'system',
      content: '<skill>\n<name>review</name>\nCheck every line twice.\n</skill>',
    });
    expect(messages[1]).toEqual(userMessage('/review please, /review twice'));
    expect(provider.requests[0]?.tools.map((tool) => tool.name)).not.toContain(ACTIVATE_SKILL_TOOL_NAME);
  });

  test('an implicit skill is listed and activate_skill is offered and returns its prompt', async () => {
    const provider = new ScriptedModelProvider({
      responses: [
        [
          {
            type: 'tool_call',
            toolName: ACTIVATE_SKILL_TOOL_NAME,
            arguments: { name: 'review' },
            callId: 's1',
          },
        ],
        [{ type: 'text', text: 'following it' }],
      ],
    });
    const { agent } = await buildAgent({ provider, skills: [{ ...review, allowImplicitInvocation: true }] });
    const session = await agent.newSession();
    await runTurn(session, 'look at my code');

    const first = provider.requests[0];
    expect(first?.tools.map((tool) => tool.name)).toEqual([ACTIVATE_SKILL_TOOL_NAME]);
    expect(first?.systemPromptParts.stable).toContain('review');
    expect(first?.systemPromptParts.stable).toContain('Reviews code.');
    const result = session.messages().find((message) => message.type === 'tool_result');
    expect(result).toMatchObject({ callId: 's1', isError: false });
    expect(result?.type === 'tool_result' && result.content).toContain('Check every line twice.');
  });
});

describe('event invariants', () => {
  test('each turn ends with one terminal event; sequence increases across the turns of a session', async () => {
    const provider = new ScriptedModelProvider({
      responses: [
        [{ type: 'text', text: 'a' }],
        [{ type: 'error', error: new Error('down') }],
        [{ type: 'tool_call', toolName: 'look' }],
        [{ type: 'text', text: 'b' }],
      ],
    });
    const { agent } = await buildAgent({ provider, tools: [defineTool({ name: 'look' })] });
    const session = await agent.newSession();
    const turns = [
      await runTurn(session, 'one'),
      await runTurn(session, 'two'),
      await runTurn(session, 'three'),
    ];

    const sequences = turns.flatMap((turn) => turn.events.map((event) => event.sequence));
    expect(sequences).toEqual([...sequences].sort((a, b) => a - b));
    expect(new Set(sequences).size).toBe(sequences.length);
    expect(new Set(turns.map((turn) => turn.events[0]?.turnId)).size).toBe(3);
    for (const turn of turns) expect(turn.events.every((event) => event.sessionId === session.id)).toBe(true);
  });
});
