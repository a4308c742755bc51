/**
 * The tagged JSON in which the SQLite and PostgreSQL storages keep session events, so that a value reads
 * back exactly as it was saved. JSON has no Date, undefined, NaN, ±Infinity, -0 or BigInt, so such values
 * are written as `{ "$youyou": kind, ... }`; an object of the caller's that has the key `$youyou` itself is
 * wrapped as `{ "$youyou": "object", "value": {...} }` so that it is never mistaken for a tag.
 *
 * Reading also accepts `{ "$youyou": "object", "entries": [[key, value], ...] }`, the wrapper the
 * PostgreSQL storage wrote before both storages shared this codec, so rows written by either old copy
 * still load. A tag this codec does not know (or a malformed one) stays a plain object: loading a log
 * never fails on a value the runtime itself never looks into.
 */
import { isAgentError } from '../kernel/error.js';
import { isPlainObject } from '../kernel/value-kind.js';
import { invalidStorageInput } from './support.js';

/** The key of a tagged object. */
const TAG = '$youyou';
/** How JSON text that holds a tagged object (or a wrapped one) must contain the key. */
const TAG_IN_TEXT = `"${TAG}"`;

type Tag =
  | { [TAG]: 'date'; ms: number | null }
  | { [TAG]: 'undefined' }
  | { [TAG]: 'number'; value: 'NaN' | 'Infinity' | '-Infinity' | '-0' }
  | { [TAG]: 'bigint'; value: string }
  | { [TAG]: 'object'; value: Record<string, unknown> };

/** A stored value: its JSON text, and whether reading it back has to revive tags. */
export interface EncodedValue {
  json: string;
  /** False when `json` is plain JSON (`JSON.parse` alone gives the value back). */
  tagged: boolean;
}

/** Built-in objects whose data JSON would silently drop: storing them is refused rather than lost. */
const REFUSED_OBJECTS: readonly (abstract new (...args: never[]) => object)[] = [
  Map,
  Set,
  WeakMap,
  WeakSet,
  RegExp,
  Error,
  Promise,
  ArrayBuffer,
];

/**
 * Deeper than this, `needsTags` sends a value to the slow path (which reports a cycle, or copes with the depth),
 * so that its cycle check, a walk of the few objects above the current one, stays short.
 */
const FAST_PATH_DEPTH = 32;

/**
 * True when `value` holds anything plain JSON would not keep exactly (the slow path then handles it). `ancestors`
 * is the stack of the objects above `value`: an array rather than a Set, since this runs for every event saved
 * and a Set allocates a new table each time its last entry is deleted.
 */
function needsTags(value: unknown, ancestors: object[]): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return false;
    case 'number':
      return !Number.isFinite(value) || Object.is(value, -0);
    case 'object':
      break;
    default:
      // undefined, bigint, function, symbol.
      return true;
  }
  if (value === null) return false;
  if (ancestors.length >= FAST_PATH_DEPTH || ancestors.includes(value)) return true;
  if (Array.isArray(value)) {
    ancestors.push(value);
    for (let index = 0; index < value.length; index += 1) {
      if (!(index in value) || needsTags(value[index], ancestors)) return true;
    }
    ancestors.pop();
    return false;
  }
  if (!isPlainObject(value) || Object.hasOwn(value, TAG)) return true;
  ancestors.push(value);
  for (const key in value) {
    if (Object.hasOwn(value, key) && needsTags((value as Record<string, unknown>)[key], ancestors)) {
      return true;
    }
  }
  ancestors.pop();
  return false;
}

/** Sets an own property even for the key `__proto__`, which plain assignment would treat as the prototype. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
}

/** A JSON-safe copy of `value` with tags in place of what JSON cannot hold; throws INVALID_INPUT. */
function toTagged(options: { value: unknown; path: string; what: string; ancestors: Set<object> }): unknown {
  const { value, path, what, ancestors } = options;
  switch (typeof value) {
    case 'undefined':
      return { [TAG]: 'undefined' } satisfies Tag;
    case 'number':
      if (Number.isNaN(value)) return { [TAG]: 'number', value: 'NaN' } satisfies Tag;
      if (value === Number.POSITIVE_INFINITY) return { [TAG]: 'number', value: 'Infinity' } satisfies Tag;
      if (value === Number.NEGATIVE_INFINITY) return { [TAG]: 'number', value: '-Infinity' } satisfies Tag;
      if (Object.is(value, -0)) return { [TAG]: 'number', value: '-0' } satisfies Tag;
      return value;
    case 'bigint':
      return { [TAG]: 'bigint', value: value.toString() } satisfies Tag;
    case 'function':
    case 'symbol':
      throw invalidStorageInput(`${what} cannot be stored: it holds a ${typeof value} at ${path}`);
    case 'string':
    case 'boolean':
      return value;
  }
  if (typeof value !== 'object' || value === null) return null;
  if (ancestors.has(value))
    throw invalidStorageInput(`${what} cannot be stored: it refers to itself at ${path}`);
  if (value instanceof Date) {
    const ms = value.getTime();
    return { [TAG]: 'date', ms: Number.isNaN(ms) ? null : ms } satisfies Tag;
  }
  ancestors.add(value);
  try {
    // As JSON.stringify does: an object (plain or not) with a toJSON method is stored as what it returns.
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') {
      return toTagged({ value: toJSON.call(value, ''), path, what, ancestors });
    }
    if (Array.isArray(value)) {
      return Array.from({ length: value.length }, (_, index) =>
        toTagged({ value: value[index], path: `${path}[${index}]`, what, ancestors }),
      );
    }
    if (!isPlainObject(value)) {
      if (REFUSED_OBJECTS.some((type) => value instanceof type) || ArrayBuffer.isView(value)) {
        throw invalidStorageInput(
          `${what} cannot be stored: it holds a ${value.constructor.name} at ${path}; store JSON values and Dates`,
        );
      }
    }
    const copy: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      const item = (value as Record<string, unknown>)[key];
      setOwn(copy, key, toTagged({ value: item, path: `${path}.${key}`, what, ancestors }));
    }
    return Object.hasOwn(value, TAG) ? ({ [TAG]: 'object', value: copy } satisfies Tag) : copy;
  } finally {
    ancestors.delete(value);
  }
}

