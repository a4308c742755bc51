/**
 * A tenant's spend limit per day: what the model calls of the tenant's sessions cost since the start of the
 * day (UTC) is summed from the usage records in the session storage at the start of each turn, so every
 * process serving the storage counts the same total; the turn then runs with what is left as its budget, which
 * the runtime holds every model call of the turn to (a call that could pass it is not made: BUDGET_EXCEEDED).
 */

import { type SessionEvent, type SessionStorage, type TurnRunOptions, usageTotalsOfLog } from '@youyou/agent';

/** Sessions read per page while the day's sessions are summed. */
const PAGE = 100;

/** The start of the UTC day `now` is in. */
export function startOfUtcDay(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}

/**
 * What the model calls of `tenant`'s sessions cost since `since`, in US dollars: the usage records (and the
 * sub-agent totals) written at or after `since` in every session the tenant owns, read from the storage. Sessions
 * are listed newest first, so the walk stops at the first one last updated before `since`.
 */
export async function tenantSpentSince(options: {
  storage: SessionStorage;
  tenant: string;
  since: Date;
  /** The tenant that owns a session, from its log. */
  tenantIn: (events: readonly SessionEvent[]) => string | undefined;
}): Promise<number> {
  const { storage, tenant, since, tenantIn } = options;
  let spent = 0;
  let cursor: string | undefined;
  do {
    const page = await storage.listSessions(cursor, PAGE);
    for (const summary of page.sessions) {
      if (summary.updatedAt < since) return spent;
      const events = await storage.loadSession(summary.sessionId);
      if (events === null || tenantIn(events) !== tenant) continue;
      const today = events.filter((event) => event.timestamp >= since);
      spent += usageTotalsOfLog(today).costUsd ?? 0;
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return spent;
}

/** The turn options that hold a tenant's turn to what is left of its day's spend limit. */
export type TenantTurnOptions = (tenant: string) => Promise<TurnRunOptions | undefined>;

/** Turn options for each tenant's turns: none without a limit; else a cost budget of what is left today. */
export function tenantTurnOptions(options: {
  dailyCostUsd: number | undefined;
  storage: SessionStorage | undefined;
  tenantIn: (events: readonly SessionEvent[]) => string | undefined;
  now?: () => Date;
}): TenantTurnOptions {
  const { dailyCostUsd, storage, tenantIn } = options;
  if (dailyCostUsd === undefined) return async () => undefined;
  if (!Number.isFinite(dailyCostUsd) || dailyCostUsd < 0) {
    throw new TypeError('limits.tenantDailyCostUsd must be a finite number of US dollars, 0 or more');
  }
  if (storage === undefined) {
    throw new TypeError('limits.tenantDailyCostUsd needs the storage: the day’s spend is counted from it');
  }
  const now = options.now ?? (() => new Date());
  return async (tenant) => {
    const since = startOfUtcDay(now());
    const spent = await tenantSpentSince({ storage, tenant, since, tenantIn });
    return { budget: { maxCostUsd: Math.max(0, dailyCostUsd - spent) } };
  };
}
