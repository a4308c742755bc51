import { afterEach, describe, expect, test } from 'vitest';
import {
  AgentBuilder,
  type AgentEventPayload,
  InMemoryMemoryStorage,
  InMemorySessionStorage,
  type ModelInfo,
  type SessionEvent,
  type SessionEventPayload,
  type TokenUsage,
  type UsageTotals,
  usageCost,
} from '../src/index.js';
import { ScriptedModelProvider, scriptedModel } from '../src/testing/index.js';
import {
  buildAgent,
  collectTurn,
  runTurn,
  shutdownAgents,
  storedPayloads,
} from './support/agent-fixtures.js';
import { expectCode } from './support/common.js';

function isUsageRecord(payload: SessionEventPayload): boolean {
  return payload.type === 'metadata' && payload.key === 'usage';
}

afterEach(shutdownAgents);

const PRICING = {
  inputPerMillion: 2,
  outputPerMillion: 10,
  cacheReadPerMillion: 0.5,
  cacheWritePerMillion: 2.5,
};
/** A small window, so that a reported prompt of 1,500 tokens makes the next turn compact first. */
const PRICED = scriptedModel({ contextWindow: 2_000, pricing: PRICING });
/** The memory model has no price: its calls carry no cost. */
const UNPRICED = scriptedModel({ id: 'mem-model' });

const TURN_1: TokenUsage = {
  inputTokens: 1_500,
  cachedInputTokens: 1_000,
  cacheWriteTokens: 200,
  outputTokens: 20,
  reasoningTokens: 5,
};
const COMPACTION: TokenUsage = { inputTokens: 800, outputTokens: 50 };
const TURN_2: TokenUsage = { inputTokens: 300, cachedInputTokens: 100, outputTokens: 10 };
const EXTRACTION: TokenUsage = { inputTokens: 400, outputTokens: 30 };
const CONSOLIDATION: TokenUsage = { inputTokens: 200, outputTokens: 40, reasoningTokens: 12 };

type UsagePayload = Extract<AgentEventPayload, { type: 'usage' }>;

function usageEvents(payloads: readonly AgentEventPayload[]): UsagePayload[] {
  return payloads.filter((payload): payload is UsagePayload => payload.type === 'usage');
}

/** The totals of a list of usage events, summed independently of the runtime's code. */
function sumOf(events: readonly UsagePayload[]): UsageTotals {
  const totals: UsageTotals = {
    inputTokens: 0,
    outputTokens: 0,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    modelCalls: events.length,
  };
  for (const { usage, costUsd } of events) {
    totals.inputTokens += usage.inputTokens;
    totals.outputTokens += usage.outputTokens;
    totals.cachedInputTokens += usage.cachedInputTokens ?? 0;
    totals.cacheWriteTokens += usage.cacheWriteTokens ?? 0;
    totals.reasoningTokens += usage.reasoningTokens ?? 0;
    if (costUsd !== undefined) totals.costUsd = (totals.costUsd ?? 0) + costUsd;
  }
  return totals;
}

/** Turn 1 reports a large prompt, so turn 2 compacts, answers, and reaches the memory checkpoint (interval 2). */
function scriptedProvider(): ScriptedModelProvider {
  return new ScriptedModelProvider({
    models: [PRICED, UNPRICED],
    responses: [
      [
        { type: 'text', text: 'first answer' },
        { type: 'usage', usage: TURN_1 },
      ],
      [
        { type: 'text', text: 'second answer' },
        { type: 'usage', usage: TURN_2 },
      ],
      [{ type: 'text', text: 'third answer' }],
    ],
    byPurpose: {
      compaction: [
        [
          { type: 'text', text: 'SUMMARY' },
          { type: 'usage', usage: COMPACTION },
        ],
      ],
      memory_extraction: [
        [
          {
            type: 'text',
            text: JSON.stringify({ memories: [{ content: 'Likes tea.' }, { content: 'Lives in Oslo.' }] }),
          },
          { type: 'usage', usage: EXTRACTION },
        ],
      ],
      memory_consolidation: [
        [
          { type: 'text', text: JSON.stringify({ memories: [{ content: 'Likes tea; lives in Oslo.' }] }) },
          { type: 'usage', usage: CONSOLIDATION },
        ],
      ],
    },
  });
}

async function setUp(sessionStorage = new InMemorySessionStorage()) {
  const built = await buildAgent({
    provider: scriptedProvider(),
    sessionStorage,
    memoryStorage: new InMemoryMemoryStorage(),
    config: {
      compactThreshold: 0.5,
      memoryCheckpointInterval: 2,
      memoryMaxItems: 1,
      memoryModel: 'mem-model',
    },
  });
  return { ...built, sessionStorage };
}

