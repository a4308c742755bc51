/** What the budget asks of a journal when the hub's journals keep more than it allows. */
export interface BudgetedJournal {
  /** Drops the journal's finished turns; false when it keeps none. */
  dropFinished(): boolean;
  /** Drops the journal's oldest kept entry; false when it keeps none. */
  dropOldest(): boolean;
}

/**
 * The bytes all the journals of one hub may keep for reconnecting clients (`limits.journalMaxBytes`), so that
 * a burst of sessions within the retention cannot grow the server's memory without a bound. Past it, the
 * finished turns of the session whose last turn ended longest ago are dropped first, session by session; only
 * when no journal keeps a finished turn does the journal that grows drop its own oldest entries. A client
 * whose cursor was among dropped entries gets a resync, as for any cursor older than what is kept.
 */
export class JournalBudget {
  private bytes = 0;
  /** The journals that keep a finished turn, the one whose last turn ended longest ago first (Set order). */
  private readonly withFinished = new Set<BudgetedJournal>();

  constructor(readonly maxBytes: number) {}

  /** The bytes the hub's journals keep now. */
  get keptBytes(): number {
    return this.bytes;
  }

  /** A journal kept `bytes` more (`endedTurn`: its new entry ended a turn); drops what is over the budget. */
  grew(journal: BudgetedJournal, bytes: number, endedTurn: boolean): void {
    this.bytes += bytes;
    if (endedTurn) {
      this.withFinished.delete(journal);
      this.withFinished.add(journal);
    }
    while (this.bytes > this.maxBytes) {
      const oldest = this.withFinished.values().next();
      if (oldest.done !== true) {
        this.withFinished.delete(oldest.value);
        oldest.value.dropFinished();
      } else if (!journal.dropOldest()) {
        return;
      }
    }
  }

  /** A journal dropped `bytes` of entries; `keepsFinished` is false once it keeps no finished turn. */
  shrank(journal: BudgetedJournal, bytes: number, keepsFinished: boolean): void {
    this.bytes -= bytes;
    if (!keepsFinished) this.withFinished.delete(journal);
  }
}
