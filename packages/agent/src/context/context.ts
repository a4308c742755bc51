import { checkBudgetConfig } from '../kernel/config-validation.js';
import { COMPACT_SUMMARY_PREFIX, INTERRUPTED_MESSAGE_NOTICE } from '../kernel/templates.js';
import type { BudgetConfig, ContentBlock, Message, SessionConfig } from '../kernel/types.js';
import { jsonText } from '../kernel/value-kind.js';
import { MetadataKey } from '../log/metadata-keys.js';
import type { SessionEvent, SessionEventPayload } from '../ports/storage.js';
import { charsToTokens, shrinkMessage } from './context-limits.js';
import { applyPruning } from './pruning.js';

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
  for (const block of blocks) chars += block.type === 'image' ? IMAGE_CHARS : block.text.length;
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
      return Number.isFinite(value) ? String(value === 0 ? 0 : value).length : 4;
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

  /** The current history; read-only for callers. */
  get messages(): readonly Message[] {
    return this.history;
  }

  /** Appends a message. */
  push(message: Message): void {
    const chars = messageChars(message);
    this.history.push(message);
    this.totalChars += chars;
    this.charsSinceReport += chars;
  }

  /** Replaces the whole history (resume, compaction); `chars` is their size when the caller measured it. */
  reset(messages: Message[], chars?: number): void {
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
    this.reset(compactedMessages(this.history, options));
    this.stablePrompt = undefined;
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
function compactedMessages(
  history: readonly Message[],
  options: { summary: string; keptCount: number; messageLimitChars?: number | undefined },
): Message[] {
  const kept = options.keptCount > 0 ? history.slice(history.length - options.keptCount) : [];
  const limit = options.messageLimitChars;
  const shrunk = limit === undefined ? kept : kept.map((message) => shrinkMessage(message, limit));
  return [summaryMessage(options.summary), ...shrunk];
}

/** What a replayed log yields. */
interface ReplayedSession {
  messages: Message[];
  /** The size of `messages` in characters, as `messageChars` counts it. */
  chars: number;
  sessionConfig: SessionConfig | undefined;
  /** Each user message is one turn. */
  turnCount: number;
}

function readSessionConfig(value: unknown): SessionConfig | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const config: SessionConfig = {};
  if (typeof record.modelId === 'string') config.modelId = record.modelId;
  if (typeof record.systemPromptOverride === 'string')
    config.systemPromptOverride = record.systemPromptOverride;
  if (typeof record.memoryNamespace === 'string') config.memoryNamespace = record.memoryNamespace;
  const budget = readBudgetConfig(record.budget);
  if (budget !== undefined) config.budget = budget;
  const fallbacks = record.fallbackModels;
  if (Array.isArray(fallbacks) && fallbacks.every((id) => typeof id === 'string' && id !== '')) {
    config.fallbackModels = [...(fallbacks as string[])];
  }
  return config;
}

/** The session's saved budgets; a record that fails the checks (hand-edited, another version) is dropped. */
function readBudgetConfig(value: unknown): BudgetConfig | undefined {
  if (value === undefined) return undefined;
  try {
    return checkBudgetConfig('the saved budget', value, 'INVALID_INPUT');
  } catch {
    return undefined;
  }
}

function readCompaction(
  value: unknown,
): { summary: string; keptMessages: number; messageLimitChars: number | undefined } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  if (typeof record.summary !== 'string') return undefined;
  const kept = record.keptMessages;
  // Written since the compaction shrinks oversized kept messages; older logs have none and kept them whole.
  const limit = record.messageLimitChars;
  return {
    summary: record.summary,
    keptMessages: typeof kept === 'number' && kept > 0 ? Math.floor(kept) : 0,
    messageLimitChars: typeof limit === 'number' && Number.isInteger(limit) && limit > 0 ? limit : undefined,
  };
}

/** The call ids of a `context_pruned` metadata value `{ callIds: string[] }`; empty when malformed. */
function readPrunedCallIds(value: unknown): Set<string> {
  const ids = new Set<string>();
  if (typeof value !== 'object' || value === null) return ids;
  const list = (value as { callIds?: unknown }).callIds;
  if (!Array.isArray(list)) return ids;
  for (const id of list) if (typeof id === 'string') ids.add(id);
  return ids;
}

/** The result for a tool call left without one (by a crash); never saved. */
function missingResult(callId: string): Message {
  return {
    type: 'tool_result',
    callId,
    content: 'No result was recorded for this tool call: the session was interrupted while it ran.',
    isError: true,
  };
}

