/**
 * Budgets fail closed: a model call whose worst case (prompt tokens plus output limit) could pass the turn's or
 * the session's limit is not made — no request reaches the provider — and the turn ends with BUDGET_EXCEEDED
 * then turn_complete, carrying the usage of what was spent. Compaction, memory and sub-agent calls count.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { agentTool, InMemoryMemoryStorage, InMemorySessionStorage, type TokenUsage } from '../src/index.js';
import { ScriptedModelProvider, scriptedModel } from '../src/testing/index.js';
import {
  buildAgent,
  collectTurn,
  defineTool,
  expectToolPairsWhole,
  requestsOf,
  runTurn,
  shutdownAgents,
} from './support/agent-fixtures.js';
import { expectCode } from './support/common.js';

afterEach(shutdownAgents);

const USAGE: TokenUsage = { inputTokens: 100, outputTokens: 10 };
/** $1 per million in, $10 per million out; answers of at most 1,000 tokens: a call's output costs at most $0.01. */
const PRICED = scriptedModel({
  pricing: { inputPerMillion: 1, outputPerMillion: 10 },
  maxOutputTokens: 1_000,
});

function toolLoop(calls: number) {
  return Array.from({ length: calls }, () => [
    { type: 'tool_call' as const, toolName: 'look' },
    { type: 'usage' as const, usage: USAGE },
  ]);
}

function budgetErrors(payloads: readonly { type: string; error?: { code: string } }[]) {
  return payloads.filter((payload) => payload.type === 'error' && payload.error?.code === 'BUDGET_EXCEEDED');
}

describe('a turn budget', () => {
  test('maxModelCalls: the call past the limit is not made; the turn ends with BUDGET_EXCEEDED, then turn_complete with the spent usage', async () => {
    const provider = new ScriptedModelProvider({ models: [PRICED], responses: toolLoop(5) });
    const { agent } = await buildAgent({ provider, tools: [defineTool({ name: 'look' })] });
    const session = await agent.newSession();
    const turn = await collectTurn(await session.sendMessage('go', { budget: { maxModelCalls: 2 } }));

    expect(provider.requests).toHaveLength(2);
    expect(turn.types.slice(-2)).toEqual(['error', 'turn_complete']);
    expect(budgetErrors(turn.payloads)).toHaveLength(1);
    const complete = turn.payloads.at(-1);
    expect(complete?.type === 'turn_complete' && complete.usage).toMatchObject({
      modelCalls: 2,
      inputTokens: 200,
      outputTokens: 20,
    });
    // Every call the model made still has its result: the next turn's context pairs every call.
    await runTurn(session, 'again');
    expectToolPairsWhole(provider.requests[2]?.messages ?? []);
  });

  test('maxCostUsd counts the worst case: a call that could cost more than is left is refused before it is sent', async () => {
    const provider = new ScriptedModelProvider({
      models: [PRICED],
      responses: [
        [
          { type: 'text', text: 'cheap' },
          { type: 'usage', usage: USAGE },
        ],
      ],
    });
    const { agent } = await buildAgent({ provider });
    const session = await agent.newSession();
    // The answer could be 1,000 tokens at $10 per million: $0.01, more than $0.005.
    const refused = await collectTurn(await session.sendMessage('hi', { budget: { maxCostUsd: 0.005 } }));
    expect(provider.requests).toHaveLength(0);
    expect(budgetErrors(refused.payloads)).toHaveLength(1);
    expect(refused.payloads.at(-1)).toMatchObject({ type: 'turn_complete', usage: { modelCalls: 0 } });

    const allowed = await collectTurn(await session.sendMessage('hi', { budget: { maxCostUsd: 0.02 } }));
    expect(provider.requests).toHaveLength(1);
    expect(budgetErrors(allowed.payloads)).toHaveLength(0);
  });

  test('maxCostUsd with a model of unknown price refuses the call (fails closed) and says how to fix it', async () => {
    const provider = new ScriptedModelProvider({ responses: [[{ type: 'text', text: 'x' }]] });
    const { agent } = await buildAgent({ provider });
    const session = await agent.newSession();
    const turn = await collectTurn(await session.sendMessage('hi', { budget: { maxCostUsd: 100 } }));
    expect(provider.requests).toHaveLength(0);
    expect(turn.errors.map((error) => error.code)).toEqual(['BUDGET_EXCEEDED']);
    expect(turn.errors[0]?.message).toMatch(/no pricing/);
  });

  test('maxTokens holds the prompt and the output limit: a prompt larger than what is left is not sent', async () => {
    const provider = new ScriptedModelProvider({
      models: [PRICED],
      responses: [[{ type: 'text', text: 'x' }]],
    });
    const { agent } = await buildAgent({ provider });
    const session = await agent.newSession();
    // 1,000 tokens of output limit alone pass a limit of 900.
    await collectTurn(await session.sendMessage('hi', { budget: { maxTokens: 900 } }));
    expect(provider.requests).toHaveLength(0);
    await collectTurn(await session.sendMessage('hi', { budget: { maxTokens: 5_000 } }));
    expect(provider.requests).toHaveLength(1);
  });

  test('an answer without usage stays counted at its worst case', async () => {
    const provider = new ScriptedModelProvider({
      models: [PRICED],
      responses: [[{ type: 'tool_call', toolName: 'look' }], [{ type: 'text', text: 'done' }]],
    });
    const { agent } = await buildAgent({ provider, tools: [defineTool({ name: 'look' })] });
    const session = await agent.newSession();
    // The first call reports nothing, so it counts as ~1,000 + prompt tokens; a second one does not fit in 2,000.
    const turn = await collectTurn(await session.sendMessage('go', { budget: { maxTokens: 2_000 } }));
    expect(provider.requests).toHaveLength(1);
    expect(budgetErrors(turn.payloads)).toHaveLength(1);
  });

  test('bad budgets reject at once with INVALID_INPUT, naming the field', async () => {
    const provider = new ScriptedModelProvider();
    const { agent } = await buildAgent({ provider });
    const session = await agent.newSession();
    await expectCode(session.sendMessage('x', { budget: { maxCostUsd: -1 } }), 'INVALID_INPUT');
    await expectCode(
      session.sendMessage('x', { budget: { maxCalls: 1 } as unknown as { maxModelCalls: number } }),
      'INVALID_INPUT',
    );
    await expectCode(agent.newSession({ budget: { turn: { maxTokens: 1.5 } } }), 'INVALID_INPUT');
    await expect(
      buildAgent({ provider: new ScriptedModelProvider(), config: { budget: { week: {} } as never } }),
    ).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
  });
});

