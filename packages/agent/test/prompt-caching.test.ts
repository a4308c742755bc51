import { afterEach, describe, expect, test } from 'vitest';
import { type ChatRequest, type HookPayload, type HookResult, InMemoryMemoryStorage } from '../src/index.js';
import { ScriptedModelProvider, scriptedModel } from '../src/testing/index.js';
import {
  buildAgent,
  defineTool,
  hookPlugin,
  requestsOf,
  runTurn,
  shutdownAgents,
} from './support/agent-fixtures.js';

afterEach(shutdownAgents);

/** A TurnStart hook that adds a section naming the turn: the dynamic part differs every turn. */
function turnCounterPlugin() {
  let turn = 0;
  return hookPlugin({
    id: 'counter',
    hooks: {
      TurnStart: (payload: HookPayload): HookResult => {
        turn += 1;
        const data = payload.data as { userInput: string; dynamicSections: string[] };
        return { type: 'continue_with', data: { ...data, dynamicSections: [`This is turn ${turn}.`] } };
      },
    },
  });
}

/** The messages before the dynamic part, i.e. the history the previous turns left. */
function beforeDynamic(request: ChatRequest): unknown[] {
  const at = request.messages.findIndex(
    (message) => message.type === 'system' && message.content === request.systemPromptParts.dynamic,
  );
  expect(at).toBeGreaterThanOrEqual(0);
  return request.messages.slice(0, at);
}

describe('the request layout keeps a prefix cache valid', () => {
  test('a changed TurnStart section or memory changes neither the system prompt nor the earlier history', async () => {
    const provider = new ScriptedModelProvider({
      responses: [
        [{ type: 'tool_call', toolName: 'look', callId: 'c1' }],
        [{ type: 'text', text: 'first answer' }],
        [{ type: 'text', text: 'second answer' }],
      ],
      byPurpose: {
        memory_extraction: [
          [{ type: 'text', text: JSON.stringify({ memories: [{ content: 'The user likes tea.' }] }) }],
          [{ type: 'text', text: JSON.stringify({ memories: [] }) }],
        ],
      },
    });
    const { agent } = await buildAgent({
      provider,
      tools: [defineTool({ name: 'look' })],
      plugins: [turnCounterPlugin()],
      memoryStorage: new InMemoryMemoryStorage(),
      config: {
        systemInstructions: ['Answer briefly.'],
        environmentContext: { cwd: '/work', date: '2026-12-03' },
        memoryCheckpointInterval: 1,
      },
    });
    const session = await agent.newSession();
    await runTurn(session, 'first question');
    await runTurn(session, 'second question');

    const [step1, step2, nextTurn] = requestsOf(provider, 'turn');
    if (step1 === undefined || step2 === undefined || nextTurn === undefined)
      throw new Error('3 requests expected');
    // The dynamic part really changed between the turns: a new section and a new memory.
    expect(step1.systemPromptParts.dynamic).toContain('This is turn 1.');
    expect(nextTurn.systemPromptParts.dynamic).toContain('This is turn 2.');
    expect(nextTurn.systemPromptParts.dynamic).toContain('The user likes tea.');
    expect(step1.systemPromptParts.dynamic).not.toContain('tea');
    // The system prompt is the same text for all three.
    for (const request of [step1, step2, nextTurn]) expect(request.systemPrompt).toBe(step1.systemPrompt);
    expect(step1.systemPrompt).toContain('Answer briefly.');
    expect(step1.systemPrompt).not.toContain('/work');
    // Within a turn, each step's messages start with the previous step's.
    expect(step2.messages.slice(0, step1.messages.length)).toEqual(step1.messages);
    // The next turn keeps the first turn's history in place; only the dynamic part moved past it.
    const firstTurnHistory = step2.messages.filter((message) => message.type !== 'system');
    expect(beforeDynamic(nextTurn).slice(0, firstTurnHistory.length)).toEqual(firstTurnHistory);
    expect(nextTurn.messages.at(-1)).toEqual({
      type: 'user',
      content: [{ type: 'text', text: 'second question' }],
    });
    expect(nextTurn.messages.at(-2)).toEqual({ type: 'system', content: nextTurn.systemPromptParts.dynamic });
  });

  test('turn, compaction and memory requests carry the session id', async () => {
    const provider = new ScriptedModelProvider({
      models: [scriptedModel({ contextWindow: 2_000 })],
      responses: Array.from({ length: 10 }, (_, index) => [
        { type: 'text', text: `answer ${index}`.padEnd(400, '.') },
      ]),
      byPurpose: {
        compaction: [[{ type: 'text', text: 'SUMMARY' }]],
        memory_extraction: Array.from({ length: 10 }, () => [
          { type: 'text', text: JSON.stringify({ memories: [] }) },
        ]),
      },
    });
    const { agent } = await buildAgent({
      provider,
      memoryStorage: new InMemoryMemoryStorage(),
      config: { compactThreshold: 0.5, memoryCheckpointInterval: 1 },
    });
    const session = await agent.newSession();
    for (let index = 0; index < 8; index += 1) await runTurn(session, `question ${index}`.padEnd(400, '.'));

    for (const purpose of ['turn', 'compaction', 'memory_extraction'] as const) {
      const requests = requestsOf(provider, purpose);
      expect(requests.length, purpose).toBeGreaterThan(0);
      for (const request of requests) expect(request.sessionId, purpose).toBe(session.id);
    }
  });

  test("sessions of one agent share its stable prompt; an override stays its own session's", async () => {
    const provider = new ScriptedModelProvider({
      responses: Array.from({ length: 4 }, (_, index) => [{ type: 'text', text: `answer ${index}` }]),
    });
    const { agent } = await buildAgent({
      provider,
      config: { systemInstructions: ['Answer briefly.'], maxActiveSessions: 4 },
    });
    const otherProvider = new ScriptedModelProvider({ responses: [[{ type: 'text', text: 'other' }]] });
    const other = await buildAgent({
      provider: otherProvider,
      config: { systemInstructions: ['Answer at length.'] },
    });
    await runTurn(await agent.newSession(), 'first');
    await runTurn(await agent.newSession({ systemPromptOverride: 'You work on billing.' }), 'second');
    await runTurn(await agent.newSession(), 'third');
    await runTurn(await other.agent.newSession(), 'elsewhere');

    const [first, overridden, third] = requestsOf(provider, 'turn');
    const [elsewhere] = requestsOf(otherProvider, 'turn');
    if (first === undefined || overridden === undefined || third === undefined || elsewhere === undefined)
      throw new Error('4 requests expected');
    expect(first.systemPrompt).toContain('Answer briefly.');
    expect(overridden.systemPrompt).toContain('Answer briefly.');
    expect(overridden.systemPrompt).toContain('You work on billing.');
    expect(third.systemPrompt).toBe(first.systemPrompt);
    expect(third.systemPrompt).not.toContain('billing');
    expect(elsewhere.systemPrompt).toContain('Answer at length.');
    expect(elsewhere.systemPrompt).not.toContain('Answer briefly.');
  });
});
