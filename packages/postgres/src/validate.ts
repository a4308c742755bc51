import type { Memory, SessionEvent, SessionEventPayload } from '@youyou/agent';
import { invalidInput } from './errors.js';

const PAYLOAD_TYPES: ReadonlySet<string> = new Set<SessionEventPayload['type']>([
  'user_message',
  'assistant_message',
  'tool_call',
  'tool_result',
  'system_message',
  'metadata',
]);

function isValidDate(value: unknown): value is Date {
  return value instanceof Date && !Number.isNaN(value.getTime());
}

/** Throws INVALID_INPUT unless `sessionId` is a non-empty string. */
export function checkSessionId(sessionId: unknown): asserts sessionId is string {
  if (typeof sessionId !== 'string' || sessionId.length === 0) {
    throw invalidInput('sessionId must be a non-empty string');
  }
}

/** Throws INVALID_INPUT for an event the log cannot hold: no valid Date, unknown type, bad content. */
export function checkEvent(event: unknown): asserts event is SessionEvent {
  if (typeof event !== 'object' || event === null) throw invalidInput('a session event must be an object');
  const { timestamp, payload } = event as { timestamp?: unknown; payload?: unknown };
  if (!isValidDate(timestamp)) throw invalidInput('a session event needs a valid Date `timestamp`');
  if (typeof payload !== 'object' || payload === null) {
    throw invalidInput('a session event needs a `payload` object');
  }
  const { type, content } = payload as { type?: unknown; content?: unknown };
  if (typeof type !== 'string' || !PAYLOAD_TYPES.has(type)) {
    throw invalidInput(`unknown session event payload type: ${String(type)}`);
  }
  if (type !== 'user_message' && type !== 'assistant_message') return;
  if (!Array.isArray(content)) throw invalidInput(`a ${type} event needs a \`content\` array`);
  for (const block of content as unknown[]) {
    const blockType =
      typeof block === 'object' && block !== null ? (block as { type?: unknown }).type : undefined;
    if (typeof blockType !== 'string')
      throw invalidInput(`every content block of a ${type} needs a string \`type\``);
    if (blockType === 'text' && typeof (block as { text?: unknown }).text !== 'string') {
      throw invalidInput(`a text block of a ${type} needs a string \`text\``);
    }
  }
}

/** Throws INVALID_INPUT for a memory with a missing or mistyped field. */
export function checkMemory(memory: unknown): asserts memory is Memory {
  if (typeof memory !== 'object' || memory === null) throw invalidInput('a memory must be an object');
  const value = memory as Partial<Record<keyof Memory, unknown>>;
  if (typeof value.id !== 'string' || value.id.length === 0) {
    throw invalidInput('a memory needs a non-empty string `id`');
  }
  if (typeof value.namespace !== 'string') throw invalidInput('a memory needs a string `namespace`');
  if (typeof value.content !== 'string') throw invalidInput('a memory needs a string `content`');
  if (!isValidDate(value.createdAt) || !isValidDate(value.updatedAt)) {
    throw invalidInput('a memory needs valid Date `createdAt` and `updatedAt`');
  }
  if (value.category !== undefined && typeof value.category !== 'string') {
    throw invalidInput('a memory `category` must be a string');
  }
  if (value.sourceSessionId !== undefined && typeof value.sourceSessionId !== 'string') {
    throw invalidInput('a memory `sourceSessionId` must be a string');
  }
}

/** Throws INVALID_INPUT unless `limit` is an integer of at least 1 (listSessions). */
export function checkPageLimit(limit: unknown): asserts limit is number {
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1) {
    throw invalidInput(`limit must be an integer of at least 1, got ${String(limit)}`);
  }
}

/** A position in the newest-first order of sessions. */
export interface SessionPosition {
  updatedAtMs: number;
  sessionId: string;
}

/** The opaque cursor of the page after `position`. */
export function encodeCursor(position: SessionPosition): string {
  return Buffer.from(JSON.stringify([1, position.updatedAtMs, position.sessionId])).toString('base64url');
}

/** The position a cursor from `encodeCursor` names; throws INVALID_INPUT for anything else. */
export function decodeCursor(cursor: unknown): SessionPosition {
  const malformed = () => invalidInput('malformed cursor: pass back a `nextCursor` from listSessions');
  if (typeof cursor !== 'string') throw invalidInput('cursor must be a string or undefined');
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw malformed();
  }
  if (!Array.isArray(value) || value.length !== 3 || value[0] !== 1) throw malformed();
  const [, updatedAtMs, sessionId] = value as [number, unknown, unknown];
  if (
    typeof updatedAtMs !== 'number' ||
    !Number.isSafeInteger(updatedAtMs) ||
    typeof sessionId !== 'string'
  ) {
    throw malformed();
  }
  const position = { updatedAtMs, sessionId };
  // base64url decoding skips characters it does not know, so only an exact re-encoding is ours.
  if (encodeCursor(position) !== cursor) throw malformed();
  return position;
}
