import assert from 'node:assert/strict';
import type {
  Memory,
  MemoryStorage,
  SessionEvent,
  SessionEventPayload,
  SessionStorage,
} from '../../ports/storage.js';

/** Registers one conformance test; the suite hands `body` a fresh storage and disposes of it afterwards. */
export type ConformanceTest<S> = (name: string, body: (storage: S) => Promise<void>) => void;

/** A fixed time with milliseconds, so that a storage that drops them fails. */
const BASE_MS = Date.UTC(2024, 0, 15, 9, 30, 0, 123);

/** The fixed base time moved by `offsetMs`. */
export function at(offsetMs: number): Date {
  return new Date(BASE_MS + offsetMs);
}

/** A session event at `at(offsetMs)`. */
export function event(offsetMs: number, payload: SessionEventPayload): SessionEvent {
  return { timestamp: at(offsetMs), payload };
}

/** A user message of one text block. */
export function userEvent(offsetMs: number, text: string): SessionEvent {
  return event(offsetMs, { type: 'user_message', content: [{ type: 'text', text }] });
}

/** A complete assistant message of one text block. */
export function assistantEvent(offsetMs: number, text: string): SessionEvent {
  return event(offsetMs, {
    type: 'assistant_message',
    content: [{ type: 'text', text }],
    status: 'complete',
  });
}

/** The session ids of every page, walking the cursors to the end. */
export async function listAll(
  storage: SessionStorage,
  limit: number,
): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await storage.listSessions(cursor, limit);
    pages += 1;
    assert.ok(page.sessions.length <= limit, `a page holds at most ${limit} sessions`);
    if (page.nextCursor !== null) assert.equal(page.sessions.length, limit, 'only the last page is short');
    ids.push(...page.sessions.map((session) => session.sessionId));
    cursor = page.nextCursor ?? undefined;
    assert.ok(pages <= 1000, 'listSessions never reaches a last page');
  } while (cursor !== undefined);
  return { ids, pages };
}

/** The session ids `findSession(query)` returns, in its order. */
export async function findIds(storage: SessionStorage, query: string): Promise<string[]> {
  return (await storage.findSession(query)).map((summary) => summary.sessionId);
}

/** Newest first by updatedAt, ties by sessionId descending: the order listSessions must give. */
export function newestFirst(sessions: { id: string; updatedMs: number }[]): string[] {
  return [...sessions]
    .sort((a, b) => b.updatedMs - a.updatedMs || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    .map((session) => session.id);
}

/** A memory in the namespace `ns`, created at the base time and updated `updatedMs` later. */
export function memory(id: string, content: string, updatedMs: number, extra: Partial<Memory> = {}): Memory {
  return { id, namespace: 'ns', content, createdAt: at(0), updatedAt: at(updatedMs), ...extra };
}

/** The memory ids `search` returns, in its order. */
export async function searchIds(
  storage: MemoryStorage,
  namespace: string,
  query: string,
  limit: number,
): Promise<string[]> {
  return (await storage.search(namespace, query, limit)).map((item) => item.id);
}
