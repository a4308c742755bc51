import { AgentBuilder } from '@youyou/agent';
import { ScriptedModelProvider, type ScriptedResponse, scriptedModel } from '@youyou/agent/testing';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { openSqliteStorage, type SqliteStorage } from '../src/index.js';
import { eventsOf } from './support/agent.js';
import { makeTempFolder, type TempFolder } from './support/temp-folder.js';

let folder: TempFolder;

beforeEach(async () => {
  folder = await makeTempFolder();
});

afterEach(async () => {
  await folder.remove();
});

const PRICED = scriptedModel({
  pricing: { inputPerMillion: 3, outputPerMillion: 15, cacheReadPerMillion: 0.3 },
});

async function agentOn(storage: SqliteStorage, responses: readonly ScriptedResponse[]) {
  const provider = new ScriptedModelProvider({
    models: [PRICED],
    responses,
    byPurpose: {
      memory_extraction: [
        [
          { type: 'text', text: '{"memories":[]}' },
          { type: 'usage', usage: { inputTokens: 700, outputTokens: 9 } },
        ],
      ],
    },
  });
  return new AgentBuilder({ defaultModel: 'scripted-model', onBackgroundError: () => undefined })
    .registerModelProvider(provider)
    .registerSessionStorage(storage.sessions)
    .registerMemoryStorage(storage.memories)
    .build();
}

test('a session resumed from a reopened SQLite file has the usage totals it had, cost included', async () => {
  const path = folder.file('usage.db');
  const first = await openSqliteStorage(path);
  const agent = await agentOn(first, [
    [
      { type: 'text', text: 'One.' },
      { type: 'usage', usage: { inputTokens: 1_000, cachedInputTokens: 600, outputTokens: 50 } },
    ],
    [
      { type: 'text', text: 'Two.' },
      {
        type: 'usage',
        usage: { inputTokens: 2_000, cachedInputTokens: 1_500, outputTokens: 70, reasoningTokens: 20 },
      },
    ],
  ]);
  const session = await agent.newSession();
  await eventsOf(await session.sendMessage('first'));
  await eventsOf(await session.sendMessage('second'));
  const messages = session.messages();
  // close() extracts memories: that call counts too.
  await session.close();
  const totals = session.usage();
  expect(totals).toMatchObject({
    inputTokens: 3_700,
    cachedInputTokens: 2_100,
    outputTokens: 129,
    reasoningTokens: 20,
    modelCalls: 3,
  });
  // 1,600 uncached prompt tokens × $3 + 2,100 cached × $0.30 + 129 output × $15, per million.
  expect(totals.costUsd).toBeCloseTo((1_600 * 3 + 2_100 * 0.3 + 129 * 15) / 1_000_000, 15);
  await agent.shutdown();
  await first.close();

  const second = await openSqliteStorage(path);
  try {
    const again = await agentOn(second, []);
    const resumed = await again.resumeSession(session.id);
    expect(resumed.usage()).toEqual(totals);
    expect(resumed.messages()).toStrictEqual(messages);
    await again.shutdown();
  } finally {
    await second.close();
  }
});
