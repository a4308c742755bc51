import type { AgentEvent, AgentEventPayload } from '@youyou/agent';
import { publicError } from '../http/errors.js';
import type { ElicitationSettledReason, HeldElicitationView } from './held-elicitations.js';
import type { JournalBudget } from './journal-budget.js';

/**
 * What the server itself adds to a session's stream, beside the agent's events: its type starts with
 * `server.` so that it never collides with an AgentEvent type. Not saved in the session's log.
 */
export type ServerEventPayload =
  /** An MCP server's question now waits for the session's client (answer it at `…/elicitations/:id`). */
  | ({ type: 'server.elicitation_held' } & HeldElicitationView)
  /** The question stopped waiting; `action` is what its MCP server was answered. */
  | {
      type: 'server.elicitation_settled';
      id: string;
      reason: ElicitationSettledReason;
      action: 'accept' | 'decline' | 'cancel';
    };

/** An event of a session's stream: one of the agent's, or one the server adds (`server.*`). */
export type JournalEvent = Omit<AgentEvent, 'payload'> & { payload: AgentEventPayload | ServerEventPayload };

/** An event as the server sends it: `sequence` is the session's server sequence (the SSE `id`). */
export interface JournalEntry {
  sequence: number;
  turnId: string;
  /** The payload's type: the SSE `event:` name. */
  type: string;
  /** The event's JSON as every stream sends it: Errors as `{ code, message, retryable }`, Dates ISO strings. */
  data: string;
  /**
   * The event itself, on an entry handed to a listener as it is appended. An entry read back from what the
   * journal keeps has none: the journal keeps the sent form only (see `eventOf`).
   */
  event?: JournalEvent;
}

/** An error as a stream sent it (`{ code, message, retryable }`, already public), read back from a kept entry. */
export class SentError {
  constructor(
    readonly code: string,
    readonly message: string,
    readonly retryable: boolean,
  ) {}
}

/** What a consumer of an entry's event reads: its turn and payload (a kept entry's has its Errors as SentError). */
export type JournalEventView = Pick<JournalEvent, 'turnId' | 'payload'>;

/** The event of an entry: the live one, or the one its sent JSON describes (an `error` payload's as a SentError). */
export function eventOf(entry: JournalEntry): JournalEventView {
  if (entry.event !== undefined) return entry.event;
  const parsed = JSON.parse(entry.data) as JournalEventView;
  const payload = parsed.payload as { type: string; error?: unknown };
  if (payload.type === 'error' && typeof payload.error === 'object' && payload.error !== null) {
    const sent = payload.error as { code?: unknown; message?: unknown; retryable?: unknown };
    payload.error = new SentError(String(sent.code), String(sent.message), sent.retryable === true);
  }
  return parsed;
}

const TERMINAL = new Set(['turn_complete', 'turn_cancelled', 'turn_suspended']);

/** Whether an entry ends its turn. */
export function isTerminal(entry: JournalEntry): boolean {
  return TERMINAL.has(entry.type);
}

/** The JSON of a payload for the wire: Errors become their public `{ code, message, retryable }`, never a stack. */
function payloadJson(payload: JournalEvent['payload']): string {
  const json = JSON.stringify(payload, function replace(this: unknown, key: string, value: unknown) {
    // `value` has been through toJSON already; the holder still has the Error itself.
    const original = (this as Record<string, unknown>)[key];
    if (original instanceof Error) {
      const { code, message, retryable } = publicError(original);
      return { code, message, retryable };
    }
    return value;
  });
  // V8 builds the JSON as a rope of parts; reading a character flattens it, so what the journal keeps is one
  // string of the characters (about 45 bytes less per kept event than the rope, measured on Node 20).
  json.charCodeAt(0);
  return json;
}

/** A Date's JSON (`toJSON`: its ISO string, or null when invalid), from its time value. */
function timeJson(time: number): string {
  return Number.isFinite(time) ? `"${new Date(time).toISOString()}"` : 'null';
}

/**
 * What one kept entry costs beside its payload's JSON, in bytes: its slots in the journal's six arrays and the
 * JSON string's header.
 */
const ENTRY_OVERHEAD_BYTES = 64;

/** A character V8 cannot keep in a one-byte (Latin-1) string. */
const WIDE_CHARACTER = /[\u0100-\uffff]/;

