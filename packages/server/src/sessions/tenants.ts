import type { SessionEvent, SessionStorage } from '@youyou/agent';
import type { SessionEventLog } from './event-log.js';

/** The metadata key under which the server saves the tenant that created a session. */
export const TENANT_METADATA_KEY = 'youyou_server_tenant';

/**
 * The long-term memory namespace of a tenant's sessions: each tenant has its own, and none is the agent's
 * default namespace (`default`, the local CLI's), so no memory crosses from one tenant to another or to it.
 */
export function tenantMemoryNamespace(tenant: string): string {
  return `tenant:${tenant}`;
}

/** How many events from the start of a session's log `savedTenantOf` reads before it reads the whole log. */
const OWNER_SEARCH_EVENTS = 20;

/** The tenant a session's events name (the first tenant metadata), if any. */
export function tenantIn(events: readonly SessionEvent[]): string | undefined {
  for (const { payload } of events) {
    if (
      payload.type === 'metadata' &&
      payload.key === TENANT_METADATA_KEY &&
      typeof payload.value === 'string'
    ) {
      return payload.value;
    }
  }
  return undefined;
}

/** The tenant saved in a session's log, or undefined when the session is not in the storage (or names none). */
export async function savedTenantOf(
  storage: SessionStorage,
  log: SessionEventLog | undefined,
  sessionId: string,
): Promise<string | undefined> {
  // The tenant is saved right after the session's first events: a log readable by position is read from
  // its start only, not whole (for every session of a listing, and for every session another process made).
  const head = await log?.readEventsAfter(sessionId, 0, OWNER_SEARCH_EVENTS);
  return head !== undefined && (head.length < OWNER_SEARCH_EVENTS || tenantIn(head) !== undefined)
    ? tenantIn(head)
    : tenantIn((await storage.loadSession(sessionId)) ?? []);
}
