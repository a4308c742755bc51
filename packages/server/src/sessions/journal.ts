import type { AgentEvent, AgentEventPayload } from '@youyou/agent';
import type { ElicitationSettledReason, HeldElicitationView } from './held-elicitations.js';

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
  event: JournalEvent;
}

type Listener = (entry: JournalEntry) => void;

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
 * Every event the server relayed for one session in this process, under a sequence that only grows for the
 * session — across the Session objects this process opened for it (the core restarts its own `sequence` on
 * resume), and across processes and restarts too: each new sequence is the larger of the previous one + 1 and
 * the current time in microseconds. One process runs a session's turns at a time (the lease), so a process that
 * takes a session over numbers after the one before it, and a cursor from elsewhere is never mistaken for one
 * of ours. The oldest entries are dropped past `capacity`.
 */
export class SessionJournal {
  private readonly entries: JournalEntry[] = [];
  private readonly listeners = new Set<Listener>();
  private last = 0;
  /** The sequence of the newest entry dropped past the capacity; 0 while nothing was. */
  private lastDropped = 0;

  constructor(
    private readonly capacity: number,
    /** Called each time the last stream reading the journal unsubscribes. */
    private readonly onUnused?: () => void,
  ) {}

  /** The sequence of the newest entry, 0 before the first. */
  get lastSequence(): number {
    return this.last;
  }

  /** Numbers an event and hands it to every subscriber. */
  append(event: JournalEvent): JournalEntry {
    this.last = Math.max(this.last + 1, Date.now() * 1000);
    const entry: JournalEntry = { sequence: this.last, event: { ...event, sequence: this.last } };
    this.entries.push(entry);
    if (this.entries.length > this.capacity) {
      const dropped = this.entries.splice(0, this.entries.length - this.capacity);
      this.lastDropped = dropped.at(-1)?.sequence ?? this.lastDropped;
    }
    for (const listener of this.listeners) listener(entry);
    return entry;
  }

  /** True while a stream reads the journal. */
  get hasSubscribers(): boolean {
    return this.listeners.size > 0;
  }

  /** Kept entries with a sequence greater than `after`, oldest first. */
  since(after: number): JournalEntry[] {
    return this.entries.slice(this.firstIndexAfter(after));
  }

  /**
   * The entries after `after` and then every new one, in order and each once: the backlog is read and the
   * listener attached in one synchronous step, so nothing appended in between can be missed or doubled.
   */
  subscribe(after: number, listener: Listener): JournalSubscription {
    const index = this.firstIndexAfter(after);
    const continuous =
      after === this.last ||
      after === this.lastDropped ||
      (index > 0 && this.entries[index - 1]?.sequence === after);
    const backlog = this.entries.slice(index);
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

  /** The index of the first kept entry with a sequence greater than `after` (binary search: they ascend). */
  private firstIndexAfter(after: number): number {
    let low = 0;
    let high = this.entries.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.entries[middle]?.sequence ?? 0) > after) high = middle;
      else low = middle + 1;
    }
    return low;
  }
}
