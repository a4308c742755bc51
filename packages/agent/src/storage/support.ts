/**
 * What every SessionStorage and MemoryStorage checks and derives the same way, shared so that adapters
 * (SQLite, PostgreSQL, a host's own) reject the same input with the same INVALID_INPUT message and give
 * the same titles and cursors. Every error thrown here is AgentError INVALID_INPUT from 'storage'.
 */
import { type AgentError, invalidInput } from '../kernel/error.js';
import type { ContentBlock } from '../kernel/types.js';
import type { Memory, SessionEvent, SessionEventPayload } from '../ports/storage.js';

/** How many characters (code points) of the first user message make a session's title (SPEC §4). */
const TITLE_LENGTH = 100;

const PAYLOAD_TYPES: ReadonlySet<string> = new Set<SessionEventPayload['type']>([
  'user_message',
  'assistant_message',
  'tool_call',
  'tool_result',
  'system_message',
  'metadata',
]);

/** The version tag of the cursor format, so a future format can tell old cursors apart. */
const CURSOR_VERSION = 1;

/** The INVALID_INPUT of a storage's checks (sourceComponent `storage`), here and in the storages of this folder. */
export function invalidStorageInput(message: string, cause?: unknown): AgentError {
  return invalidInput(message, { sourceComponent: 'storage', cause });
}

function isValidDate(value: unknown): value is Date {
  return value instanceof Date && !Number.isNaN(value.getTime());
}

/** Throws INVALID_INPUT unless `sessionId` is a non-empty string. */
export function checkSessionId(sessionId: unknown): asserts sessionId is string {
  if (typeof sessionId !== 'string' || sessionId.length === 0) {
    throw invalidStorageInput('sessionId must be a non-empty string');
  }
}

/** Throws INVALID_INPUT for an event a log cannot hold: no valid Date, unknown type, bad content blocks. */
export function checkSessionEvent(event: unknown): asserts event is SessionEvent {
  if (typeof event !== 'object' || event === null)
    throw invalidStorageInput('a session event must be an object');
  const { timestamp, payload } = event as { timestamp?: unknown; payload?: unknown };
  if (!isValidDate(timestamp)) throw invalidStorageInput('a session event needs a valid Date `timestamp`');
  if (typeof payload !== 'object' || payload === null) {
    throw invalidStorageInput('a session event needs a `payload` object');
  }
  const { type, content } = payload as { type?: unknown; content?: unknown };
  if (typeof type !== 'string' || !PAYLOAD_TYPES.has(type)) {
    throw invalidStorageInput(`unknown session event payload type: ${String(type)}`);
  }
  if (type !== 'user_message' && type !== 'assistant_message') return;
  if (!Array.isArray(content)) throw invalidStorageInput(`a ${type} event needs a \`content\` array`);
  // Titles and searches read the text blocks, so a block they cannot read is refused at the door.
  for (const block of content as unknown[]) {
    const blockType =
      typeof block === 'object' && block !== null ? (block as { type?: unknown }).type : undefined;
    if (typeof blockType !== 'string') {
      throw invalidStorageInput(`every content block of a ${type} needs a string \`type\``);
    }
    if (blockType === 'text' && typeof (block as { text?: unknown }).text !== 'string') {
      throw invalidStorageInput(`a text block of a ${type} needs a string \`text\``);
    }
  }
}

/** Throws INVALID_INPUT for a memory with a missing or mistyped field. */
export function checkMemory(memory: unknown): asserts memory is Memory {
  if (typeof memory !== 'object' || memory === null) throw invalidStorageInput('a memory must be an object');
  const value = memory as Partial<Record<keyof Memory, unknown>>;
  if (typeof value.id !== 'string' || value.id.length === 0) {
    throw invalidStorageInput('a memory needs a non-empty string `id`');
  }
  if (typeof value.namespace !== 'string') throw invalidStorageInput('a memory needs a string `namespace`');
  if (typeof value.content !== 'string') throw invalidStorageInput('a memory needs a string `content`');
  if (!isValidDate(value.createdAt) || !isValidDate(value.updatedAt)) {
    throw invalidStorageInput('a memory needs valid Date `createdAt` and `updatedAt`');
  }
  if (value.category !== undefined && typeof value.category !== 'string') {
    throw invalidStorageInput('a memory `category` must be a string');
  }
  if (value.sourceSessionId !== undefined && typeof value.sourceSessionId !== 'string') {
    throw invalidStorageInput('a memory `sourceSessionId` must be a string');
  }
}

/** Throws INVALID_INPUT unless `limit` is a safe integer of at least 1 (the page size of listSessions). */
export function checkPageLimit(limit: unknown): asserts limit is number {
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1) {
    throw invalidStorageInput(`limit must be an integer of at least 1, got ${String(limit)}`);
  }
}

/** A position in the newest-first order of sessions: the next page is everything strictly after it. */
export interface SessionCursorPosition {
  updatedAtMs: number;
  sessionId: string;
}

/** The opaque `nextCursor` of the page that ends at `position` (base64url of a small JSON array). */
export function encodeSessionCursor(position: SessionCursorPosition): string {
  const value = [CURSOR_VERSION, position.updatedAtMs, position.sessionId];
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** The position a cursor from `encodeSessionCursor` names; throws INVALID_INPUT for anything else. */
export function decodeSessionCursor(cursor: unknown): SessionCursorPosition {
  const malformed = () => invalidStorageInput('malformed cursor: pass back a `nextCursor` from listSessions');
  if (typeof cursor !== 'string') throw invalidStorageInput('cursor must be a string or undefined');
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw malformed();
  }
  if (!Array.isArray(value) || value.length !== 3 || value[0] !== CURSOR_VERSION) throw malformed();
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
  if (encodeSessionCursor(position) !== cursor) throw malformed();
  return position;
}

/** The text blocks of a message joined by a space: the text a session title and a session search see. */
export function messageTextOf(content: readonly ContentBlock[]): string {
  // One pass and no intermediate arrays: this runs for every message a storage saves.
  let text = '';
  let first = true;
  for (const block of content) {
    if (block.type !== 'text') continue;
    text = first ? block.text : `${text} ${block.text}`;
    first = false;
  }
  return text;
}

/** A session's title from its first user message's text: cut to 100 code points, never splitting a pair. */
export function sessionTitleOf(text: string): string {
  if (text.length <= TITLE_LENGTH) return text;
  // Finds where the 100th code point ends and cuts there once: a pair is two code units, a lone surrogate one.
  let end = 0;
  for (let kept = 0; kept < TITLE_LENGTH && end < text.length; kept += 1) {
    end += (text.codePointAt(end) as number) > 0xffff ? 2 : 1;
  }
  return text.slice(0, end);
}

/** The distinct lower-cased words of a memory query: runs of letters, digits and marks, in any script. */
export function searchWordsOf(text: string): string[] {
  return [...new Set(text.toLowerCase().split(/[^\p{L}\p{N}\p{M}]+/u))].filter((word) => word !== '');
}