describe('a session budget', () => {
  test('counts every turn, survives a resume (the totals are the log usage records), and then refuses', async () => {
    const storage = new InMemorySessionStorage();
    const answer = [
      { type: 'text' as const, text: 'ok' },
      { type: 'usage' as const, usage: USAGE },
    ];
    const first = await buildAgent({
      provider: new ScriptedModelProvider({ models: [PRICED], responses: [answer, answer] }),
      sessionStorage: storage,
    });
    const session = await first.agent.newSession({ budget: { session: { maxModelCalls: 3 } } });
    await runTurn(session, 'one');
    await runTurn(session, 'two');
    await session.close();

    const provider = new ScriptedModelProvider({ models: [PRICED], responses: [answer, answer] });
    const second = await buildAgent({ provider, sessionStorage: storage });
    const resumed = await second.agent.resumeSession(session.id);
    const third = await runTurn(resumed, 'three');
    expect(budgetErrors(third.payloads)).toHaveLength(0);
    const fourth = await runTurn(resumed, 'four');
    expect(provider.requests).toHaveLength(1);
    expect(budgetErrors(fourth.payloads)).toHaveLength(1);
  });

  test("the agent's default session budget applies when the session sets none", async () => {
    const provider = new ScriptedModelProvider({
      models: [PRICED],
      responses: [
        [
          { type: 'text', text: 'ok' },
          { type: 'usage', usage: USAGE },
        ],
      ],
    });
    const { agent } = await buildAgent({ provider, config: { budget: { session: { maxModelCalls: 1 } } } });
    const session = await agent.newSession();
    await runTurn(session, 'one');
    const refused = await runTurn(session, 'two');
    expect(provider.requests).toHaveLength(1);
    expect(budgetErrors(refused.payloads)).toHaveLength(1);
  });
});