/**
 * The bytes V8 keeps a payload's JSON in: one per character, or two when any character is above U+00FF (the
 * whole string is then two-byte: Chinese, emoji, curly quotes). The test takes ~30 ns on a one-byte string of
 * any length (the regex engine knows none of its characters can match) and, on a two-byte one, stops at the
 * first wide character (~0.5 ns a character before it; measured on Node 20).
 */
function payloadBytes(json: string): number {
  return WIDE_CHARACTER.test(json) ? 2 * json.length : json.length;
}

/**
 * Every event the server relayed for one session in this process, under a sequence that only grows for the
 * session — across the Session objects this process opened for it (the core restarts its own `sequence` on
 * resume), and across processes and restarts too: each new sequence is the larger of the previous one + 1 and
 * the current time in microseconds. One process runs a session's turns at a time (the lease), so a process that
 * takes a session over numbers after the one before it, and a cursor from elsewhere is never mistaken for one
 * of ours. The oldest entries are dropped past `capacity`, and past the hub's byte budget (journal-budget.ts).
 *
 * What is kept of an event is what was sent: its payload's JSON and the envelope's few values, in flat arrays
 * (no event object, no Date, no Error with its stack and cause); a backlog rebuilds the same JSON from them.
 */
export class SessionJournal {
  private readonly sequences: number[] = [];
  private readonly times: number[] = [];
  private readonly sessionIds: string[] = [];
  private readonly turnIds: string[] = [];
  private readonly types: string[] = [];
  private readonly payloads: string[] = [];
  private readonly listeners = new Set<(entry: JournalEntry) => void>();
  /**
   * The index of the oldest kept entry in the arrays: a drop moves it instead of shifting six arrays per
   * appended entry (a journal at its capacity drops one each time); the arrays are cut when half is dropped.
   */
  private head = 0;
  private last = 0;
  /** The sequence of the newest entry dropped (past the capacity or the budget); 0 while nothing was. */
  private lastDropped = 0;
  /** The sequence of the newest kept entry that ended a turn; 0 when none is kept. */
  private lastTerminal = 0;
  private bytes = 0;

  constructor(
    private readonly capacity: number,
    /** Called each time the last stream reading the journal unsubscribes. */
    private readonly onUnused?: () => void,
    /** The byte budget this journal shares with the hub's other journals. */
    private readonly budget?: JournalBudget,
  ) {}

  /** The sequence of the newest entry, 0 before the first. */
  get lastSequence(): number {
    return this.last;
  }

  /** The bytes the kept entries count (see ENTRY_OVERHEAD_BYTES). */
  get keptBytes(): number {
    return this.bytes;
  }

  /** Numbers an event, keeps its sent form and hands it to every subscriber. */
  append(event: JournalEvent): JournalEntry {
    this.last = Math.max(this.last + 1, Date.now() * 1000);
    const sequence = this.last;
    const type = event.payload.type;
    // A Date, as the type says; anything else is read as a date (an invalid one is sent as null).
    const stamp: unknown = event.timestamp;
    const time = stamp instanceof Date ? stamp.getTime() : new Date(stamp as string).getTime();
    const payload = payloadJson(event.payload);
    this.sequences.push(sequence);
    this.times.push(time);
    this.sessionIds.push(event.sessionId);
    this.turnIds.push(event.turnId);
    this.types.push(type);
    this.payloads.push(payload);
    const cost = ENTRY_OVERHEAD_BYTES + payloadBytes(payload);
    this.bytes += cost;
    const terminal = TERMINAL.has(type);
    if (terminal) this.lastTerminal = sequence;
    const kept = this.sequences.length - this.head;
    if (kept > this.capacity) this.drop(kept - this.capacity);
    this.budget?.grew(this, cost, terminal);
    const entry: JournalEntry = {
      sequence,
      turnId: event.turnId,
      type,
      data: wireJson(event.sessionId, event.turnId, time, sequence, payload),
      event: { ...event, sequence },
    };
    for (const listener of this.listeners) listener(entry);
    return entry;
  }

  /** True while a stream reads the journal. */
  get hasSubscribers(): boolean {
    return this.listeners.size > 0;
  }

  /** Kept entries with a sequence greater than `after`, oldest first. */
  since(after: number): JournalEntry[] {
    return this.entriesFrom(this.firstIndexAfter(after));
  }

