import { AgentError, describeError, isAgentError } from '../kernel/error.js';
import {
  COMPACT_INPUT_TEMPLATE,
  COMPACT_PROMPT,
  COMPACT_SUMMARY_PREFIX,
  fillTemplate,
} from '../kernel/templates.js';
import { renderTranscript } from '../kernel/transcript.js';
import type { Message } from '../kernel/types.js';
import { cancelledError, collectText, internalRequest } from '../model/model-call.js';
import type { UsageSink } from '../model/usage-sink.js';
import type { ModelInfo, ModelProvider } from '../ports/model.js';
import { type ContextManager, messageChars } from './context.js';
import { charsToTokens, shrinkMessage, USER_MESSAGE_SHARE } from './context-limits.js';

/** The share of the context window the most recent messages keep after a compaction. */
const KEEP_SHARE = 0.2;
/** The share of the compaction model's window its request may fill, leaving room for the answer. */
const REQUEST_SHARE = 0.9;
/** How often a compaction request is shrunk and sent again after a context-length error. */
const MAX_ATTEMPTS = 4;
/** The share of the compaction request one message of the transcript may fill; a bigger one is cut. */
const TRANSCRIPT_MESSAGE_SHARE = 0.5;

/**
 * Marks where the history may be cut: `safe[i]` is true when no tool call before `i` has its result
 * at `i` or later, so cutting there never separates a tool call from its result.
 */
function safeCutPoints(messages: readonly Message[]): boolean[] {
  const callIndex = new Map<string, number>();
  // depth[i] > 0 means some pair spans the cut before message i.
  const delta = new Array<number>(messages.length + 1).fill(0);
  messages.forEach((message, index) => {
    if (message.type === 'tool_call') callIndex.set(message.callId, index);
    else if (message.type === 'tool_result') {
      const start = callIndex.get(message.callId);
      if (start !== undefined && start < index) {
        delta[start + 1] = (delta[start + 1] ?? 0) + 1;
        delta[index + 1] = (delta[index + 1] ?? 0) - 1;
      }
    }
  });
  const safe: boolean[] = [];
  let depth = 0;
  for (let index = 0; index <= messages.length; index += 1) {
    depth += delta[index] ?? 0;
    safe.push(depth === 0);
  }
  return safe;
}

/**
 * The index where the kept part of the history starts: the most recent messages worth about
 * `keepTokens`, moved back to the nearest safe cut, and never 0 while anything can be summarised.
 */
function selectKeptStart(messages: readonly Message[], keepTokens: number): number {
  const safe = safeCutPoints(messages);
  let start = messages.length;
  let chars = 0;
  while (start > 0) {
    const size = messageChars(messages[start - 1] as Message);
    if (charsToTokens(chars + size) > keepTokens) break;
    chars += size;
    start -= 1;
  }
  while (start < messages.length && !safe[start]) start += 1;
  if (start === messages.length) {
    // The newest whole unit alone is over the share: keep it anyway, so the model is not left with the summary alone.
    start = messages.length - 1;
    while (start > 0 && !safe[start]) start -= 1;
  }
  if (start === 0) {
    // Everything fits in the kept share; still summarise up to the first safe cut so compaction helps.
    start = 1;
    while (start < messages.length && !safe[start]) start += 1;
  }
  return start;
}

function isSummary(message: Message | undefined): boolean {
  return message?.type === 'system' && message.content.startsWith(COMPACT_SUMMARY_PREFIX);
}

/** Leaves out the oldest whole tool pairs until the transcript fits `maxTokens`, keeping an earlier summary. */
function fitToWindow(messages: readonly Message[], maxTokens: number): Message[] {
  const head = isSummary(messages[0]) ? [messages[0] as Message] : [];
  let rest = messages.slice(head.length);
  const size = (list: readonly Message[]): number =>
    charsToTokens(COMPACT_PROMPT.length + COMPACT_INPUT_TEMPLATE.length + renderTranscript(list).length);
  while (rest.length > 1 && size([...head, ...rest]) > maxTokens)
    rest = dropOldest(rest, Math.ceil(rest.length / 4));
  return [...head, ...rest];
}

