import { AgentError, isAgentError } from '@youyou/agent';

/**
 * How values cross into PostgreSQL and back. PostgreSQL text cannot hold NUL (U+0000) or an unpaired
 * surrogate (node-postgres would turn it into U+FFFD), so every exact text column goes through
 * `encodeText`/`decodeText`, a reversible escape that leaves ordinary text unchanged; search columns hold
 * `searchForm`, a lower-cased copy of the same length in which those characters become U+FFFD.
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

/** The key of the tagged objects in stored JSON. */
const TAG = '$youyou';

function unstorable(what: string): AgentError {
  return new AgentError({
    code: 'INVALID_INPUT',
    message: `a session event cannot be stored: it holds ${what}, which has no JSON form`,
    sourceComponent: 'storage',
  });
}

/**
 * JSON.stringify's replacer: what JSON would lose or change comes out as a tagged object — a Date,
 * undefined, NaN, ±Infinity, -0, a bigint — and an object that has a `$youyou` key of its own is
 * wrapped, so that a tag is never read into user data.
 */
function tagReplacer(this: unknown, key: string, value: unknown): unknown {
  const original = (this as Record<string, unknown>)[key];
  if (original instanceof Date) {
    const ms = original.getTime();
    return { [TAG]: 'date', ms: Number.isNaN(ms) ? null : ms };
  }
  switch (typeof original) {
    case 'undefined':
      return { [TAG]: 'undefined' };
    case 'number':
      if (Number.isFinite(original) && !Object.is(original, -0)) return original;
      return { [TAG]: 'number', value: Object.is(original, -0) ? '-0' : String(original) };
    case 'bigint':
      return { [TAG]: 'bigint', value: original.toString() };
    case 'function':
    case 'symbol':
      throw unstorable(`a ${typeof original}`);
    default:
      break;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  if (value instanceof Map || value instanceof Set || value instanceof RegExp) {
    throw unstorable(`a ${value.constructor.name}`);
  }
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) throw unstorable('binary data');
  if (Object.hasOwn(value, TAG)) return { [TAG]: 'object', entries: Object.entries(value) };
  return value;
}

/** JSON text of `value` that `parseTagged` turns back into an equal value (Dates as Dates). */
export function stringifyTagged(value: unknown): string {
  try {
    return JSON.stringify(value, tagReplacer);
  } catch (error) {
    if (isAgentError(error)) throw error;
    // A cycle, or a getter or toJSON that threw.
    throw new AgentError({
      code: 'INVALID_INPUT',
      message: `a session event cannot be stored as JSON: ${error instanceof Error ? error.message : String(error)}`,
      sourceComponent: 'storage',
      cause: error,
    });
  }
}

function reviveTag(tagged: Record<string, unknown>): unknown {
  switch (tagged[TAG]) {
    case 'date':
      return new Date(typeof tagged.ms === 'number' ? tagged.ms : Number.NaN);
    case 'undefined':
      return undefined;
    case 'number':
      return Number(tagged.value);
    case 'bigint':
      return BigInt(String(tagged.value));
    case 'object': {
      const result: Record<string, unknown> = {};
      for (const [key, item] of tagged.entries as [string, unknown][]) {
        // defineProperty, so that a `__proto__` key stays a plain key.
        Object.defineProperty(result, key, {
          value: revive(item),
          writable: true,
          enumerable: true,
          configurable: true,
        });
      }
      return result;
    }
    default:
      return tagged;
  }
}

function revive(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index += 1) value[index] = revive(value[index]);
    return value;
  }
  const record = value as Record<string, unknown>;
  if (Object.hasOwn(record, TAG)) return reviveTag(record);
  for (const key of Object.keys(record)) {
    const item = record[key];
    const revived = revive(item);
    // An own `__proto__` key made by JSON.parse is a data property, so assignment keeps it plain.
    if (revived !== item) record[key] = revived;
  }
  return record;
}

/** The value `stringifyTagged` wrote. */
export function parseTagged(text: string): unknown {
  const value: unknown = JSON.parse(text);
  // Only text that holds the tag's key can hold a tagged object: the common case skips the walk.
  return text.includes(`"${TAG}"`) ? revive(value) : value;
}
