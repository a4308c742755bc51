import type {
  Memory,
  MemoryStorage,
  SessionEvent,
  SessionEventPayload,
  SessionPage,
  SessionStorage,
  SessionSummary,
} from '../ports/storage.js';
import { copyOf, freezeObjects, lastCopyHoldsObjectsOnly } from './copy.js';
import {
  checkMemory,
  checkPageLimit,
  checkSessionEvent,
  checkSessionId,
  decodeSessionCursor,
  encodeSessionCursor,
  invalidStorageInput,
  messageTextOf,
  type SessionCursorPosition as SessionPosition,
  searchWordsOf,
  sessionTitleOf,
} from './support.js';

/**
 * One saved event: its time as a number rather than a Date (one object less per event kept, for as long as the
 * session is; a load makes each event's Date afresh anyway).
 */
interface StoredEvent {
  timeMs: number;
  payload: SessionEventPayload;
  /**
   * How a load hands the payload out. `freezable`: it holds plain objects alone, so the first load freezes it
   * and hands it out as it is, `frozen` from then on. `message`: a user or assistant message, decided at its first
   * load: when its content blocks hold plain objects alone they are frozen (`blocks`), and each load makes only
   * the payload object and its content array anew, around the shared blocks; any other message is `copy`. `copy`:
   * a copy each time, for a payload that holds an array or a Date anywhere else (see copy.ts: a frozen array is
   * slow to iterate, a frozen Date can still change). Decided at the first load rather than when saved: most
   * saved events are never loaded in the process that saved them, and a freeze costs about what a copy does.
   */
  sharing: 'copy' | 'freezable' | 'frozen' | 'message' | 'blocks';
}

/** What the storage keeps per session; the summary fields are kept up to date on every save. */
interface SessionRecord {
  sessionId: string;
  events: StoredEvent[];
  /** Undefined until the first user message arrives. */
  title: string | undefined;
  createdAtMs: number;
  updatedAtMs: number;
  messageCount: number;
  /**
   * The lower-cased text of each user and assistant message, for `findSession`: of the first `indexedCount`
   * events, the others are added by the next search. Saving an event does no search work (most sessions are
   * never searched, and a save is on the turn's path), a search does it once per event.
   */
  searchTexts: string[];
  indexedCount: number;
}

/** The record's search texts, with those of the events saved since the last search added. */
function searchTextsOf(record: SessionRecord): readonly string[] {
  const { events } = record;
  for (let index = record.indexedCount; index < events.length; index++) {
    const payload = (events[index] as StoredEvent).payload;
    if (payload.type === 'user_message' || payload.type === 'assistant_message') {
      record.searchTexts.push(messageTextOf(payload.content).toLowerCase());
    }
  }
  record.indexedCount = events.length;
  return record.searchTexts;
}

/** How a load will hand out a payload just copied for saving (see StoredEvent.sharing). */
function sharingOf(payload: SessionEventPayload, objectsOnly: boolean): StoredEvent['sharing'] {
  if (objectsOnly) return 'freezable';
  return payload.type === 'user_message' || payload.type === 'assistant_message' ? 'message' : 'copy';
}

/** The payload a load hands out for a stored event (see StoredEvent.sharing). */
function loadedPayload(event: StoredEvent): SessionEventPayload {
  const { payload } = event;
  if (event.sharing === 'frozen') return payload;
  if (event.sharing === 'message') event.sharing = sharedBlocks(payload) ? 'blocks' : 'copy';
  if (event.sharing === 'blocks') {
    // Checked at the first load: a user or assistant message whose blocks are frozen.
    const message = payload as Extract<SessionEventPayload, { content: unknown[] }>;
    return { ...message, content: message.content.slice() } as SessionEventPayload;
  }
  if (event.sharing === 'freezable') {
    freezeObjects(payload);
    event.sharing = 'frozen';
    return payload;
  }
  // Each event was copied on its own when saved, so no object is shared between two of them: copying them one by
  // one gives the same result as copying the whole log, without one walk remembering every object.
  return copyOf(payload, 'the session log');
}

/**
 * Freezes the content blocks of a stored message and answers true when each of them is a flat plain object (a
 * text, image or reasoning block: primitives alone) and the message's other fields are primitives; answers
 * false, freezing nothing, for anything else (which is then copied on every load, as any payload with an array).
 */
function sharedBlocks(payload: SessionEventPayload): boolean {
  const record = payload as unknown as Record<string, unknown>;
  for (const key in record) {
    if (key === 'content' || !Object.hasOwn(record, key)) continue;
    const value = record[key];
    if (typeof value === 'object' && value !== null) return false;
  }
  const content = record.content;
  if (!Array.isArray(content) || !content.every(isFlatRecord)) return false;
  for (const block of content) Object.freeze(block);
  return true;
}

/** True for a plain object whose own values are all primitives. */
function isFlatRecord(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return false;
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    const item = record[key];
    if (typeof item === 'object' && item !== null) return false;
  }
  return true;
}

