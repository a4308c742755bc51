/**
 * Replaying a session's log into the context it leaves (0006 §8.1): what a resume, a reader and a fork rebuild.
 * The markers the runtime writes (compaction, pruning, a continued turn, a rewind) are applied where they stand.
 */

import { checkBudgetConfig } from '../kernel/config-validation.js';
import { OpenCalls } from '../kernel/open-calls.js';
import { INTERRUPTED_MESSAGE_NOTICE } from '../kernel/templates.js';
import type { BudgetConfig, Message, SessionConfig } from '../kernel/types.js';
import { MetadataKey } from '../log/metadata-keys.js';
import type { SessionEventPayload } from '../ports/storage.js';
import { compactedMessages, interruptedNotice, messageChars } from './context.js';
import { applyPruning } from './pruning.js';
import { TurnMarks } from './turn-marks.js';

/** What a replayed log yields. */
interface ReplayedSession {
  messages: Message[];
  /** The size of `messages` in characters, as `messageChars` counts it. */
  chars: number;
  sessionConfig: SessionConfig | undefined;
  /** Each user message is one turn. */
  turnCount: number;
  /** Where each turn of `messages` begins. */
  turns: TurnMarks;
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
 * At most this many message slots are made ahead for a replay, so that what a replay reserves before it knows
 * how many of the events are messages stays bounded; a longer log grows the array past these as it goes.
 */
const MAX_SLOTS_AHEAD = 65_536;

/** The context a replay builds up: its messages, their size, its turns and the calls still without a result. */
class ReplayedContext {
  /**
   * Made with a slot for each event of the log (most events are messages) and an eighth more, and cut to the
   * messages added when read (`settled`): growing it by `push` would copy it a dozen times over for a long log,
   * garbage that made a resume allocate a third more than its messages. The slack is for the resumed session's
   * next turns, which push onto this array: V8 keeps the room when a length is cut by less than half, and
   * without it the first turn after a resume would copy the whole history into a larger array.
   */
  #messages: Message[];
  /** How many of `#messages` are filled. */
  #count = 0;
  /** Measured as the messages are made, so that a resume walks its (often long) log once. */
  chars = 0;
  readonly turns = new TurnMarks();
  /** The calls without a result yet, each its own id. */
  readonly open = new OpenCalls<string>();

  constructor(eventCount: number) {
    this.#messages = new Array<Message>(Math.min(eventCount + (eventCount >> 3) + 16, MAX_SLOTS_AHEAD));
  }

