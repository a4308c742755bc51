import { afterEach, describe, expect, test } from 'vitest';
import { type AgentEventPayload, InMemorySessionStorage, type TokenUsage } from '../src/index.js';
import { ScriptedModelProvider, scriptedModel } from '../src/testing/index.js';
import { buildAgent, runTurn, shutdownAgents, storedPayloads } from './support/agent-fixtures.js';
import { approvalAgent } from './support/approval-fixtures.js';
import { collect } from './support/common.js';

afterEach(shutdownAgents);

const PRICING = { inputPerMillion: 2, outputPerMillion: 10 };
const ASKED: TokenUsage = { inputTokens: 400, outputTokens: 20 };
const ANSWERED: TokenUsage = { inputTokens: 600, outputTokens: 30, reasoningTokens: 5 };
const SUMMARY: TokenUsage = { inputTokens: 900, outputTokens: 60 };

const usageOf = (payloads: readonly AgentEventPayload[]) =>
  payloads.filter((payload) => payload.type === 'usage').map((payload) => payload.usage);

describe('usage of continued turns and of Session.compact()', () => {
  test('a suspended turn and its continuation each report their own calls; the session sums both', async () => {
    const storage = new InMemorySessionStorage();
    const { agent } = await approvalAgent({
      storage,
      responses: [
        [
          { type: 'tool_call', toolName: 'deploy', arguments: { service: 'web' }, callId: 'c1' },
          { type: 'usage', usage: ASKED },
        ],
        [
          { type: 'text', text: 'Deployed.' },
          { type: 'usage', usage: ANSWERED },
        ],
      ],
    });
    const session = await agent.newSession();
    const suspended = await session.sendMessage('ship it');
    const first = (await collect(suspended)).map((event) => event.payload);
    expect(usageOf(first)).toEqual([ASKED]);
    expect(await suspended.done).toMatchObject({
      status: 'suspended',
      usage: { inputTokens: 400, outputTokens: 20, modelCalls: 1 },
    });
    await session.approve('c1');
    const continued = await session.continue();
    const second = (await collect(continued)).map((event) => event.payload);
    expect(usageOf(second)).toEqual([ANSWERED]);
    const totals = { inputTokens: 600, outputTokens: 30, reasoningTokens: 5, modelCalls: 1 };
    expect(second.at(-1)).toMatchObject({ type: 'turn_complete', usage: totals });
    expect(await continued.done).toMatchObject({ status: 'completed', usage: totals });
    expect(session.usage()).toMatchObject({ inputTokens: 1_000, outputTokens: 50, modelCalls: 2 });
    await session.close();
    expect((await agent.resumeSession(session.id)).usage()).toMatchObject({
      inputTokens: 1_000,
      outputTokens: 50,
      modelCalls: 2,
    });
    await agent.shutdown();
  });

  test('compact() returns the usage event of its summary call, priced, and adds it to the session and its log', async () => {
    const storage = new InMemorySessionStorage();
    const provider = new ScriptedModelProvider({
      models: [scriptedModel({ pricing: PRICING })],
      responses: [[{ type: 'text', text: 'a1' }], [{ type: 'text', text: 'a2' }]],
      byPurpose: {
        compaction: [
          [
            { type: 'text', text: 'SUMMARY' },
            { type: 'usage', usage: SUMMARY },
          ],
        ],
      },
    });
    const { agent } = await buildAgent({ provider, sessionStorage: storage });
    const session = await agent.newSession();
    await runTurn(session, 'first question');
    await runTurn(session, 'second question');
    const events = await session.compact();
    const cost = (900 * 2 + 60 * 10) / 1_000_000;
    expect(events.map((event) => event.payload)).toEqual([
      {
        type: 'usage',
        purpose: 'compaction',
        providerId: 'scripted',
        modelId: 'scripted-model',
        usage: SUMMARY,
        costUsd: cost,
      },
      { type: 'context_compacted' },
    ]);
    expect(session.usage()).toMatchObject({
      inputTokens: 900,
      outputTokens: 60,
      modelCalls: 1,
      costUsd: cost,
    });
    const saved = await storedPayloads(storage, session.id);
    expect(saved).toContainEqual(
      expect.objectContaining({
        type: 'metadata',
        key: 'usage',
        value: expect.objectContaining({ usage: SUMMARY }),
      }),
    );
  });
});
