import type Anthropic from '@anthropic-ai/sdk';
import type { ChatRequest, Message } from '@youyou/agent';
import { type ApiMessage, type HistoryOptions, mapHistory } from './messages.js';

/** The API reads and writes its prompt cache only at blocks marked so; it allows at most four marks a request. */
export const MAX_CACHE_BREAKPOINTS = 4;

type Block = Anthropic.ContentBlockParam;
type CacheableBlock = Exclude<Block, Anthropic.ThinkingBlockParam | Anthropic.RedactedThinkingBlockParam>;

function isCacheable(block: Block): block is CacheableBlock {
  return block.type !== 'thinking' && block.type !== 'redacted_thinking';
}

/** The index of the last user message before `end`, or -1. */
function lastUserBefore(messages: readonly Message[], end: number): number {
  let index = end - 1;
  while (index >= 0 && messages[index]?.type !== 'user') index -= 1;
  return index;
}

/**
 * Where the history ends before the current turn and before the previous one: before the dynamic prompt part
 * (the runtime puts it right before the latest user message) or before the latest user message, and before the
 * user message ahead of that. A breakpoint at the first writes the whole earlier history to the cache, free of
 * the dynamic part that moves every turn; the next turn's request reads it back at the second, however many
 * blocks its tool loop added (the API looks back only about 20 blocks for an earlier entry).
 */
function turnBoundaries(request: ChatRequest): number[] {
  const { messages } = request;
  const latest = lastUserBefore(messages, messages.length);
  if (latest < 0) return [];
  const dynamic = request.systemPromptParts.dynamic;
  const before = messages[latest - 1];
  const current =
    dynamic !== '' && before?.type === 'system' && before.content === dynamic ? latest - 1 : latest;
  const previous = lastUserBefore(messages, current);
  return previous < 0 ? [current] : [current, previous];
}

/**
 * The request's messages, on `turn` requests with cache breakpoints: on the last block (the newest user message
 * or tool result, so each step of a tool loop reads everything the step before it wrote) and on the blocks that
 * end the history before the current and the previous turn. `systemBreakpoints` marks already spent on the
 * system prompt count against the API's limit of four.
 */
export function messagesWithBreakpoints(options: {
  request: ChatRequest;
  history: HistoryOptions;
  systemBreakpoints: number;
}): ApiMessage[] {
  const { request, systemBreakpoints } = options;
  // A compaction or memory request is sent once: caching its conversation would cost a cache write for nothing.
  if (request.purpose !== 'turn') return mapHistory(request.messages, options.history).messages;
  const mapped = mapHistory(request.messages, { ...options.history, boundaries: turnBoundaries(request) });
  const lastMessage = mapped.messages.at(-1)?.content;
  const last = Array.isArray(lastMessage) ? lastMessage.at(-1) : undefined;
  // The conversation's own breakpoint first, then the boundaries nearest to it, while marks are left.
  const wanted = new Set<Block>();
  for (const block of [last, ...mapped.boundaryBlocks]) if (block !== undefined) wanted.add(block);
  let left = MAX_CACHE_BREAKPOINTS - systemBreakpoints;
  for (const block of wanted) {
    if (left <= 0) break;
    if (!isCacheable(block)) continue;
    block.cache_control = { type: 'ephemeral' };
    left -= 1;
  }
  return mapped.messages;
}