  /**
   * The entries after `after` and then every new one, in order and each once: the backlog is read and the
   * listener attached in one synchronous step, so nothing appended in between can be missed or doubled.
   */
  subscribe(after: number, listener: (entry: JournalEntry) => void): JournalSubscription {
    const index = this.firstIndexAfter(after);
    const continuous =
      after === this.last ||
      after === this.lastDropped ||
      (index > this.head && this.sequences[index - 1] === after);
    const backlog = this.entriesFrom(index);
    this.listeners.add(listener);
    return {
      backlog,
      continuous,
      lastSequence: this.last,
      unsubscribe: () => {
        if (this.listeners.delete(listener) && this.listeners.size === 0) this.onUnused?.();
      },
    };
  }

  /**
   * Drops every kept entry up to the newest one that ended a turn (the finished turns, and what the server
   * announced between them); false when no kept entry ended a turn. A cursor among them then gets a resync.
   */
  dropFinished(): boolean {
    if (this.lastTerminal === 0) return false;
    this.drop(this.firstIndexAfter(this.lastTerminal) - this.head);
    return true;
  }

  /** Drops the oldest kept entry (a running turn's, when its journal alone is over the budget); false when empty. */
  dropOldest(): boolean {
    if (this.sequences.length === this.head) return false;
    this.drop(1);
    return true;
  }

  /** Drops everything kept (the hub forgets the session): its bytes leave the budget. */
  release(): void {
    this.drop(this.sequences.length - this.head);
  }

  private drop(count: number): void {
    if (count <= 0) return;
    const end = this.head + count;
    let freed = 0;
    for (let index = this.head; index < end; index++) {
      freed += ENTRY_OVERHEAD_BYTES + payloadBytes(this.payloads[index] ?? '');
      // The payload goes now; the slot until the arrays are cut.
      this.payloads[index] = '';
    }
    this.lastDropped = this.sequences[end - 1] ?? this.lastDropped;
    this.head = end;
    if (this.head * 2 >= this.sequences.length) {
      for (const column of [
        this.sequences,
        this.times,
        this.sessionIds,
        this.turnIds,
        this.types,
        this.payloads,
      ]) {
        column.splice(0, this.head);
      }
      this.head = 0;
    }
    this.bytes -= freed;
    const keepsFinished = this.lastTerminal > this.lastDropped;
    if (!keepsFinished) this.lastTerminal = 0;
    this.budget?.shrank(this, freed, keepsFinished);
  }

  private entriesFrom(index: number): JournalEntry[] {
    const entries: JournalEntry[] = [];
    for (let at = index; at < this.sequences.length; at++) {
      const sequence = this.sequences[at] ?? 0;
      const turnId = this.turnIds[at] ?? '';
      const data = wireJson(
        this.sessionIds[at] ?? '',
        turnId,
        this.times[at] ?? Number.NaN,
        sequence,
        this.payloads[at] ?? 'null',
      );
      entries.push({ sequence, turnId, type: this.types[at] ?? '', data });
    }
    return entries;
  }

  /** The index of the first kept entry with a sequence greater than `after` (binary search: they ascend). */
  private firstIndexAfter(after: number): number {
    let low = this.head;
    let high = this.sequences.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.sequences[middle] ?? 0) > after) high = middle;
      else low = middle + 1;
    }
    return low;
  }
}

/** What `subscribe` hands a stream: the kept entries after the cursor, and whether they follow it without a gap. */
export interface JournalSubscription {
  /** Kept entries with a sequence greater than the cursor, oldest first. */
  backlog: JournalEntry[];
  /**
   * True when the backlog continues the cursor with nothing missing: the cursor is one this journal issued and
   * still holds, its newest, or the one just before its oldest kept entry. False for a cursor from another
   * process, from before a restart, from a journal of the session this process forgot (a new journal numbers
   * after it), or older than what is kept: events may be missing in between. Cursor 0 asks for what is kept.
   */
  continuous: boolean;
  /** The newest sequence when the subscription was made (a valid cursor on this journal). */
  lastSequence: number;
  unsubscribe: () => void;
}

/**
 * An event's JSON for the wire, in the key order of the core's events (`sessionId`, `turnId`, `timestamp`,
 * `sequence`, `payload`): the same bytes whether the event is sent live or rebuilt from what is kept.
 */
function wireJson(
  sessionId: string,
  turnId: string,
  time: number,
  sequence: number,
  payload: string,
): string {
  return `{"sessionId":${JSON.stringify(sessionId)},"turnId":${JSON.stringify(turnId)},"timestamp":${timeJson(time)},"sequence":${sequence},"payload":${payload}}`;
}
