/**
 * The deep copies of the in-memory storages: nobody can change a stored value through an object they hold. Plain
 * data (what session events and memories are) is copied by a short walk, several times faster than
 * structuredClone; anything else is left to structuredClone. A value of plain objects alone can be copied
 * frozen instead (`readOnlyCopyOf`), and then shared with every reader without another copy.
 */
import { AgentError } from '../kernel/error.js';

/** What `copyPlain` answers for a value it leaves to structuredClone. */
const NOT_PLAIN: unique symbol = Symbol('not plain data');

/** Deeper than this, the value is left to structuredClone rather than risk the stack (a cycle ends here). */
const MAX_DEPTH = 100;

/**
 * More objects than this in one value, and it is left to structuredClone: a value that shares an object many
 * times over (a chain of diamonds) would otherwise be walked once per path, exponentially often.
 */
const MAX_OBJECTS = 100_000;

/** The state of one copy's walk. */
interface Walk {
  /** How many objects the walk may still make. */
  objects: number;
  /**
   * Freeze each object copied; an array or a Date in the value then ends the walk (NOT_PLAIN). A frozen Date can
   * still be changed (`setTime`), and a frozen array is slow to read: in V8, `for of`, `map` and the other
   * iterating methods leave their fast path for it (several times slower, a result object per item), a cost
   * every later reader of the value would pay.
   */
  readonly freeze: boolean;
}

/** A deep copy, as structuredClone makes it; a value structuredClone cannot copy (a function, a symbol) is bad input. */
export function copyOf<T>(value: T, what: string): T {
  const copy = walkedCopy(value, { objects: MAX_OBJECTS, freeze: false });
  return (copy === NOT_PLAIN ? clonedOf(value, what) : copy) as T;
}

/**
 * A deep copy that nobody can change, every object of it frozen, for a value of plain objects and primitives;
 * undefined for any other value (one that holds an array or a Date, say), which the caller copies with `copyOf`.
 */
export function readOnlyCopyOf<T>(value: T): T | undefined {
  const copy = walkedCopy(value, { objects: MAX_OBJECTS, freeze: true });
  return copy === NOT_PLAIN ? undefined : (copy as T);
}

/** `copyPlain`'s copy, or NOT_PLAIN when the value is not plain data or a getter threw. */
function walkedCopy(value: unknown, walk: Walk): unknown {
  try {
    return copyPlain(value, walk, 0);
  } catch {
    // A getter threw: structuredClone reports it.
    return NOT_PLAIN;
  }
}

function clonedOf(value: unknown, what: string): unknown {
  try {
    return structuredClone(value);
  } catch (error) {
    throw new AgentError({
      code: 'INVALID_INPUT',
      message: `${what} cannot be stored: it holds a value that cannot be copied (${String(error)})`,
      sourceComponent: 'storage',
      cause: error,
    });
  }
}

/**
 * Copies primitives, plain objects, plain arrays and Dates. Anything else (a class instance, a Map, a function,
 * a `__proto__` key, a value too deep or too large, so a cycle too) answers NOT_PLAIN, and the whole value goes
 * to structuredClone, its errors included. An object met twice without a cycle is copied twice: the copies are
 * equal, which is all a stored value promises (no Set of the objects seen is kept, one allocation less per
 * event saved).
 */
function copyPlain(value: unknown, walk: Walk, depth: number): unknown {
  if (typeof value !== 'object' || value === null) {
    return typeof value === 'function' || typeof value === 'symbol' ? NOT_PLAIN : value;
  }
  if (depth > MAX_DEPTH || --walk.objects < 0) return NOT_PLAIN;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype === Array.prototype) {
    if (walk.freeze) return NOT_PLAIN;
    const array = value as unknown[];
    const copy = new Array<unknown>(array.length);
    for (let index = 0; index < array.length; index++) {
      const item = copyPlain(array[index], walk, depth + 1);
      if (item === NOT_PLAIN) return NOT_PLAIN;
      copy[index] = item;
    }
    return copy;
  }
  if (prototype === Object.prototype || prototype === null) {
    const record = value as Record<string, unknown>;
    const copy: Record<string, unknown> = {};
    // `for in` rather than Object.keys: the same own keys in the same order, without an array of them per object
    // copied (a third of what copying a session log allocated). The prototype is Object.prototype or null here,
    // so only a polluted Object.prototype adds keys, and `hasOwn` leaves those out.
    for (const key in record) {
      if (!Object.hasOwn(record, key)) continue;
      // Assigning `__proto__` would set the copy's prototype instead of adding a property.
      if (key === '__proto__') return NOT_PLAIN;
      const item = copyPlain(record[key], walk, depth + 1);
      if (item === NOT_PLAIN) return NOT_PLAIN;
      copy[key] = item;
    }
    return walk.freeze ? Object.freeze(copy) : copy;
  }
  if (prototype === Date.prototype) {
    return walk.freeze ? NOT_PLAIN : new Date(Date.prototype.getTime.call(value));
  }
  return NOT_PLAIN;
}
