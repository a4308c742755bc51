import type { ContentBlock } from '@youyou/agent';
import { decodeValue } from './codec.js';

/** How many characters (code points) of the first user message make a session's title. */
const TITLE_LENGTH = 100;

/**
 * The trigram tokenizer indexes runs of three characters, so only needles of at least this many
 * characters can use the index; shorter ones are checked row by row with `instr`.
 */
export const TRIGRAM_LENGTH = 3;

/** The text blocks of a message joined by a space: the text a title and a search see. */
export function textOf(content: readonly ContentBlock[]): string {
  let text = '';
  let first = true;
  for (const block of content) {
    if (block.type !== 'text') continue;
    text = first ? block.text : `${text} ${block.text}`;
    first = false;
  }
  return text;
}

/** Cuts to `TITLE_LENGTH` code points, so a surrogate pair is never split. */
export function titleOf(text: string): string {
  if (text.length <= TITLE_LENGTH) return text;
  let result = '';
  let count = 0;
  for (const character of text) {
    if (count === TITLE_LENGTH) break;
    result += character;
    count += 1;
  }
  return result;
}

/** The number of code points, which is what the trigram tokenizer counts. */
export function codePointLength(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

/**
 * The text as the full-text index sees it: NUL becomes U+FFFD, because FTS5 query parsing stops at a NUL.
 * The same one-character mapping is applied to indexed text and to needles, so a needle found in a text
 * is still found in the mapped text (the index is only a prefilter; every hit is checked with `instr` on
 * the unmapped text, so a U+FFFD in a needle never matches a NUL in a text).
 */
export function indexedText(text: string): string {
  return text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text;
}

/**
 * An FTS5 string literal that matches `needle` as a phrase, i.e. as a substring under the trigram
 * tokenizer. Inside double quotes FTS5 gives no character a meaning except the quote, which is doubled,
 * so `"a" OR b*` or `NEAR(` in user text never become query syntax.
 */
export function ftsPhrase(needle: string): string {
  return `"${indexedText(needle).replaceAll('"', '""')}"`;
}

/** The lower-cased words of a text: runs of letters, digits and combining marks, in any script. */
export function wordsOf(text: string): string[] {
  return [...new Set(text.toLowerCase().split(/[^\p{L}\p{N}\p{M}]+/u))].filter((word) => word !== '');
}

/** The name under which `searchTextOfPayload` is registered as an SQL function on each connection. */
export const MESSAGE_TEXT_FUNCTION = 'youyou_message_text';

/**
 * The lower-cased text a search sees in a stored user or assistant message (its payload as saved), or
 * null for any other payload. Registered as an SQL function, so that a search can check the messages
 * that are not in the full-text index yet.
 */
export function searchTextOfPayload(json: string, tagged: boolean): string | null {
  const payload = decodeValue(json, tagged) as { type?: unknown; content?: unknown };
  if (
    (payload.type !== 'user_message' && payload.type !== 'assistant_message') ||
    !Array.isArray(payload.content)
  ) {
    return null;
  }
  return textOf(payload.content as ContentBlock[]).toLowerCase();
}
