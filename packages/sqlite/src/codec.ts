import { invalidInput } from './errors.js';

/**
 * The key of a tagged value. JSON has no Date, undefined, NaN, ±Infinity, -0 or BigInt, so such values
 * are written as `{ "$youyou": kind, ... }`; an object of the caller's that has this key itself is wrapped
 * as `{ "$youyou": "object", "value": {...} }` so that it is never mistaken for a tag.
 */
const TAG = '$youyou';

type Tag =
  | { [TAG]: 'date'; ms: number | null }
  | { [TAG]: 'undefined' }
  | { [TAG]: 'number'; value: 'NaN' | 'Infinity' | '-Infinity' | '-0' }
  | { [TAG]: 'bigint'; value: string }
  | { [TAG]: 'object'; value: Record<string, unknown> };

/** A stored value: its JSON text, and whether reading it back has to revive tags. */
export interface EncodedValue {
  json: string;
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

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** True when `value` holds anything plain JSON would not keep exactly (the slow path then handles it). */
function needsTags(value: unknown, ancestors: Set<object>): boolean {
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
  if (ancestors.has(value)) return true;
  if (Array.isArray(value)) {
    ancestors.add(value);
    for (let index = 0; index < value.length; index += 1) {
      if (!(index in value) || needsTags(value[index], ancestors)) return true;
    }
    ancestors.delete(value);
    return false;
  }
  if (!isPlainObject(value) || Object.hasOwn(value, TAG)) return true;
  ancestors.add(value);
  for (const key in value) {
    if (Object.hasOwn(value, key) && needsTags((value as Record<string, unknown>)[key], ancestors))
      return true;
  }
  ancestors.delete(value);
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
      throw invalidInput(`${what} cannot be stored: it holds a ${typeof value} at ${path}`);
    case 'string':
    case 'boolean':
      return value;
  }
  if (typeof value !== 'object' || value === null) return null;
  if (ancestors.has(value)) throw invalidInput(`${what} cannot be stored: it refers to itself at ${path}`);
  if (value instanceof Date) {
    const ms = value.getTime();
    return { [TAG]: 'date', ms: Number.isNaN(ms) ? null : ms } satisfies Tag;
  }
  ancestors.add(value);
  try {
    if (Array.isArray(value)) {
      return Array.from({ length: value.length }, (_, index) =>
        toTagged({ value: value[index], path: `${path}[${index}]`, what, ancestors }),
      );
    }
    if (!isPlainObject(value)) {
      const toJSON = (value as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') {
        return toTagged({ value: toJSON.call(value), path, what, ancestors });
      }
      if (REFUSED_OBJECTS.some((type) => value instanceof type) || ArrayBuffer.isView(value)) {
        throw invalidInput(
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
 * native `JSON.stringify`). Functions, symbols, cycles, Maps, Sets and similar objects are INVALID_INPUT;
 * other objects are stored as JSON.stringify would store them (`toJSON`, or their own fields).
 */
export function encodeValue(value: unknown, what: string): EncodedValue {
  try {
    if (!needsTags(value, new Set())) return { json: JSON.stringify(value), tagged: false };
    const json = JSON.stringify(toTagged({ value, path: '$', what, ancestors: new Set() }));
    return { json, tagged: true };
  } catch (error) {
    if (error instanceof RangeError) {
      throw invalidInput(`${what} cannot be stored: it is nested too deeply (${error.message})`);
    }
    throw error;
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
    const tag = record as Tag;
    switch (tag[TAG]) {
      case 'date':
        return new Date(tag.ms ?? Number.NaN);
      case 'undefined':
        return undefined;
      case 'number':
        return tag.value === '-0' ? -0 : Number(tag.value);
      case 'bigint':
        return BigInt(tag.value);
      case 'object':
        return reviveFields(tag.value);
    }
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

/** Parses what `encodeValue` wrote; `tagged` says whether tags have to be revived. */
export function decodeValue(json: string, tagged: boolean): unknown {
  const parsed: unknown = JSON.parse(json);
  return tagged ? revive(parsed) : parsed;
}
