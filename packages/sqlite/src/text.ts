import type { ContentBlock } from '@youyou/agent';
import { decodeStoredValue, messageTextOf } from '@youyou/agent/storage';

/**
 * The trigram tokenizer indexes runs of three characters, so only needles of at least this many
 * characters can use the index; shorter ones are checked row by row with `instr`.
 */
export const TRIGRAM_LENGTH = 3;

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

/** The name under which `searchTextOfPayload` is registered as an SQL function on each connection. */
export const MESSAGE_TEXT_FUNCTION = 'youyou_message_text';

/**
 * The lower-cased text a search sees in a stored user or assistant message (its payload as saved), or
 * null for any other payload. Registered as an SQL function, so that a search can check the messages
 * that are not in the full-text index yet.
 */
export function searchTextOfPayload(json: string, tagged: boolean): string | null {
  const payload = decodeStoredValue(json, tagged) as { type?: unknown; content?: unknown };
  if (
    (payload.type !== 'user_message' && payload.type !== 'assistant_message') ||
    !Array.isArray(payload.content)
  ) {
    return null;
  }
  return messageTextOf(payload.content as ContentBlock[]).toLowerCase();
}