/**
 * Serialises a value to JSON so that it reads back exactly: Dates (with their milliseconds), undefined,
 * NaN, ±Infinity, -0 and BigInt are kept as tags. A value that is plain JSON takes the fast path (one
 * native `JSON.stringify`) and comes back with `tagged: false`. Functions, symbols, cycles, Maps, Sets,
 * Errors, binary data and similar objects are AgentError INVALID_INPUT (so is a getter or `toJSON` that
 * throws); other objects are stored as JSON.stringify would store them (`toJSON`, or their own fields).
 * `what` names the value in error messages, e.g. "the session event".
 */
export function encodeStoredValue(value: unknown, what = 'the value'): EncodedValue {
  try {
    if (!needsTags(value, [])) return { json: JSON.stringify(value), tagged: false };
    const json = JSON.stringify(toTagged({ value, path: '$', what, ancestors: new Set() }));
    return { json, tagged: true };
  } catch (error) {
    if (isAgentError(error)) throw error;
    if (error instanceof RangeError) {
      throw invalidStorageInput(
        `${what} cannot be stored: it is nested too deeply (${error.message})`,
        error,
      );
    }
    const detail = error instanceof Error ? error.message : String(error);
    throw invalidStorageInput(`${what} cannot be stored: reading it threw (${detail})`, error);
  }
}

/** The object a wrapper holds: the `value` form, or the `entries` form of the old PostgreSQL codec. */
function unwrapObject(tag: Record<string, unknown>): Record<string, unknown> | undefined {
  const { value, entries } = tag;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return reviveFields(value as Record<string, unknown>);
  }
  if (!Array.isArray(entries)) return undefined;
  const record: Record<string, unknown> = {};
  for (const entry of entries as unknown[]) {
    if (!Array.isArray(entry) || entry.length !== 2 || typeof entry[0] !== 'string') return undefined;
    setOwn(record, entry[0], revive(entry[1]));
  }
  return record;
}

/** The value a tagged object stands for, or `undefined` with `known: false` when it is no tag of ours. */
function reviveTag(tag: Record<string, unknown>): { known: boolean; value: unknown } {
  switch (tag[TAG]) {
    case 'date':
      return { known: true, value: new Date(typeof tag.ms === 'number' ? tag.ms : Number.NaN) };
    case 'undefined':
      return { known: true, value: undefined };
    case 'number':
      if (tag.value === '-0') return { known: true, value: -0 };
      if (tag.value === 'NaN' || tag.value === 'Infinity' || tag.value === '-Infinity') {
        return { known: true, value: Number(tag.value) };
      }
      return { known: false, value: undefined };
    case 'bigint':
      if (typeof tag.value === 'string' && /^-?\d+$/.test(tag.value)) {
        return { known: true, value: BigInt(tag.value) };
      }
      return { known: false, value: undefined };
    case 'object': {
      const record = unwrapObject(tag);
      return record === undefined ? { known: false, value: undefined } : { known: true, value: record };
    }
    default:
      return { known: false, value: undefined };
  }
}

/** Turns the tags of a parsed value back into the values they stand for, in place where it can. */
function revive(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index += 1) value[index] = revive(value[index]);
    return value;
  }
  const record = value as Record<string, unknown>;
  if (Object.hasOwn(record, TAG)) {
    const revived = reviveTag(record);
    if (revived.known) return revived.value;
  }
  return reviveFields(record);
}

function reviveFields(record: Record<string, unknown>): Record<string, unknown> {
  for (const key of Object.keys(record)) {
    const item = record[key];
    const revived = revive(item);
    if (revived !== item) setOwn(record, key, revived);
  }
  return record;
}

/**
 * The value `encodeStoredValue` wrote (or an older SQLite or PostgreSQL adapter wrote). `tagged` is the
 * flag stored beside the text, when the storage keeps one; without it the text is searched for the tag
 * key, so plain JSON still skips the walk. Throws what `JSON.parse` throws for text that is not JSON.
 */
export function decodeStoredValue(json: string, tagged?: boolean): unknown {
  const parsed: unknown = JSON.parse(json);
  return (tagged ?? json.includes(TAG_IN_TEXT)) ? revive(parsed) : parsed;
}