/** Drops at least `count` messages from the front, moving on to the next safe cut. */
function dropOldest(messages: readonly Message[], count: number): Message[] {
  const safe = safeCutPoints(messages);
  let cut = Math.min(Math.max(count, 1), messages.length - 1);
  while (cut < messages.length - 1 && !safe[cut]) cut += 1;
  return messages.slice(cut);
}

/** What a compaction produced: the summary and how many recent messages stay after it. */
interface CompactionResult {
  summary: string;
  keptCount: number;
  /**
   * The size every kept message is shrunk to, set only when one of them is over it (saved with the compaction
   * marker then, so a resume shrinks the same; the marker is the plain `{ summary, keptMessages }` otherwise).
   */
  messageLimitChars?: number;
}

/** The compaction prompt, with the instructions a user gave for this one (`/compact <instructions>`). */
function compactionPrompt(prompt: string | undefined, instructions: string | undefined): string {
  const base = prompt ?? COMPACT_PROMPT;
  const extra = instructions?.trim() ?? '';
  return extra === '' ? base : `${base}\n\nThe user gave these instructions for this summary:\n${extra}`;
}

/**
 * Asks the model for a summary of the older part of the history. Throws COMPACT_ERROR when no summary
 * can be had, REQUEST_CANCELLED when the signal fires. The context is not changed here.
 */
export async function summariseHistory(options: {
  context: ContextManager;
  contextWindow: number;
  provider: ModelProvider;
  model: ModelInfo;
  prompt: string | undefined;
  /** Extra instructions for this summary (manual compaction); undefined for none. */
  instructions?: string | undefined;
  /** The session being compacted, handed to the provider for its cache routing. */
  sessionId: string;
  signal: AbortSignal;
  /** Takes the usage of each compaction request. */
  onUsage?: UsageSink;
}): Promise<CompactionResult> {
  const messages = options.context.messages;
  const keptStart = selectKeptStart(messages, Math.floor(options.contextWindow * KEEP_SHARE));
  if (keptStart === 0 || messages.length === 0) {
    throw new AgentError({
      code: 'COMPACT_ERROR',
      message: 'the history has nothing that can be summarised',
    });
  }
  const requestTokens = Math.floor(options.model.contextWindow * REQUEST_SHARE);
  // No single message goes to the summariser whole when it would fill the request: it is cut head and tail.
  const transcriptLimit = Math.max(2_000, Math.floor(requestTokens * 4 * TRANSCRIPT_MESSAGE_SHARE));
  let toSummarise = fitToWindow(
    messages.slice(0, keptStart).map((message) => shrinkMessage(message, transcriptLimit)),
    requestTokens,
  );
  const messageLimitChars = Math.max(2_000, Math.floor(options.contextWindow * 4 * USER_MESSAGE_SHARE));
  for (let attempt = 1; ; attempt += 1) {
    if (options.signal.aborted) throw cancelledError('the turn was cancelled before the compaction request');
    const request = internalRequest({
      modelId: options.model.id,
      purpose: 'compaction',
      sessionId: options.sessionId,
      systemPrompt: compactionPrompt(options.prompt, options.instructions),
      userText: fillTemplate(COMPACT_INPUT_TEMPLATE, { transcript: renderTranscript(toSummarise) }),
    });
    try {
      const { text } = await collectText({
        provider: options.provider,
        request,
        signal: options.signal,
        onUsage: options.onUsage,
      });
      const summary = text.trim();
      if (summary === '')
        throw new AgentError({ code: 'COMPACT_ERROR', message: 'the model answered with an empty summary' });
      const keptCount = messages.length - keptStart;
      const oversized = messages
        .slice(keptStart)
        .some((message) => messageChars(message) > messageLimitChars);
      return oversized ? { summary, keptCount, messageLimitChars } : { summary, keptCount };
    } catch (error) {
      if (options.signal.aborted) throw cancelledError('the turn was cancelled during compaction');
      if (isAgentError(error) && error.code === 'COMPACT_ERROR') throw error;
      const tooLarge = isAgentError(error) && error.contextLengthExceeded;
      if (tooLarge && attempt < MAX_ATTEMPTS && toSummarise.length > 1) {
        toSummarise = dropOldest(toSummarise, Math.ceil(toSummarise.length / 2));
        continue;
      }
      throw new AgentError({
        code: 'COMPACT_ERROR',
        message: `compaction failed, the turn goes on with the full history: ${describeError(error)}`,
        cause: error,
      });
    }
  }
}
