/** The links between a forked session and its source, as their logs hold them (metadata), both ways. */

import type { SessionEvent, SessionEventPayload } from '../ports/storage.js';
import { MetadataKey } from './metadata-keys.js';

/** One end of a fork: the other session, and the last turn the fork kept (absent: the whole history). */
export interface ForkLink {
  sessionId: string;
  atTurnId?: string;
}

/** The metadata payload that records a fork link under `key` (`fork` in the source, `forked_from` in the fork). */
export function forkLinkRecord(
  key: typeof MetadataKey.fork | typeof MetadataKey.forkedFrom,
  link: ForkLink,
): SessionEventPayload {
  const value: ForkLink = { sessionId: link.sessionId };
  if (link.atTurnId !== undefined) value.atTurnId = link.atTurnId;
  return { type: 'metadata', key, value };
}

/** The link a metadata value holds, or undefined when it is malformed (hand-edited, another version). */
function readForkLink(value: unknown): ForkLink | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Partial<Record<keyof ForkLink, unknown>>;
  if (typeof record.sessionId !== 'string' || record.sessionId === '') return undefined;
  const link: ForkLink = { sessionId: record.sessionId };
  if (typeof record.atTurnId === 'string') link.atTurnId = record.atTurnId;
  return link;
}

/** The sessions forked from this one, in the order they were made (metadata key `fork`). */
export function forkLinksOf(events: readonly SessionEvent[]): ForkLink[] {
  const links: ForkLink[] = [];
  for (const { payload } of events) {
    if (payload.type !== 'metadata' || payload.key !== MetadataKey.fork) continue;
    const link = readForkLink(payload.value);
    if (link !== undefined) links.push(link);
  }
  return links;
}

/** The session this one was forked from (metadata key `forked_from`), or undefined for one that is no fork. */
export function forkSourceOf(events: readonly SessionEvent[]): ForkLink | undefined {
  for (const { payload } of events) {
    if (payload.type !== 'metadata' || payload.key !== MetadataKey.forkedFrom) continue;
    const link = readForkLink(payload.value);
    if (link !== undefined) return link;
  }
  return undefined;
}
