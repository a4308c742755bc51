/**
 * The limits that keep any one message from filling the context window: a tool result is cut to a share of
 * the window when it enters the context, a user message to half of it, and compaction shrinks any message
 * still over its limit. Every cut is deterministic (the same text and limit give the same result), so a
 * resume that cuts again from saved limits rebuilds the live view exactly (SPEC §5.9).
 */

import type { ContentBlock, Message } from '../kernel/types.js';

/** The share of the window (after the system prompt and tools) a single user message may fill. */
export const USER_MESSAGE_SHARE = 0.5;
/** Never cut below this many characters, however small the window: a notice alone is no use. */
const MIN_KEPT_CHARS = 2_000;
/** The part of the kept text taken from the head; the rest comes from the tail. */
const HEAD_SHARE = 0.6;

/** The estimated tokens of `chars` characters, at four characters a token. */
export function charsToTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

/** The characters of a window of `tokens` tokens, at four characters a token. */
function tokensToChars(tokens: number): number {
  return Math.max(0, Math.floor(tokens)) * 4;
}

/** The tokens of the window left after the system prompt and the tool specs (never below a tenth of it). */
function windowAfterPrompt(options: {
  contextWindow: number;
  promptChars: number;
  toolsChars: number;
}): number {
  const left = options.contextWindow - charsToTokens(options.promptChars + options.toolsChars);
  return Math.max(left, Math.floor(options.contextWindow / 10));
}

/** The most characters one tool result may bring into the context. */
export function toolResultLimitChars(options: {
  contextWindow: number;
  promptChars: number;
  toolsChars: number;
  share: number;
}): number {
  return Math.max(MIN_KEPT_CHARS, tokensToChars(windowAfterPrompt(options) * options.share));
}

/** The most characters one user message may bring into the context. */
export function userMessageLimitChars(options: {
  contextWindow: number;
  promptChars: number;
  toolsChars: number;
}): number {
  return Math.max(MIN_KEPT_CHARS, tokensToChars(windowAfterPrompt(options) * USER_MESSAGE_SHARE));
}

/** Where a cut is made: the kept head ends and the kept tail starts, never inside a surrogate pair. */
function cutBounds(text: string, keep: number): { headEnd: number; tailStart: number } {
  let headEnd = Math.floor(keep * HEAD_SHARE);
  let tailStart = text.length - (keep - headEnd);
  if (isLowSurrogate(text.charCodeAt(headEnd))) headEnd -= 1;
  if (isLowSurrogate(text.charCodeAt(tailStart))) tailStart += 1;
  return { headEnd, tailStart };
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

function lineNumberAt(text: string, index: number): number {
  let line = 1;
  let at = text.indexOf('\n');
  while (at !== -1 && at < index) {
    line += 1;
    at = text.indexOf('\n', at + 1);
  }
  return line;
}

/**
 * Cuts a tool's output to `maxChars`, keeping its head and tail, with a notice between them that says how
 * much was cut (characters and lines) and how to get the rest. Output within the limit is returned as it is.
 */
export function capToolResult(content: string, maxChars: number): string {
  if (content.length <= maxChars) return content;
  const { headEnd, tailStart } = cutBounds(content, maxChars);
  const firstCutLine = lineNumberAt(content, headEnd);
  const lastCutLine = lineNumberAt(content, tailStart);
  const notice =
    `\n\n[Output cut to fit the context window: ${tailStart - headEnd} of ${content.length} characters ` +
    `(lines ${firstCutLine}–${lastCutLine}) were left out here; the head and the tail are shown. ` +
    'To see the rest, call the tool again for a narrower part (for a file, read a range of lines; for a ' +
    'command, filter or page its output).]\n\n';
  return content.slice(0, headEnd) + notice + content.slice(tailStart);
}

/** Cuts a text (a user message, or any message compaction shrinks) to `maxChars`, head and tail, with a notice. */
function cutText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const { headEnd, tailStart } = cutBounds(text, maxChars);
  const notice =
    `\n\n[${tailStart - headEnd} of ${text.length} characters were cut from the middle of this message ` +
    'because it is too large for the context window; the head and the tail are shown.]\n\n';
  return text.slice(0, headEnd) + notice + text.slice(tailStart);
}

/**
 * Cuts the text blocks of a message's content so that together they fit `maxChars`: each block over its
 * share of the limit is cut. Returns the same array when nothing needed cutting.
 */
export function cutBlocks(blocks: readonly ContentBlock[], maxChars: number): readonly ContentBlock[] {
  let total = 0;
  let textBlocks = 0;
  for (const block of blocks) {
    if (block.type === 'image') continue;
    total += block.text.length;
    textBlocks += 1;
  }
  if (total <= maxChars || textBlocks === 0) return blocks;
  const perBlock = Math.max(MIN_KEPT_CHARS, Math.floor(maxChars / textBlocks));
  return blocks.map((block) =>
    block.type !== 'image' && block.text.length > perBlock
      ? { ...block, text: cutText(block.text, perBlock) }
      : block,
  );
}

/**
 * A message shrunk to `maxChars` (tool results and text blocks cut head and tail with a notice); the same
 * message when it fits. Tool calls are left whole: their arguments are the model's own, and bounded by its output.
 */
export function shrinkMessage(message: Message, maxChars: number): Message {
  switch (message.type) {
    case 'tool_result':
      return message.content.length <= maxChars
        ? message
        : { ...message, content: cutText(message.content, maxChars) };
    case 'system':
      return message.content.length <= maxChars
        ? message
        : { ...message, content: cutText(message.content, maxChars) };
    case 'user':
    case 'assistant': {
      const content = cutBlocks(message.content, maxChars);
      return content === message.content ? message : { ...message, content: content.slice() };
    }
    case 'tool_call':
      return message;
  }
}
