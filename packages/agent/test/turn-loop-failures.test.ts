import { afterEach, describe, expect, test } from 'vitest';
import { ACTIVATE_SKILL_TOOL_NAME, AgentError, type ModelProvider, templates } from '../src/index.js';
import { ScriptedModelProvider, scriptedModel } from '../src/testing/index.js';
import {
  buildAgent,
  ControllableSessionStorage,
  defineTool,
  runTurn,
  shutdownAgents,
  storedPayloads,
  userMessage,
} from './support/agent-fixtures.js';

afterEach(shutdownAgents);

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
    // No answer saved; the record that the turn ended tells a resume it was not cut by a crash.
    expect(saved.map((payload) => payload.type)).toEqual(['metadata', 'user_message', 'metadata']);
    expect(saved.at(-1)).toMatchObject({ key: 'turn_ended', value: { status: 'failed' } });
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
    expect(saved.at(-2)).toEqual({ ...partial, type: 'assistant_message' });
    expect(saved.at(-1)).toMatchObject({ key: 'turn_ended', value: { status: 'failed' } });

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
      // The system prompt is the stable part alone; the dynamic part is the system message before the user's.
      expect(request.systemPrompt).toBe(stable);
      const latestUser = request.messages.findLastIndex((message) => message.type === 'user');
      expect(request.messages[latestUser - 1]).toEqual({ type: 'system', content: dynamic });
      expect(request.messages.filter((message) => message.type === 'system')).toHaveLength(1);
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
