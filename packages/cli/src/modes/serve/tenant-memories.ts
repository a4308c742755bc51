import type { MemoryStorage, SessionEvent, SessionStorage } from '@youyou/agent';

/** The namespace every memory was saved in before tenants had their own: the local chat's. */
export const SHARED_MEMORY_NAMESPACE = 'default';

/** The tenant a session's log names in its metadata under `tenantKey`, if any. */
function tenantIn(events: readonly SessionEvent[], tenantKey: string): string | undefined {
  for (const { payload } of events) {
    if (payload.type === 'metadata' && payload.key === tenantKey && typeof payload.value === 'string') {
      return payload.value;
    }
  }
  return undefined;
}

/**
 * Moves each memory of the shared namespace that was extracted from a tenant's session (its
 * `sourceSessionId` names a session whose log has the tenant's metadata) into that tenant's namespace, so
 * neither the local chat nor another tenant reads it any more. A memory whose source is a local session, or
 * cannot be traced (merged by a consolidation, its session deleted), stays where it is: the local chat's.
 * Answers how many memories moved. Cheap when nothing is left to move: one listing of the namespace.
 */
export async function moveTenantMemories(options: {
  memories: MemoryStorage;
  sessions: SessionStorage;
  /** The metadata key under which the server saves a session's tenant. */
  tenantKey: string;
  namespaceOf: (tenant: string) => string;
}): Promise<number> {
  const shared = await options.memories.search(SHARED_MEMORY_NAMESPACE, '', Number.POSITIVE_INFINITY);
  const tenantOfSession = new Map<string, string | undefined>();
  let moved = 0;
  for (const memory of shared) {
    const source = memory.sourceSessionId;
    if (source === undefined) continue;
    if (!tenantOfSession.has(source)) {
      const events = await options.sessions.loadSession(source);
      tenantOfSession.set(source, events === null ? undefined : tenantIn(events, options.tenantKey));
    }
    const tenant = tenantOfSession.get(source);
    if (tenant === undefined) continue;
    // Saving under the same id replaces the memory: it leaves the shared namespace in the same write.
    await options.memories.save({ ...memory, namespace: options.namespaceOf(tenant) });
    moved += 1;
  }
  return moved;
}
