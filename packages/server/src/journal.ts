import type { AgentEvent } from '@youyou/agent';

/** An AgentEvent as the server sends it: `sequence` is the session's server sequence (the SSE `id`). */
export interface JournalEntry {
  sequence: number;
  event: AgentEvent;
}

type Listener = (entry: JournalEntry) => void;

/**
 * Every event the server relayed for one session, numbered 1, 2, 3 … across all the Session objects this
 * process opened for it (a Session restarts its own `sequence` on resume; the journal does not), so a
 * client's `Last-Event-ID` stays a valid cursor when the session is closed while idle and resumed later.
 * The oldest entries are dropped past `capacity`; a cursor before them is answered from the oldest kept.
 */
export class SessionJournal {
  private readonly entries: JournalEntry[] = [];
  private readonly listeners = new Set<Listener>();
  private last = 0;

  constructor(private readonly capacity: number) {}

  /** The sequence of the newest entry, 0 before the first. */
  get lastSequence(): number {
    return this.last;
  }

  /** Numbers an event and hands it to every subscriber. */
  append(event: AgentEvent): JournalEntry {
    this.last += 1;
    const entry: JournalEntry = { sequence: this.last, event: { ...event, sequence: this.last } };
    this.entries.push(entry);
    if (this.entries.length > this.capacity) this.entries.splice(0, this.entries.length - this.capacity);
    for (const listener of this.listeners) listener(entry);
    return entry;
  }

  /** True while a stream reads the journal. */
  get hasSubscribers(): boolean {
    return this.listeners.size > 0;
  }

  /** Drops the kept entries (memory of a session nobody uses); the numbering goes on from the last one. */
  forget(): void {
    this.entries.length = 0;
  }

  /** Entries with a sequence greater than `after`, oldest first. */
  since(after: number): JournalEntry[] {
    const first = this.entries[0];
    if (first === undefined || after >= this.last) return [];
    const index = Math.max(0, after - first.sequence + 1);
    return this.entries.slice(index);
  }

  /**
   * The entries after `after` and then every new one, in order and each once: the backlog is read and the
   * listener attached in one synchronous step, so nothing appended in between can be missed or doubled.
   * A cursor past the newest entry was not issued by this journal (a previous server process, or made up):
   * everything kept is sent, so the client misses nothing this process has.
   */
  subscribe(after: number, listener: Listener): { backlog: JournalEntry[]; unsubscribe: () => void } {
    const from = after > this.last ? 0 : after;
    const backlog = this.since(from);
    this.listeners.add(listener);
    return { backlog, unsubscribe: () => this.listeners.delete(listener) };
  }
}
