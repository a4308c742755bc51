/**
 * How values cross into PostgreSQL and back. PostgreSQL text cannot hold NUL (U+0000) or an unpaired
 * surrogate (node-postgres would turn it into U+FFFD), so every exact text column goes through
 * `encodeText`/`decodeText`, a reversible escape that leaves ordinary text unchanged; search columns hold
 * `searchForm`, a lower-cased copy of the same length in which those characters become U+FFFD.
 * Event payloads are JSON text from the shared tagged-JSON codec of `@youyou/agent/storage`, whose
 * `JSON.stringify` already writes NUL and unpaired surrogates as `\u` escapes.
 */

/** The escape character of `encodeText`: a noncharacter, so it almost never occurs in real text. */
const ESCAPE = '\uFFFF';
const NEEDS_ENCODING = /[\0\uFFFF\uD800-\uDFFF]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const SEARCH_UNSAFE = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/** What `searchForm` turns NUL and unpaired surrogates into. */
export const REPLACEMENT = '\uFFFD';

/** A string PostgreSQL text accepts, from which `decodeText` gives back exactly `text`. */
export function encodeText(text: string): string {
  if (!NEEDS_ENCODING.test(text)) return text;
  const lone = new Set<number>();
  for (const match of text.matchAll(LONE_SURROGATE)) lone.add(match.index);
  let result = '';
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    if (unit === 0) result += `${ESCAPE}0`;
    else if (unit === 0xffff) result += `${ESCAPE}${ESCAPE}`;
    else if (lone.has(index)) result += `${ESCAPE}u${unit.toString(16).padStart(4, '0')}`;
    else result += text[index];
  }
  return result;
}

/** The inverse of `encodeText`. */
export function decodeText(stored: string): string {
  if (!stored.includes(ESCAPE)) return stored;
  let result = '';
  for (let index = 0; index < stored.length; index += 1) {
    const character = stored[index];
    if (character !== ESCAPE) {
      result += character;
      continue;
    }
    const marker = stored[index + 1];
    if (marker === '0') {
      result += '\0';
      index += 1;
    } else if (marker === 'u') {
      result += String.fromCharCode(Number.parseInt(stored.slice(index + 2, index + 6), 16));
      index += 5;
    } else {
      result += ESCAPE;
      index += 1;
    }
  }
  return result;
}

/**
 * The lower-cased text as the search columns hold it: the same length, with NUL and unpaired surrogates
 * as U+FFFD. A needle without U+FFFD matches a search column exactly where it matches the original text;
 * a needle with one may match too much, so its hits are checked against the original text.
 */
export function searchForm(text: string): string {
  return text.toLowerCase().replace(SEARCH_UNSAFE, REPLACEMENT);
}

/** The UTF-16 code units of `text`, big-endian: bytes that sort exactly as JavaScript compares strings. */
export function sortKey(text: string): Buffer {
  return Buffer.from(text, 'utf16le').swap16();
}

/** `text` with LIKE's wildcards and the escape character `!` escaped, for `LIKE ... ESCAPE '!'`. */
export function escapeLike(text: string): string {
  return text.replace(/[!%_]/g, '!$&');
}
