import { COMPACT_SUMMARY_PREFIX, INTERRUPTED_MESSAGE_NOTICE } from '../kernel/templates.js';
import type { ContentBlock, Message } from '../kernel/types.js';
import { jsonText } from '../kernel/value-kind.js';
import type { SessionEventPayload } from '../ports/storage.js';
import { charsToTokens, shrinkMessage } from './context-limits.js';
import { applyPruning } from './pruning.js';
import { TurnMarks } from './turn-marks.js';

/** An image counts as 1,000 tokens (SPEC §5.11), i.e. 4,000 characters at four characters a token. */
const IMAGE_CHARS = 4_000;

/** The size of one message in characters, for the chars/4 token estimate. */
export function messageChars(message: Message): number {
  switch (message.type) {
    case 'user':
    case 'assistant':
      return blocksChars(message.content);
    case 'tool_call':
      return message.toolName.length + argumentsChars(message.arguments);
    case 'tool_result':
      return message.content.length;
    case 'system':
      return message.content.length;
  }
}

function blocksChars(blocks: readonly ContentBlock[]): number {
  let chars = 0;
  // Indexed: a resume measures every message of its log, mostly before this is optimised, and an array iterator
  // then allocates a result object per block.
  for (let index = 0; index < blocks.length; index++) {
    const block = blocks[index] as ContentBlock;
    chars += block.type === 'image' ? IMAGE_CHARS : block.text.length;
  }
  return chars;
}

function argumentsChars(value: unknown): number {
  if (typeof value === 'string') return value.length;
  const length = jsonLength(value, 0);
  if (length >= 0) return length;
  return jsonText(value)?.length ?? 0;
}

/** A character JSON.stringify writes as an escape, or a surrogate (a lone one is escaped too). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what JSON escapes.
const ESCAPED_IN_JSON = /["\\\u0000-\u001f\ud800-\udfff]/;

/** Deeper than this, `jsonLength` leaves the value to JSON.stringify. */
const MAX_JSON_DEPTH = 64;

/**
 * The length of `JSON.stringify(value)` for plain JSON data, without building the string (every tool call is
 * measured when it enters the context, and a resume measures thousands); -1 for anything else (a Date, a
 * class instance, a cycle), which the caller leaves to JSON.stringify.
 */
function jsonLength(value: unknown, depth: number): number {
  switch (typeof value) {
    case 'string':
      return ESCAPED_IN_JSON.test(value) ? JSON.stringify(value).length : value.length + 2;
    case 'number':
      if (Number.isSafeInteger(value)) return integerLength(value);
      return Number.isFinite(value) ? String(value).length : 4;
    case 'boolean':
      return value ? 4 : 5;
    case 'object':
      break;
    default:
      return -1;
  }
  if (value === null) return 4;
  if (depth > MAX_JSON_DEPTH) return -1;
  if (Array.isArray(value)) {
    let length = value.length > 0 ? value.length + 1 : 2;
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      const itemLength = isSkippedInJson(item) ? 4 : jsonLength(item, depth + 1);
      if (itemLength < 0) return -1;
      length += itemLength;
    }
    return length;
  }
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return -1;
  const record = value as Record<string, unknown>;
  if (typeof record.toJSON === 'function') return -1;
  let length = 1;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    const item = record[key];
    if (isSkippedInJson(item)) continue;
    const itemLength = jsonLength(item, depth + 1);
    if (itemLength < 0) return -1;
    // The key, a colon, the value, and a comma or the closing brace.
    length += jsonLength(key, 0) + itemLength + 2;
  }
  return length === 1 ? 2 : length;
}

/**
 * How many characters JSON.stringify writes for a safe integer (-0 as `0`), counted rather than written: a resume
 * measures every saved call's arguments, and a string per number was most of what that made.
 */
function integerLength(value: number): number {
  let length = value < 0 ? 2 : 1;
  for (let rest = Math.abs(value); rest >= 10; rest = Math.floor(rest / 10)) length += 1;
  return length;
}

