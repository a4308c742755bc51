/**
 * Deep copies for the in-memory storages: the same result as structuredClone, several times faster for the
 * plain data that session events and memories are, with structuredClone kept for everything else.
 */
import { types } from 'node:util';
import { AgentError } from '../error.js';
import type { SessionEvent } from '../ports/storage.js';
import { keepShape } from '../shapes.js';
import type { ContentBlock } from '../types.js';

const { isArgumentsObject, isModuleNamespaceObject, isProxy } = types;

/** What `copyTree` returns when it meets a value it leaves to structuredClone. */
const NOT_A_TREE: unique symbol = Symbol('not a tree');

/** Deeper than this, `copyTree` leaves the value to structuredClone rather than risk the stack. */
const MAX_TREE_DEPTH = 100;

/** The objects a copy has met: a short list (an event holds a handful), a Set once it grows. */
class SeenObjects {
  #list: object[] = [];
  #set: Set<object> | undefined;

  /** Adds the object; false when it was there already. */
  add(value: object): boolean {
    const set = this.#set;
    if (set !== undefined) {
      if (set.has(value)) return false;
      set.add(value);
      return true;
    }
    if (this.#list.includes(value)) return false;
    this.#list.push(value);
    if (this.#list.length > 32) this.#set = new Set(this.#list);
    return true;
  }
}

/**
 * Copies a tree of primitives, plain objects, dense plain arrays and Dates exactly as structuredClone
 * would, about three times faster: session events are almost always such trees. Anything else (an object
 * met twice, a class instance, a Map, a proxy, a function, a `__proto__` key, extra array properties) answers
 * NOT_A_TREE, and the caller falls back to structuredClone for the whole value, its errors included.
 */
function copyTree(value: unknown, seen: SeenObjects, depth: number): unknown {
  if (typeof value !== 'object') {
    return typeof value === 'function' || typeof value === 'symbol' ? NOT_A_TREE : value;
  }
  if (value === null) return null;
  if (depth > MAX_TREE_DEPTH || !seen.add(value) || isProxy(value)) return NOT_A_TREE;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype === Array.prototype) {
    const array = value as unknown[];
    // Holes and named properties of an array are rare; structuredClone keeps them, so leave those to it.
    if (Object.keys(array).length !== array.length) return NOT_A_TREE;
    const copy = new Array<unknown>(array.length);
    for (let index = 0; index < array.length; index++) {
      const item = copyTree(array[index], seen, depth + 1);
      if (item === NOT_A_TREE) return NOT_A_TREE;
      copy[index] = item;
    }
    return copy;
  }
  if (prototype === Object.prototype || prototype === null) {
    // An arguments object and a module namespace look plain, but structuredClone refuses them.
    if (isArgumentsObject(value) || isModuleNamespaceObject(value)) return NOT_A_TREE;
    const record = value as Record<string, unknown>;
    const copy: Record<string, unknown> = {};
    for (const key of Object.keys(record)) {
      // Assigning `__proto__` would set the copy's prototype instead of adding a property.
      if (key === '__proto__') return NOT_A_TREE;
      const item = copyTree(record[key], seen, depth + 1);
      if (item === NOT_A_TREE) return NOT_A_TREE;
      copy[key] = item;
    }
    return copy;
  }
  if (prototype === Date.prototype) return new Date(Date.prototype.getTime.call(value));
  return NOT_A_TREE;
}

/** A deep copy; a value structuredClone cannot copy (a function, a symbol) is bad input. */
export function copyOf<T>(value: T, what: string): T {
  let copy: unknown;
  try {
    copy = copyTree(value, new SeenObjects(), 0);
  } catch {
    // A getter threw: structuredClone below reports it the way it always has.
    copy = NOT_A_TREE;
  }
  if (copy !== NOT_A_TREE) return copy as T;
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

/** One field of an event as `copyTree` copies it; throws NOT_A_TREE for what `copyOf` must decide. */
function copyField(value: unknown, seen: SeenObjects, depth: number): unknown {
  const copied = typeof value === 'object' && value !== null ? copyTree(value, seen, depth) : value;
  if (copied === NOT_A_TREE || typeof copied === 'function' || typeof copied === 'symbol') throw NOT_A_TREE;
  return copied;
}

/** The own keys, in order, of a session event and of each payload type as the runtime makes them. */
const EVENT_KEYS = ['timestamp', 'payload'];
const PAYLOAD_KEYS: ReadonlyMap<unknown, readonly string[]> = new Map([
  ['user_message', ['type', 'content']],
  ['assistant_message', ['type', 'content', 'status']],
  ['tool_call', ['type', 'callId', 'toolName', 'arguments']],
  ['tool_result', ['type', 'callId', 'content', 'isError']],
  ['system_message', ['type', 'content']],
  ['metadata', ['type', 'key', 'value']],
]);

/** True for a plain object (not a proxy) whose own enumerable keys are exactly `keys`, in that order. */
function hasExactly(value: object, keys: readonly string[]): boolean {
  if (types.isProxy(value) || Object.getPrototypeOf(value) !== Object.prototype) return false;
  const own = Object.keys(value);
  if (own.length !== keys.length) return false;
  for (let index = 0; index < own.length; index++) if (own[index] !== keys[index]) return false;
  return true;
}

/**
 * A copy of a session event, the same as `copyOf` gives, made faster for the events the runtime writes: an
 * event and a payload whose keys are the usual ones are rebuilt field by field, each payload type by code of
 * its own (a generic copy looks the fields up by name, which is slow when the events come in six shapes),
 * their values copied as `copyOf` does. Anything else takes `copyOf`'s way.
 */
export function copyEvent(event: SessionEvent): SessionEvent {
  const payload: unknown = event.payload;
  if (typeof payload !== 'object' || payload === null) return copyOf(event, 'the session event');
  const type = (payload as { type?: unknown }).type;
  const keys = PAYLOAD_KEYS.get(type);
  if (keys === undefined || !hasExactly(event, EVENT_KEYS) || !hasExactly(payload, keys)) {
    return copyOf(event, 'the session event');
  }
  const seen = new SeenObjects();
  seen.add(event);
  seen.add(payload);
  // `copy` is a function of the module, not a closure made per call: V8 keeps a closure's optimized code only
  // while one of its closures lives, so every full collection sent a per-call closure back to the interpreter.
  try {
    const timestamp = copyField(event.timestamp, seen, 1);
    const source = payload as Record<string, unknown>;
    let payloadCopy: Record<string, unknown>;
    switch (type) {
      case 'tool_call':
        payloadCopy = {
          type: copyField(source.type, seen, 2),
          callId: copyField(source.callId, seen, 2),
          toolName: copyField(source.toolName, seen, 2),
          arguments: copyField(source.arguments, seen, 2),
        };
        break;
      case 'tool_result':
        payloadCopy = {
          type: copyField(source.type, seen, 2),
          callId: copyField(source.callId, seen, 2),
          content: copyField(source.content, seen, 2),
          isError: copyField(source.isError, seen, 2),
        };
        break;
      case 'assistant_message':
        payloadCopy = {
          type: copyField(source.type, seen, 2),
          content: copyField(source.content, seen, 2),
          status: copyField(source.status, seen, 2),
        };
        break;
      case 'metadata':
        payloadCopy = {
          type: copyField(source.type, seen, 2),
          key: copyField(source.key, seen, 2),
          value: copyField(source.value, seen, 2),
        };
        break;
      default:
        // user_message and system_message.
        payloadCopy = { type: copyField(source.type, seen, 2), content: copyField(source.content, seen, 2) };
        break;
    }
    return { timestamp, payload: payloadCopy } as unknown as SessionEvent;
  } catch {
    // Not a tree after all, or a getter threw: copyOf decides, and reports a failure the way it always has.
    return copyOf(event, 'the session event');
  }
}

/** A value inside a payload: a primitive as it is, anything else as `copyOf` copies it. */
function copyInner<T>(value: T): T {
  return typeof value === 'object' && value !== null ? copyOf(value, 'the session event') : value;
}

/**
 * Message content (an array of blocks) made of text blocks, copied by code of its own: a text block is rebuilt as
 * a literal, which is faster than the generic copy's stores by key, most of all in the first turn after a full
 * collection (V8 drops the hidden classes those stores make once no object has them). Anything else, holes and
 * extra properties included, as `copyOf` copies it.
 */
function copyContent(content: unknown): unknown {
  if (!Array.isArray(content) || isProxy(content) || Object.getPrototypeOf(content) !== Array.prototype) {
    return copyInner(content);
  }
  const copy = new Array<ContentBlock>(content.length);
  for (let index = 0; index < content.length; index++) {
    const block = copyTextBlock(content[index]);
    if (block === undefined) return copyInner(content);
    copy[index] = block;
  }
  if (Object.keys(content).length !== content.length) return copyInner(content);
  return copy;
}

/** A copy of a plain `{ type: 'text', text }` block (those keys, in that order); undefined for anything else. */
function copyTextBlock(block: unknown): ContentBlock | undefined {
  if (typeof block !== 'object' || block === null || isProxy(block)) return undefined;
  if (Object.getPrototypeOf(block) !== Object.prototype) return undefined;
  const keys = Object.keys(block);
  if (keys.length !== 2 || keys[0] !== 'type' || keys[1] !== 'text') return undefined;
  const { type, text } = block as { type: unknown; text: unknown };
  return type === 'text' && typeof text === 'string' ? { type: 'text', text } : undefined;
}

/**
 * A copy of an event that the runtime's session log made and hands over for good (see `immediateSaverOf`): its
 * timestamp is the log's own and nobody else holds it, so it is kept; the payload is rebuilt from its fields, and
 * only the values others may hold (content blocks, tool arguments, metadata values) are copied. The same result
 * as `copyEvent` without its checks of the event's and the payload's own keys, which the log's events pass by
 * construction; they were most of the cost of a save.
 */
export function adoptEvent(event: SessionEvent): SessionEvent {
  const payload = event.payload;
  let copy: SessionEvent['payload'];
  switch (payload.type) {
    case 'tool_call':
      copy = {
        type: 'tool_call',
        callId: payload.callId,
        toolName: payload.toolName,
        arguments: copyInner(payload.arguments),
      };
      break;
    case 'tool_result':
      copy = {
        type: 'tool_result',
        callId: payload.callId,
        content: copyInner(payload.content),
        isError: payload.isError,
      };
      break;
    case 'assistant_message':
      copy = {
        type: 'assistant_message',
        content: copyContent(payload.content) as ContentBlock[],
        status: payload.status,
      };
      break;
    case 'user_message':
      copy = { type: 'user_message', content: copyContent(payload.content) as ContentBlock[] };
      break;
    case 'system_message':
      copy = { type: 'system_message', content: copyInner(payload.content) };
      break;
    case 'metadata':
      copy = { type: 'metadata', key: payload.key, value: copyInner(payload.value) };
      break;
    default:
      return copyEvent(event);
  }
  return { timestamp: event.timestamp, payload: copy };
}

keepShape(new SeenObjects());
