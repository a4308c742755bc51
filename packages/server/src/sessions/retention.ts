import { SessionJournal } from './journal.js';
import { JournalBudget } from './journal-budget.js';

/**
 * What a hub remembers of the sessions it has met, open here or not (each one's journal and tenant), and
 * when it forgets them: `journalRetentionMs` after a session is no longer open here and no stream reads its
 * journal, so a long-running server holds the recent sessions only. All the journals share one byte budget.
 */
export class SessionRetention {
  private readonly journals = new Map<string, SessionJournal>();
  private readonly tenants = new Map<string, string>();
  /** The pending forget of each session not open here (see `forgetLater`): one per session, the latest wins. */
  private readonly forgetTimers = new Map<string, NodeJS.Timeout>();
  /** The bytes every journal of the hub may keep together. */
  private readonly budget: JournalBudget;

  constructor(
    private readonly options: {
      /** The sessions open on the hub (read only): an open session is never forgotten. */
      open: ReadonlyMap<string, unknown>;
      /** The sessions the hub is opening (read only): not forgotten either. */
      opening: ReadonlyMap<string, unknown>;
      journalCapacity: number;
      journalRetentionMs: number;
      /** The bytes all journals may keep together (see journal-budget.ts). */
      journalMaxBytes: number;
    },
  ) {
    this.budget = new JournalBudget(options.journalMaxBytes);
  }

  /** The tenant remembered for a session, if any. */
  tenantOf(sessionId: string): string | undefined {
    return this.tenants.get(sessionId);
  }

  /** Remembers the tenant that owns a session, until the session is forgotten. */
  keepTenant(sessionId: string, tenant: string): void {
    this.tenants.set(sessionId, tenant);
  }

  /**
   * The session's journal (created empty on first use). A journal made for a session not open here (a tail,
   * a status) is forgotten after the retention like a closed session's: its first stream subscribes at once.
   */
  journal(sessionId: string): SessionJournal {
    let journal = this.journals.get(sessionId);
    if (journal === undefined) {
      // The last stream of a session not open here left: the session is forgotten a retention later.
      journal = new SessionJournal(
        this.options.journalCapacity,
        () => {
          if (!this.options.open.has(sessionId)) this.forgetLater(sessionId);
        },
        this.budget,
      );
      this.journals.set(sessionId, journal);
      if (!this.options.open.has(sessionId)) this.forgetLater(sessionId);
    }
    return journal;
  }

  /**
   * Forgets a session not open here after `journalRetentionMs`: its journal (kept events and all) and its
   * tenant are dropped. Not while it is open again or a stream reads its journal (the last stream to leave
   * calls this again). The session is then as if this process never had it: a client that comes back with a
   * cursor of the forgotten journal is told to resync, and the next journal numbers after that cursor (see
   * journal.ts).
   */
  forgetLater(sessionId: string): void {
    const pending = this.forgetTimers.get(sessionId);
    if (pending !== undefined) clearTimeout(pending);
    const timer = setTimeout(() => {
      this.forgetTimers.delete(sessionId);
      if (this.options.open.has(sessionId) || this.options.opening.has(sessionId)) return;
      const journal = this.journals.get(sessionId);
      if (journal?.hasSubscribers === true) return;
      journal?.release();
      this.journals.delete(sessionId);
      this.tenants.delete(sessionId);
    }, this.options.journalRetentionMs);
    timer.unref();
    this.forgetTimers.set(sessionId, timer);
  }

  /** Cancels every pending forget (the hub is closing). */
  stop(): void {
    for (const timer of this.forgetTimers.values()) clearTimeout(timer);
    this.forgetTimers.clear();
  }
}
