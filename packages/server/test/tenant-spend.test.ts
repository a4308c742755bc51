/** The day's spend of a tenant, summed from a session storage's usage records. */
import { InMemorySessionStorage, type SessionEvent } from '@youyou/agent';
import { expect, test } from 'vitest';
import { startOfUtcDay, tenantSpentSince, tenantTurnOptions } from '../src/sessions/tenant-spend.js';
import { TENANT_METADATA_KEY, tenantIn } from '../src/sessions/tenants.js';

const DAY = startOfUtcDay(new Date('2026-03-10T15:00:00Z'));
const YESTERDAY = new Date(DAY.getTime() - 60_000);
const TODAY = new Date(DAY.getTime() + 60_000);

function usage(at: Date, costUsd: number): SessionEvent {
  return {
    timestamp: at,
    payload: {
      type: 'metadata',
      key: 'usage',
      value: {
        purpose: 'turn',
        providerId: 'p',
        modelId: 'm',
        usage: { inputTokens: 1, outputTokens: 1 },
        costUsd,
      },
    },
  };
}

async function session(storage: InMemorySessionStorage, id: string, tenant: string, events: SessionEvent[]) {
  await storage.saveEvent(id, {
    timestamp: YESTERDAY,
    payload: { type: 'metadata', key: TENANT_METADATA_KEY, value: tenant },
  });
  for (const event of events) await storage.saveEvent(id, event);
}

test("only the tenant's records written since the day began count, sub-agent totals included", async () => {
  const storage = new InMemorySessionStorage();
  await session(storage, 's1', 'team-a', [usage(YESTERDAY, 5), usage(TODAY, 0.25)]);
  await session(storage, 's2', 'team-a', [
    usage(TODAY, 0.5),
    {
      timestamp: TODAY,
      payload: {
        type: 'metadata',
        key: 'subagent_usage',
        value: {
          inputTokens: 1,
          outputTokens: 1,
          cachedInputTokens: 0,
          cacheWriteTokens: 0,
          reasoningTokens: 0,
          modelCalls: 2,
          costUsd: 0.125,
        },
      },
    },
  ]);
  await session(storage, 's3', 'team-b', [usage(TODAY, 100)]);
  const spent = await tenantSpentSince({ storage, tenant: 'team-a', since: DAY, tenantIn });
  expect(spent).toBeCloseTo(0.875, 10);

  const optionsOf = tenantTurnOptions({ dailyCostUsd: 1, storage, tenantIn, now: () => TODAY });
  const budget = (await optionsOf('team-a'))?.budget?.maxCostUsd;
  expect(budget).toBeCloseTo(0.125, 10);
  expect((await optionsOf('team-b'))?.budget).toEqual({ maxCostUsd: 0 });
  expect((await optionsOf('team-c'))?.budget).toEqual({ maxCostUsd: 1 });
});

test('a limit without a storage to count from, or a bad amount, is refused when the server is made', () => {
  expect(() => tenantTurnOptions({ dailyCostUsd: 1, storage: undefined, tenantIn })).toThrow(/storage/);
  expect(() =>
    tenantTurnOptions({ dailyCostUsd: Number.NaN, storage: new InMemorySessionStorage(), tenantIn }),
  ).toThrow(TypeError);
});