describe('usage events', () => {
  test('every model call of a turn gives one usage event tagged with its purpose: the turn, compaction, memory', async () => {
    const { agent } = await setUp();
    const session = await agent.newSession();
    const first = await runTurn(session, 'hello');
    const secondTurn = await session.sendMessage('and again');
    const second = await collectTurn(secondTurn);

    expect(usageEvents(first.payloads)).toEqual([
      {
        type: 'usage',
        purpose: 'turn',
        providerId: 'scripted',
        modelId: 'scripted-model',
        usage: TURN_1,
        costUsd: usageCost(TURN_1, PRICING),
      },
    ]);
    expect(second.types).toEqual([
      'usage',
      'context_compacted',
      'text_delta',
      'usage',
      'usage',
      'usage',
      'turn_complete',
    ]);
    const calls = usageEvents(second.payloads);
    expect(calls.map((call) => [call.purpose, call.modelId, call.usage])).toEqual([
      ['compaction', 'scripted-model', COMPACTION],
      ['turn', 'scripted-model', TURN_2],
      ['memory_extraction', 'mem-model', EXTRACTION],
      ['memory_consolidation', 'mem-model', CONSOLIDATION],
    ]);
    // The memory model has no pricing: its calls have no cost, the priced ones do.
    expect(calls.map((call) => call.costUsd === undefined)).toEqual([false, false, true, true]);

    // turn_complete and done carry the turn's totals: the sum of its usage events.
    const complete = second.payloads.at(-1);
    expect(complete).toEqual({ type: 'turn_complete', usage: sumOf(calls) });
    const done = await secondTurn.done;
    expect(done).toEqual({ status: 'completed', usage: sumOf(calls) });
    expect(done.usage.modelCalls).toBe(4);
    expect(done.usage.inputTokens).toBe(800 + 300 + 400 + 200);

    // The session's totals are the sum of every call of both turns.
    const all = [...usageEvents(first.payloads), ...calls];
    expect(session.usage()).toEqual(sumOf(all));
    expect(session.usage().costUsd).toBeCloseTo(
      usageCost(TURN_1, PRICING) + usageCost(COMPACTION, PRICING) + usageCost(TURN_2, PRICING),
      12,
    );
  });

  test('a turn whose provider reports no usage has zero totals and no cost', async () => {
    const provider = new ScriptedModelProvider({ responses: [[{ type: 'text', text: 'hi' }]] });
    const { agent } = await buildAgent({ provider });
    const session = await agent.newSession();
    const turn = await session.sendMessage('hello');
    const record = await collectTurn(turn);
    expect(usageEvents(record.payloads)).toEqual([]);
    const zero = {
      inputTokens: 0,
      outputTokens: 0,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      modelCalls: 0,
    };
    expect(record.payloads.at(-1)).toEqual({ type: 'turn_complete', usage: zero });
    expect((await turn.done).usage).toEqual(zero);
    expect(session.usage()).toEqual(zero);
  });

  test('a usage whose cached part exceeds the prompt is refused at the port as PROVIDER_ERROR', async () => {
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'text', text: 'hi' },
          { type: 'usage', usage: { inputTokens: 10, cachedInputTokens: 50, outputTokens: 1 } },
        ],
      ],
    });
    const { agent } = await buildAgent({ provider });
    const session = await agent.newSession();
    const record = await runTurn(session, 'hello');
    expect(record.errors.map((error) => error.code)).toEqual(['PROVIDER_ERROR']);
    expect(session.usage().modelCalls).toBe(0);
  });
});

describe('cost', () => {
  test('a cached read is priced at the cache-read price instead of the input price, a cache write at its own', () => {
    // 300 uncached × $2 + 1,000 read × $0.5 + 200 written × $2.5 + 20 output × $10, per million.
    expect(usageCost(TURN_1, PRICING)).toBeCloseTo((600 + 500 + 500 + 200) / 1_000_000, 15);
    // Without cache prices, cached tokens cost the input price, once.
    expect(usageCost(TURN_1, { inputPerMillion: 2, outputPerMillion: 10 })).toBeCloseTo(
      (1_500 * 2 + 20 * 10) / 1_000_000,
      15,
    );
  });

  test('pricing is checked at build(): finite numbers of 0 or more, input and output present, no unknown field', async () => {
    const bad: unknown[] = [
      { inputPerMillion: -1, outputPerMillion: 1 },
      { inputPerMillion: 1, outputPerMillion: Number.NaN },
      { inputPerMillion: Number.POSITIVE_INFINITY, outputPerMillion: 1 },
      { inputPerMillion: 1 },
      { inputPerMillion: 1, outputPerMillion: 1, cacheReadPerMillion: '0.1' },
      { inputPerMillion: 1, outputPerMillion: 1, cachedPerMillion: 0.1 },
      'cheap',
      null,
    ];
    for (const pricing of bad) {
      const model = { ...scriptedModel(), pricing } as unknown as ModelInfo;
      const builder = new AgentBuilder({ defaultModel: 'scripted-model' }).registerModelProvider(
        new ScriptedModelProvider({ models: [model] }),
      );
      await expectCode(builder.build(), 'INVALID_CONFIG');
    }
    const free = { ...scriptedModel(), pricing: { inputPerMillion: 0, outputPerMillion: 0 } };
    const agent = await new AgentBuilder({ defaultModel: 'scripted-model' })
      .registerModelProvider(new ScriptedModelProvider({ models: [free] }))
      .build();
    await agent.shutdown();
  });
});