  /** The messages so far, the array cut to them. */
  settled(): Message[] {
    if (this.#messages.length !== this.#count) this.#messages.length = this.#count;
    return this.#messages;
  }

  add(message: Message, turnId?: string): void {
    this.turns.note(message, this.#count, turnId);
    // Past the slots made ahead, this appends (the index is the array's length).
    this.#messages[this.#count++] = message;
    this.chars += messageChars(message);
  }

  /** A result that never came must come before anything else, so tool pairs stay whole. */
  closeOpenCalls(): void {
    if (this.open.size === 0) return;
    for (const callId of this.open.values()) this.add(missingResult(callId));
    this.open.clear();
  }

  /** Replaces the messages (the turns that begin within them stay) and measures them again. */
  replace(messages: Message[]): void {
    this.turns.truncate(messages.length);
    this.#messages = messages;
    this.#count = messages.length;
    this.chars = 0;
    for (const message of messages) this.chars += messageChars(message);
  }

  /** Applies a metadata record that changes the context: a compaction, a continued turn, pruning, a rewind. */
  applyMarker(key: string, value: unknown): void {
    if (key === MetadataKey.compaction) {
      const compaction = readCompaction(value);
      if (compaction === undefined) return;
      this.closeOpenCalls();
      const messages = this.settled();
      this.turns.compact(messages.length, compaction.keptMessages);
      this.replace(
        compactedMessages(messages, {
          summary: compaction.summary,
          keptCount: compaction.keptMessages,
          messageLimitChars: compaction.messageLimitChars,
        }),
      );
    } else if (key === MetadataKey.turnContinued) {
      const messages = this.settled();
      const kept = withoutCutAnswer(messages);
      if (kept !== messages) this.replace(kept);
    } else if (key === MetadataKey.contextPruned) {
      const messages = this.settled();
      const pruned = applyPruning(messages, readPrunedCallIds(value));
      if (pruned !== messages) this.replace(pruned.slice());
    } else if (key === MetadataKey.rewind) {
      const turnId = readRewindTarget(value);
      if (turnId === undefined) return;
      // Calls left open by a crash got their result when the session was resumed, before it was rewound.
      this.closeOpenCalls();
      const start = this.turns.rewind(turnId);
      if (start !== undefined) this.replace(this.settled().slice(0, start));
    }
  }
}

/** The turn id a `rewind` metadata value `{ toTurnId }` names; undefined when malformed. */
function readRewindTarget(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const turnId = (value as { toTurnId?: unknown }).toTurnId;
  return typeof turnId === 'string' && turnId !== '' ? turnId : undefined;
}

/** The metadata payload of a rewind to the turn `toTurnId`. */
export function rewindRecord(toTurnId: string): SessionEventPayload {
  return { type: 'metadata', key: MetadataKey.rewind, value: { toTurnId } };
}

/**
 * Rebuilds the context from a log (0006 §8.1): messages in order, a notice after each incomplete assistant
 * message, compaction and rewind markers applied, and a synthetic error result for every tool call left without
 * one, but for the `held` calls of a suspended turn, which still wait for approval (see approvals/held-batch.ts).
 * With `keepTrailingCalls` the calls still unanswered at the end of the log get none: a reader's view of a
 * session whose turn may be running elsewhere, not a resume.
 */
export function replaySessionEvents(
  payloads: readonly SessionEventPayload[],
  options: {
    held?: ReadonlySet<string> | undefined;
    keepTrailingCalls?: boolean;
    /** Called with every metadata payload, in log order: a resume sums its usage records in the same walk. */
    onMetadata?: (payload: SessionEventPayload) => void;
  } = {},
): ReplayedSession {
  const context = new ReplayedContext(payloads.length);
  const { onMetadata } = options;
  let sessionConfig: SessionConfig | undefined;
  let turnCount = 0;
  // Indexed rather than `for of`: a replay runs once per resume, mostly before it is optimised, and an array
  // iterator then allocates a result object per event.
  for (let index = 0; index < payloads.length; index++) {
    const payload = payloads[index] as SessionEventPayload;
    if (payload.type === 'metadata') {
      onMetadata?.(payload);
      if (payload.key === MetadataKey.sessionConfig) sessionConfig = readSessionConfig(payload.value);
      else context.applyMarker(payload.key, payload.value);
      continue;
    }
    const message = messageOf(payload);
    if (message === undefined) continue;
    if (message.type === 'tool_call') context.open.set(message.callId, message.callId);
    else if (message.type === 'tool_result') context.open.delete(message.callId);
    else context.closeOpenCalls();
    if (message.type === 'user') turnCount += 1;
    context.add(message, turnIdOf(payload));
    if (message.type === 'assistant' && message.status === 'incomplete') context.add(interruptedNotice());
  }
  if (options.held !== undefined) for (const callId of options.held) context.open.delete(callId);
  if (options.keepTrailingCalls !== true) context.closeOpenCalls();
  const { chars, turns } = context;
  return { messages: context.settled(), chars, sessionConfig, turnCount, turns };
}

/** The turn a user or system message opens, as it was saved; undefined for any other payload. */
export function turnIdOf(payload: SessionEventPayload): string | undefined {
  if (payload.type !== 'user_message' && payload.type !== 'system_message') return undefined;
  return typeof payload.turnId === 'string' && payload.turnId !== '' ? payload.turnId : undefined;
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