/**
 * The payload a context message is saved as in the session log; `messageOf` turns it back into the message,
 * so the live context and the one a resume replays are the same.
 */
export function logPayloadOf(message: Message): SessionEventPayload {
  switch (message.type) {
    case 'user':
      return { type: 'user_message', content: message.content };
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
      return { type: 'system_message', content: message.content };
  }
}

/** The context message a log payload holds (the inverse of `logPayloadOf`); undefined for metadata. */
function messageOf(payload: SessionEventPayload): Message | undefined {
  switch (payload.type) {
    case 'user_message':
      return { type: 'user', content: payload.content };
    case 'assistant_message':
      return { type: 'assistant', content: payload.content, status: payload.status };
    case 'tool_call':
      return {
        type: 'tool_call',
        callId: payload.callId,
        toolName: payload.toolName,
        arguments: payload.arguments,
      };
    case 'tool_result':
      return {
        type: 'tool_result',
        callId: payload.callId,
        content: payload.content,
        isError: payload.isError,
      };
    case 'system_message':
      return { type: 'system', content: payload.content };
    case 'metadata':
      return undefined;
  }
}

/**
 * Rebuilds the context from a log (0006 §8.1): messages in order, a notice after each incomplete assistant
 * message, compaction markers applied, and a synthetic error result for every tool call left without one, but
 * for the `held` calls of a suspended turn, which still wait for approval (see approvals/held-batch.ts). With
 * `keepTrailingCalls` the calls still unanswered at the end of the log get none: a reader's view of a session
 * whose turn may be running elsewhere, not a resume.
 */
export function replaySessionEvents(
  events: readonly SessionEvent[],
  options: { held?: ReadonlySet<string>; keepTrailingCalls?: boolean } = {},
): ReplayedSession {
  const held = options.held ?? new Set<string>();
  let messages: Message[] = [];
  // Measured as the messages are made, so that a resume walks its (often long) log once.
  let chars = 0;
  let sessionConfig: SessionConfig | undefined;
  let turnCount = 0;
  const open = new Set<string>();
  const add = (message: Message): void => {
    messages.push(message);
    chars += messageChars(message);
  };
  const closeOpenCalls = (): void => {
    // A result that never came must come before anything else, so tool pairs stay whole.
    for (const callId of open) add(missingResult(callId));
    open.clear();
  };
  for (const event of events) {
    const payload = event.payload;
    if (payload.type === 'metadata') {
      if (payload.key === MetadataKey.sessionConfig) {
        sessionConfig = readSessionConfig(payload.value);
      } else if (payload.key === MetadataKey.compaction) {
        const compaction = readCompaction(payload.value);
        if (compaction !== undefined) {
          closeOpenCalls();
          messages = compactedMessages(messages, {
            summary: compaction.summary,
            keptCount: compaction.keptMessages,
            messageLimitChars: compaction.messageLimitChars,
          });
          chars = 0;
          for (const message of messages) chars += messageChars(message);
        }
      } else if (payload.key === MetadataKey.turnContinued) {
        const kept = withoutCutAnswer(messages);
        if (kept !== messages) {
          messages = kept;
          chars = 0;
          for (const message of messages) chars += messageChars(message);
        }
      } else if (payload.key === MetadataKey.contextPruned) {
        const pruned = applyPruning(messages, readPrunedCallIds(payload.value));
        if (pruned !== messages) {
          messages = pruned.slice();
          chars = 0;
          for (const message of messages) chars += messageChars(message);
        }
      }
      continue;
    }
    const message = messageOf(payload);
    if (message === undefined) continue;
    if (message.type === 'tool_call') open.add(message.callId);
    else if (message.type === 'tool_result') open.delete(message.callId);
    else closeOpenCalls();
    if (message.type === 'user') turnCount += 1;
    add(message);
    if (message.type === 'assistant' && message.status === 'incomplete') add(interruptedNotice());
  }
  for (const callId of held) open.delete(callId);
  if (options.keepTrailingCalls !== true) closeOpenCalls();
  return { messages, chars, sessionConfig, turnCount };
}

/**
 * The messages without the answer a crash cut, when they end with one (an incomplete assistant message and its
 * notice): a continued turn asks the model again, so the cut answer stays in the log but leaves the context.
 */
export function withoutCutAnswer(messages: Message[]): Message[] {
  const notice = messages.at(-1);
  const answer = messages.at(-2);
  const endsCut =
    notice?.type === 'system' &&
    notice.content === INTERRUPTED_MESSAGE_NOTICE &&
    answer?.type === 'assistant' &&
    answer.status === 'incomplete';
  return endsCut ? messages.slice(0, -2) : messages;
}