/** Newest first by `updatedAt`, ties by sessionId descending; negative when `a` comes first. */
function compareNewestFirst(a: SessionPosition, b: SessionPosition): number {
  if (a.updatedAtMs !== b.updatedAtMs) return b.updatedAtMs - a.updatedAtMs;
  if (a.sessionId === b.sessionId) return 0;
  return a.sessionId > b.sessionId ? -1 : 1;
}

function summaryOf(record: SessionRecord): SessionSummary {
  return {
    sessionId: record.sessionId,
    title: record.title ?? '',
    createdAt: new Date(record.createdAtMs),
    updatedAt: new Date(record.updatedAtMs),
    messageCount: record.messageCount,
  };
}

/**
 * What `saveEvent` answers: a save is done before it returns, so one fulfilled promise serves every save. An
 * async method made a promise per event (40 of the ~220 bytes saving an event allocated, and a resume of a long
 * session saved through the port allocates for each of its events); awaiting or chaining on a settled promise
 * keeps no reaction on it, so sharing it holds nothing alive.
 */
// Not frozen, though every caller gets this one object: Node's async_hooks add a property to each promise they
// see, and a frozen one makes that throw in every save of a host that uses them.
const SAVED: Promise<void> = Promise.resolve();

/**
 * A SessionStorage that keeps everything in the process's memory: for tests, demos and hosts that do
 * not need sessions to outlive the process. A saved event is deep-copied, so the caller may go on changing the
 * object it saved. A payload made of plain objects alone (a tool call's, a tool result's, most metadata) is
 * deep-frozen when it is first loaded, and `loadSession` hands that very payload out, in a new event object with
 * a new Date, rather than copying it again on every load: such a loaded payload is read-only (changing it throws
 * a TypeError in strict mode). A user or assistant message gets a new payload object and a new content array on
 * each load, since a frozen array is slow to iterate, but its content blocks (flat objects: text, image,
 * reasoning) are frozen and shared the same way. Any other payload (one holding an array or a Date elsewhere) is
 * copied on each load. Either way, changing a loaded event never changes the log. `loadPayloads` hands out the
 * same payloads without a Date and an event object each (what a resume reads). `findSession` matches an id
 * prefix, or the text of the title or of any user or assistant message (tool results and system messages are
 * not searched), ignoring case and surrounding white space.
 */
export class InMemorySessionStorage implements SessionStorage {
  readonly #sessions = new Map<string, SessionRecord>();

  /**
   * Appends a copy of the event; rejects with INVALID_INPUT for a bad session id or event (never throws). The
   * event is stored before this returns, so every save answers the same settled promise (see SAVED).
   */
  saveEvent(sessionId: string, event: SessionEvent): Promise<void> {
    try {
      this.#append(sessionId, event);
    } catch (error) {
      return Promise.reject(error);
    }
    return SAVED;
  }

