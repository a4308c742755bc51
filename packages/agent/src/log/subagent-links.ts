/** The links between a sub-agent's session and its caller's, as their logs hold them (metadata). */

import type { SessionEvent } from '../ports/storage.js';
import { MetadataKey } from './metadata-keys.js';

/** The link a child session's log holds to its caller (metadata key `parent`). */
export interface SubagentParent {
  sessionId: string;
  callId: string;
}

/** A child session a session's log links to (metadata key `subagent`). */
export interface SubagentLink {
  callId: string;
  toolName: string;
  sessionId: string;
}

/** The child sessions a session's log links to, in call order (for a host that shows them on resume). */
export function subagentLinksOf(events: readonly SessionEvent[]): SubagentLink[] {
  const links: SubagentLink[] = [];
  for (const event of events) {
    const payload = event.payload;
    if (payload.type !== 'metadata' || payload.key !== MetadataKey.subagent) continue;
    const value = payload.value as Partial<SubagentLink> | null;
    if (
      typeof value?.callId === 'string' &&
      typeof value.sessionId === 'string' &&
      typeof value.toolName === 'string'
    ) {
      links.push({ callId: value.callId, toolName: value.toolName, sessionId: value.sessionId });
    }
  }
  return links;
}

/** The caller a child session's log links to, or undefined for a session the host opened. */
export function subagentParentOf(events: readonly SessionEvent[]): SubagentParent | undefined {
  for (const event of events) {
    const payload = event.payload;
    if (payload.type !== 'metadata' || payload.key !== MetadataKey.parent) continue;
    const value = payload.value as Partial<SubagentParent> | null;
    if (typeof value?.sessionId === 'string' && typeof value.callId === 'string') {
      return { sessionId: value.sessionId, callId: value.callId };
    }
  }
  return undefined;
}