describe('persistence', () => {
  test('each call is logged as a usage metadata event; a resumed session has the same totals and the same context', async () => {
    const { agent, sessionStorage } = await setUp();
    const session = await agent.newSession();
    await runTurn(session, 'hello');
    await runTurn(session, 'and again');
    const totals = session.usage();
    const messages = session.messages();
    await session.close();

    const logged = (await storedPayloads(sessionStorage, session.id)).filter(
      (payload) => payload.type === 'metadata' && payload.key === 'usage',
    );
    expect(logged.map((payload) => (payload.type === 'metadata' ? payload.value : undefined))).toEqual([
      expect.objectContaining({ purpose: 'turn', usage: TURN_1 }),
      expect.objectContaining({ purpose: 'compaction', usage: COMPACTION }),
      expect.objectContaining({ purpose: 'turn', usage: TURN_2 }),
      expect.objectContaining({ purpose: 'memory_extraction', usage: EXTRACTION }),
      expect.objectContaining({ purpose: 'memory_consolidation', usage: CONSOLIDATION }),
    ]);

    const resumed = await agent.resumeSession(session.id);
    expect(resumed.usage()).toEqual(totals);
    expect(resumed.messages()).toEqual(messages);
    // The resumed session goes on adding to them.
    const third = await runTurn(resumed, 'once more');
    expect(third.payloads.at(-1)).toMatchObject({ type: 'turn_complete', usage: { modelCalls: 0 } });
    expect(resumed.usage()).toEqual(totals);
    await resumed.close();
  });

  test('a turn whose usage record the storage refused writes it before it ends, once the storage takes it', async () => {
    /** Refuses the first write of a usage record (queued to go with the answer saved after the call). */
    class RefusingOnce extends InMemorySessionStorage {
      refused = false;
      override async saveEvent(sessionId: string, event: SessionEvent): Promise<void> {
        if (!this.refused && isUsageRecord(event.payload)) {
          this.refused = true;
          throw new Error('disk full');
        }
        return super.saveEvent(sessionId, event);
      }
    }
    const sessionStorage = new RefusingOnce();
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'text', text: 'hi' },
          { type: 'usage', usage: TURN_1 },
        ],
      ],
    });
    const { agent } = await buildAgent({ provider, sessionStorage });
    const session = await agent.newSession();
    const turn = await session.sendMessage('hello');
    const record = await collectTurn(turn);
    await turn.done;
    expect(sessionStorage.refused).toBe(true);
    expect(record.errors.map((error) => error.code)).toContain('STORAGE_ERROR');
    // Saved before the turn ended: the storage holds it now, before close() flushes anything.
    const stored = await storedPayloads(sessionStorage, session.id);
    expect(stored.filter(isUsageRecord)).toHaveLength(1);
    await session.close();
  });

  test('the memory extraction of close() counts in the session totals and the log, with no event', async () => {
    const sessionStorage = new InMemorySessionStorage();
    const { agent } = await buildAgent({
      provider: scriptedProvider(),
      sessionStorage,
      memoryStorage: new InMemoryMemoryStorage(),
      config: { memoryModel: 'mem-model' },
    });
    const session = await agent.newSession();
    await runTurn(session, 'hello');
    expect(session.usage().modelCalls).toBe(1);
    await session.close();
    const after = session.usage();
    expect(after.modelCalls).toBe(2);
    expect(after.inputTokens).toBe(TURN_1.inputTokens + EXTRACTION.inputTokens);

    const resumed = await agent.resumeSession(session.id);
    expect(resumed.usage()).toEqual(after);
    await resumed.close();
  });

  test('a log written before usage was recorded resumes with zero totals and its messages', async () => {
    const sessionStorage = new InMemorySessionStorage();
    const at = new Date();
    await sessionStorage.saveEvent('old', {
      timestamp: at,
      payload: { type: 'user_message', content: [{ type: 'text', text: 'hi' }] },
    });
    await sessionStorage.saveEvent('old', {
      timestamp: at,
      payload: { type: 'assistant_message', content: [{ type: 'text', text: 'hello' }], status: 'complete' },
    });
    // A hand-edited usage record that cannot be read is skipped, not a failure.
    await sessionStorage.saveEvent('old', {
      timestamp: at,
      payload: { type: 'metadata', key: 'usage', value: { usage: { inputTokens: -3 } } },
    });
    const { agent } = await buildAgent({ provider: new ScriptedModelProvider(), sessionStorage });
    const session = await agent.resumeSession('old');
    expect(session.usage()).toMatchObject({ inputTokens: 0, outputTokens: 0, modelCalls: 0 });
    expect(session.usage().costUsd).toBeUndefined();
    expect(session.messages()).toHaveLength(2);
  });
});