  #append(sessionId: string, event: SessionEvent): void {
    checkSessionId(sessionId);
    checkSessionEvent(event);
    const timeMs = Date.prototype.getTime.call(event.timestamp);
    const payload = copyOf(event.payload, 'the session event');
    const stored: StoredEvent = { timeMs, payload, sharing: sharingOf(payload, lastCopyHoldsObjectsOnly()) };
    let record = this.#sessions.get(sessionId);
    if (record === undefined) {
      record = {
        sessionId,
        events: [],
        title: undefined,
        createdAtMs: timeMs,
        updatedAtMs: timeMs,
        messageCount: 0,
        searchTexts: [],
        indexedCount: 0,
      };
      this.#sessions.set(sessionId, record);
    }
    record.events.push(stored);
    record.updatedAtMs = timeMs;
    if (payload.type !== 'metadata') record.messageCount += 1;
    if (payload.type === 'user_message' && record.title === undefined) {
      record.title = sessionTitleOf(messageTextOf(payload.content));
    }
  }

  /**
   * The whole log in save order, or null for an unknown id: new event objects and Dates, around frozen stored
   * payloads, messages with their own content arrays of frozen blocks, or copies (see the class's comment).
   */
  async loadSession(sessionId: string): Promise<SessionEvent[] | null> {
    checkSessionId(sessionId);
    const record = this.#sessions.get(sessionId);
    if (record === undefined) return null;
    const { events } = record;
    const log = new Array<SessionEvent>(events.length);
    for (let index = 0; index < events.length; index++) {
      const event = events[index] as StoredEvent;
      log[index] = { timestamp: new Date(event.timeMs), payload: loadedPayload(event) };
    }
    return log;
  }

  /**
   * The payloads of `loadSession`'s events, shared or copied the same way, without a Date or an event object per
   * event (a resume reads no timestamp); null for an unknown id. A subclass that overrides `loadSession` is read
   * through its override, so that what it changes in a log (a migration, a filter) still reaches a resume.
   */
  async loadPayloads(sessionId: string): Promise<SessionEventPayload[] | null> {
    if (this.loadSession !== InMemorySessionStorage.prototype.loadSession) {
      const log = await this.loadSession(sessionId);
      return log === null ? null : log.map((event) => event.payload);
    }
    checkSessionId(sessionId);
    const record = this.#sessions.get(sessionId);
    if (record === undefined) return null;
    const { events } = record;
    const payloads = new Array<SessionEventPayload>(events.length);
    for (let index = 0; index < events.length; index++) {
      payloads[index] = loadedPayload(events[index] as StoredEvent);
    }
    return payloads;
  }

  /**
   * Newest first; the cursor means "strictly after this position", so sessions created between two
   * calls (which are newer) do not shift the later pages.
   */
  async listSessions(cursor: string | undefined, limit: number): Promise<SessionPage> {
    checkPageLimit(limit);
    const after = cursor === undefined ? undefined : decodeSessionCursor(cursor);
    const ordered = this.#ordered().filter(
      (record) => after === undefined || compareNewestFirst(record, after) > 0,
    );
    const page = ordered.slice(0, limit);
    const last = page.at(-1);
    return {
      sessions: page.map(summaryOf),
      nextCursor: ordered.length > limit && last !== undefined ? encodeSessionCursor(last) : null,
    };
  }

  /** Sessions whose id starts with the query or whose title or message text contains it, newest first. */
  async findSession(query: string): Promise<SessionSummary[]> {
    if (typeof query !== 'string') throw invalidStorageInput('query must be a string');
    const needle = query.trim().toLowerCase();
    if (needle === '') return [];
    return this.#ordered()
      .filter(
        (record) =>
          record.sessionId.toLowerCase().startsWith(needle) ||
          (record.title ?? '').toLowerCase().includes(needle) ||
          searchTextsOf(record).some((text) => text.includes(needle)),
      )
      .map(summaryOf);
  }

  /** Removes the session; an unknown id is not an error. */
  async deleteSession(sessionId: string): Promise<void> {
    checkSessionId(sessionId);
    this.#sessions.delete(sessionId);
  }

  #ordered(): SessionRecord[] {
    return [...this.#sessions.values()].sort(compareNewestFirst);
  }
}

/** Most recently updated first, ties by id descending so the order is total. */
function compareRecentFirst(a: Memory, b: Memory): number {
  const difference = b.updatedAt.getTime() - a.updatedAt.getTime();
  if (difference !== 0) return difference;
  if (a.id === b.id) return 0;
  return a.id > b.id ? -1 : 1;
}

/**
 * A MemoryStorage that keeps everything in the process's memory. A non-empty query matches memories
 * whose content contains any of its words (as a substring, ignoring case, so `test` finds `tests` and
 * words of scripts written without spaces are found); more distinct words matched rank first, then
 * the most recently updated. A query without any word (`''`, white space, punctuation) lists the
 * namespace most recently updated first.
 */
export class InMemoryMemoryStorage implements MemoryStorage {
  readonly #memories = new Map<string, Memory>();

  /** Memories of `namespace`, best first; `limit` is an integer >= 0 or Infinity (the whole namespace). */
  async search(namespace: string, query: string, limit: number): Promise<Memory[]> {
    if (typeof namespace !== 'string') throw invalidStorageInput('namespace must be a string');
    if (typeof query !== 'string') throw invalidStorageInput('query must be a string');
    if (limit !== Number.POSITIVE_INFINITY && (!Number.isInteger(limit) || limit < 0)) {
      throw invalidStorageInput(`limit must be an integer of at least 0 or Infinity, got ${String(limit)}`);
    }
    const inNamespace = [...this.#memories.values()].filter((memory) => memory.namespace === namespace);
    const words = searchWordsOf(query);
    let ordered: Memory[];
    if (words.length === 0) {
      ordered = inNamespace.sort(compareRecentFirst);
    } else {
      ordered = inNamespace
        .map((memory) => {
          const content = memory.content.toLowerCase();
          return { memory, score: words.filter((word) => content.includes(word)).length };
        })
        .filter((entry) => entry.score > 0)
        .sort((a, b) => b.score - a.score || compareRecentFirst(a.memory, b.memory))
        .map((entry) => entry.memory);
    }
    const page = limit === Number.POSITIVE_INFINITY ? ordered : ordered.slice(0, limit);
    // A memory is flat but for its two Dates, which a freeze would not protect: each reader gets a copy.
    return page.map((memory) => copyOf(memory, 'the memory'));
  }

  /** Stores a copy, replacing the memory with the same id (even one of another namespace). */
  async save(memory: Memory): Promise<void> {
    checkMemory(memory);
    this.#memories.set(memory.id, copyOf(memory, 'the memory'));
  }

  /** Removes a memory; an unknown id is not an error. */
  async delete(id: string): Promise<void> {
    if (typeof id !== 'string') throw invalidStorageInput('id must be a string');
    this.#memories.delete(id);
  }
}
