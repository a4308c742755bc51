/**
 * The deep copies of the in-memory storages: nobody can change a stored value through an object they hold. Plain
 * data (what session events and memories are) is copied by a short walk, several times faster than
 * structuredClone; anything else is left to structuredClone. A copy of plain objects alone can be frozen
 * (`freezeObjects`), and then shared with every reader without another copy.
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

/**
 * The state of the copy under way: how many objects it may still make, and whether it holds plain objects and
 * primitives alone (no array, no Date). Such a copy can be frozen for good (`freezeObjects`); a frozen Date could
 * still be changed (`setTime`), and a frozen array is slow to read: in V8, `for of`, `map` and the other iterating
 * methods leave their fast path for it (several times slower, a result object per item), a cost every later
 * reader of the value would pay. Module state rather than an object per copy: a storage copies every event it
 * saves and many it loads, and one object less per copy is one less for the gc. `copyOf` saves and restores
 * them, so a copy made inside another (a getter of the value that saves an event) leaves the outer one's intact.
 */
let objectsLeft = 0;
let objectsOnly = true;
/** Whether the last copy `copyOf` made holds objects alone (see above). */
let lastObjectsOnly = true;

/** True when the last copy `copyOf` returned holds plain objects and primitives alone, so it may be frozen. */
export function lastCopyHoldsObjectsOnly(): boolean {
  return lastObjectsOnly;
}

/** A deep copy, as structuredClone makes it; a value structuredClone cannot copy (a function, a symbol) is bad input. */
export function copyOf<T>(value: T, what: string): T {
  const outerLeft = objectsLeft;
  const outerOnly = objectsOnly;
  objectsLeft = MAX_OBJECTS;
  objectsOnly = true;
  try {
    const copy = walkedCopy(value);
    if (copy !== NOT_PLAIN) {
      lastObjectsOnly = objectsOnly;
      return copy as T;
    }
    const cloned = clonedOf(value, what);
    // Set after the clone: a getter it ran may have made a copy of its own.
    lastObjectsOnly = false;
    return cloned as T;
  } finally {
    objectsLeft = outerLeft;
    objectsOnly = outerOnly;
  }
}

/** Freezes every object of a copy that holds objects alone (see `objectsOnly`): nobody can change it any more. */
export function freezeObjects(value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  const record = value as Record<string, unknown>;
  for (const key in record) if (Object.hasOwn(record, key)) freezeObjects(record[key]);
  Object.freeze(value);
}

/** `copyPlain`'s copy, or NOT_PLAIN when the value is not plain data or a getter threw. */
function walkedCopy(value: unknown): unknown {
  try {
    return copyPlain(value, 0);
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
function copyPlain(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) {
    return typeof value === 'function' || typeof value === 'symbol' ? NOT_PLAIN : value;
  }
  if (depth > MAX_DEPTH || --objectsLeft < 0) return NOT_PLAIN;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype === Array.prototype) {
    objectsOnly = false;
    const array = value as unknown[];
    const copy = new Array<unknown>(array.length);
    for (let index = 0; index < array.length; index++) {
      const item = copyPlain(array[index], depth + 1);
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
      const item = copyPlain(record[key], depth + 1);
      if (item === NOT_PLAIN) return NOT_PLAIN;
      copy[key] = item;
    }
    return copy;
  }
  if (prototype === Date.prototype) {
    objectsOnly = false;
    return new Date(Date.prototype.getTime.call(value));
  }
  return NOT_PLAIN;
}
