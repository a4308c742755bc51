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

/** Session ids are non-empty strings; anything else is INVALID_INPUT. */
export function checkSessionId(sessionId: unknown): asserts sessionId is string {
  if (typeof sessionId !== 'string' || sessionId.length === 0) {
    throw invalidInput('sessionId must be a non-empty string');
  }
}

/** The shape every stored event must have (the same checks as the in-memory reference storage). */
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
  if ((type === 'user_message' || type === 'assistant_message') && !Array.isArray(content)) {
    throw invalidInput(`a ${type} event needs a \`content\` array`);
  }
}

/** The shape every stored memory must have (the same checks as the in-memory reference storage). */
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