/** A value JSON.stringify leaves out of an object and writes as null in an array. */
function isSkippedInJson(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

/** The system message that replaces compacted history. */
function summaryMessage(summary: string): Message {
  return { type: 'system', content: `${COMPACT_SUMMARY_PREFIX}\n\n${summary}` };
}

/** The notice that follows an interrupted assistant message, live and on replay alike. */
export function interruptedNotice(): Message {
  return { type: 'system', content: INTERRUPTED_MESSAGE_NOTICE };
}

/**
 * Owns a session's message history and its token accounting. The estimate is kept incrementally:
 * each message is measured once when it is added, never by a pass over the whole history.
 */
export class ContextManager {
  private history: Message[] = [];
  private totalChars = 0;
  /** Prompt size the provider reported for the last turn call, and the characters added since. */
  private reportedTokens: number | undefined;
  private charsSinceReport = 0;
  /** The stable part of the system prompt, cached until the next compaction. */
  stablePrompt: string | undefined;
  /** Where each turn of the history begins (what `Session.turns()` lists and a rewind cuts at). */
  readonly turns = new TurnMarks();

  /** The current history; read-only for callers. */
  get messages(): readonly Message[] {
    return this.history;
  }

  /** Appends a message; `turnId` when it was saved as one that opens that turn (see `TurnMarks.note`). */
  push(message: Message, turnId?: string): void {
    this.turns.note(message, this.history.length, turnId);
    const chars = messageChars(message);
    this.history.push(message);
    this.totalChars += chars;
    this.charsSinceReport += chars;
  }

  /**
   * Replaces the whole history (resume, compaction, rewind); `chars` is their size when the caller measured it.
   * The turns kept are those that begin within the new history, which must keep the old one's first messages.
   */
  reset(messages: Message[], chars?: number): void {
    this.turns.truncate(messages.length);
    this.history = messages;
    let total = chars ?? 0;
    if (chars === undefined) for (const message of messages) total += messageChars(message);
    this.totalChars = total;
    this.reportedTokens = undefined;
    this.charsSinceReport = 0;
  }

  /** Records the prompt size a provider reported for a turn call (cached tokens included). */
  recordReportedInput(tokens: number): void {
    this.reportedTokens = tokens;
    this.charsSinceReport = 0;
  }

  /** The estimated size of the next request: the last report plus what was added since, or chars/4 of it all. */
  estimateTokens(options: { promptChars: number; toolsChars: number }): number {
    if (this.reportedTokens !== undefined) return this.reportedTokens + charsToTokens(this.charsSinceReport);
    return charsToTokens(this.totalChars + options.promptChars + options.toolsChars);
  }

  /**
   * Replaces the history by the summary followed by the last `keptCount` messages, each shrunk to
   * `messageLimitChars` when given (a message too large for any window must not survive a compaction whole).
   */
  applyCompaction(options: { summary: string; keptCount: number; messageLimitChars?: number }): void {
    this.turns.compact(this.history.length, options.keptCount);
    this.reset(compactedMessages(this.history, options));
    this.stablePrompt = undefined;
  }

  /**
   * Cuts the history before the turn `turnId`: that turn and every later one leave the context. False, and
   * nothing changes, when the turn is not in the context (unknown, rewound before, or summarised).
   */
  rewindTo(turnId: string): boolean {
    const start = this.turns.rewind(turnId);
    if (start === undefined) return false;
    this.reset(this.history.slice(0, start));
    return true;
  }

  /** Replaces the results of the given tool calls by their pruned stubs; true when anything changed. */
  applyPruning(callIds: ReadonlySet<string>): boolean {
    const pruned = applyPruning(this.history, callIds);
    if (pruned === this.history) return false;
    this.reset(pruned.slice());
    return true;
  }
}

/** The summary message followed by the last `keptCount` messages, shrunk to `messageLimitChars` when given. */
export function compactedMessages(
  history: readonly Message[],
  options: { summary: string; keptCount: number; messageLimitChars?: number | undefined },
): Message[] {
  // Never more than the history (a hand-edited marker): a negative start would keep the wrong end of it.
  const kept = options.keptCount > 0 ? history.slice(Math.max(0, history.length - options.keptCount)) : [];
  const limit = options.messageLimitChars;
  const shrunk = limit === undefined ? kept : kept.map((message) => shrinkMessage(message, limit));
  return [summaryMessage(options.summary), ...shrunk];
}

/**
 * The payload a context message is saved as in the session log, with the turn it opens (`turnId`, for a user or
 * system message); `messageOf` (replay.ts) turns it back into the message, so the live context and the one a
 * resume replays are the same.
 */
export function logPayloadOf(message: Message, turnId?: string): SessionEventPayload {
  switch (message.type) {
    case 'user':
      return turnId === undefined
        ? { type: 'user_message', content: message.content }
        : { type: 'user_message', content: message.content, turnId };
    case 'assistant':
      return { type: 'assistant_message', content: message.content, status: message.status };
    case 'tool_call':
      return {
        type: 'tool_call',
        callId: message.callId,
        toolName: message.toolName,
        arguments: message.arguments,
      };
    case 'tool_result':
      return {
        type: 'tool_result',
        callId: message.callId,
        content: message.content,
        isError: message.isError,
      };
    case 'system':
      return turnId === undefined
        ? { type: 'system_message', content: message.content }
        : { type: 'system_message', content: message.content, turnId };
  }
}