describe('every kind of model call counts', () => {
  test('a compaction call that does not fit ends the turn with BUDGET_EXCEEDED; the turn call is not made either', async () => {
    const small = scriptedModel({
      contextWindow: 2_000,
      pricing: { inputPerMillion: 1, outputPerMillion: 10 },
      maxOutputTokens: 100,
    });
    const provider = new ScriptedModelProvider({
      models: [small],
      responses: [
        [
          { type: 'text', text: 'first' },
          { type: 'usage', usage: { inputTokens: 1_900, outputTokens: 10 } },
        ],
      ],
      byPurpose: { compaction: [[{ type: 'text', text: 'SUMMARY' }]] },
    });
    const { agent } = await buildAgent({ provider, config: { compactThreshold: 0.5 } });
    const session = await agent.newSession();
    await runTurn(session, 'one');
    const turn = await collectTurn(await session.sendMessage('two', { budget: { maxModelCalls: 0 } }));
    expect(provider.requests).toHaveLength(1);
    expect(turn.types.slice(-2)).toEqual(['error', 'turn_complete']);
    expect(budgetErrors(turn.payloads)).toHaveLength(1);
  });

  test('session.compact() under a session budget that cannot fit the summary call rejects with BUDGET_EXCEEDED', async () => {
    const provider = new ScriptedModelProvider({
      models: [PRICED],
      responses: [
        [
          { type: 'text', text: 'ok' },
          { type: 'usage', usage: USAGE },
        ],
      ],
      byPurpose: { compaction: [[{ type: 'text', text: 'SUMMARY' }]] },
    });
    const { agent } = await buildAgent({ provider });
    const session = await agent.newSession({ budget: { session: { maxModelCalls: 1 } } });
    await runTurn(session, 'one');
    await expectCode(session.compact(), 'BUDGET_EXCEEDED');
    expect(requestsOf(provider, 'compaction')).toHaveLength(0);
  });

  test('a memory extraction at the checkpoint is refused when it does not fit, and reported', async () => {
    const provider = new ScriptedModelProvider({
      models: [PRICED],
      responses: [
        [
          { type: 'text', text: 'ok' },
          { type: 'usage', usage: USAGE },
        ],
      ],
      byPurpose: { memory_extraction: [[{ type: 'text', text: '{"memories":[]}' }]] },
    });
    const { agent } = await buildAgent({
      provider,
      memoryStorage: new InMemoryMemoryStorage(),
      config: { memoryCheckpointInterval: 1 },
    });
    const session = await agent.newSession();
    const turn = await collectTurn(await session.sendMessage('hi', { budget: { maxModelCalls: 1 } }));
    expect(requestsOf(provider, 'memory_extraction')).toHaveLength(0);
    expect(budgetErrors(turn.payloads)).toHaveLength(1);
    expect(turn.types.at(-1)).toBe('turn_complete');
  });

  test("a sub-agent's calls count against the calling turn's budget", async () => {
    const provider = new ScriptedModelProvider({
      models: [PRICED],
      responses: [
        [
          { type: 'tool_call', toolName: 'helper', arguments: { task: 'work' } },
          { type: 'usage', usage: USAGE },
        ],
        // The child: a tool loop that would go on; the budget stops it.
        ...toolLoop(5),
        [
          { type: 'text', text: 'parent done' },
          { type: 'usage', usage: USAGE },
        ],
      ],
    });
    const helper = agentTool({
      name: 'helper',
      description: 'Helps.',
      instructions: 'Help.',
      tools: ['look'],
    });
    const { agent } = await buildAgent({ provider, tools: [defineTool({ name: 'look' }), helper] });
    const session = await agent.newSession();
    const turn = await collectTurn(await session.sendMessage('go', { budget: { maxModelCalls: 3 } }));
    // One parent call and two child calls; the child's third and the parent's second are refused.
    expect(provider.requests).toHaveLength(3);
    expect(turn.types.slice(-2)).toEqual(['error', 'turn_complete']);
  });
});
