import type { AgentError } from '@youyou/agent';
import { type Database, type Statement, statementName } from './database.js';
import { storageError } from './errors.js';
import { indexStatement } from './session-sql.js';

/** Sessions taken per statement. */
const BATCH_SESSIONS = 50;
/** Events read per statement. */
const BATCH_ROWS = 200;
/** A pass starts once this storage's writes pause this long, so that a burst is indexed together... */
const IDLE_DELAY_MS = 250;
/** ...but no later than this after the first write of the burst, so that a busy server indexes too. */
const MAX_DELAY_MS = 2_000;
/** After a failed pass, the next waits at least this long. */
const RETRY_DELAY_MS = 5_000;

const CONTEXT = 'indexing message text for search failed';

interface BatchRow {
  sessions: number;
  events: number;
  indexed: number;
}

/**
 * Keeps the search indexes of message text up to date off the write path. Writing a message's tsvector,
 * GIN and trigram entries in `saveEvent` cost about as much as the rest of the save, so a save only
 * stores the event (with its `search_text`), and this copies new messages into `youyou_session_search`
 * in batches a moment later, moving each session's `indexed_seq` on. Searches are exact meanwhile (they
 * read the events after `indexed_seq` directly), so a pass that fails, or never runs because the process
 * exits, only makes searches slower until the next pass of any process that writes.
 */
export class SearchIndexer {
  readonly #database: Database;
  readonly #schemaName: string;
  readonly #background: Statement;
  readonly #waiting: Statement;
  readonly #onBackgroundError: (error: AgentError) => void;
  #timer: NodeJS.Timeout | undefined;
  /** Until when a new write may push the scheduled pass back. */
  #pushableUntil = 0;
  /** No pass starts before this (set after a failure). */
  #retryAt = 0;
  /** The batch or flush running now: one at a time per storage. */
  #running: Promise<void> | undefined;
  #closed = false;

  /**
   * Made by `openPostgresStorage`; `onBackgroundError` hears of passes that failed for a reason other
   * than the connection.
   */
  constructor(options: { database: Database; onBackgroundError: (error: AgentError) => void }) {
    this.#database = options.database;
    this.#onBackgroundError = options.onBackgroundError;
    const { tables, schemaName } = options.database;
    this.#schemaName = schemaName;
    // A background pass gives way to another process's pass and to a delete; a flush waits for them.
    this.#background = {
      name: statementName(schemaName, 'index_search_background'),
      text: indexStatement(tables, true),
    };
    this.#waiting = {
      name: statementName(schemaName, 'index_search_flush'),
      text: indexStatement(tables, false),
    };
  }

  /** Asks for a pass after a write; the timer never keeps the process alive. */
  schedule(delayMs = IDLE_DELAY_MS): void {
    if (this.#closed) return;
    const now = Date.now();
    if (this.#timer !== undefined) {
      // Restarting the timer on every write costs next to nothing and batches a burst into one pass.
      if (now <= this.#pushableUntil) this.#timer.refresh();
      return;
    }
    const delay = Math.max(delayMs, this.#retryAt - now);
    this.#pushableUntil = now + MAX_DELAY_MS - delay;
    this.#timer = setTimeout(() => this.#fire(), delay);
    this.#timer.unref();
  }

  /**
   * Indexes every message not indexed yet, of every session, now; resolves with how many messages this
   * call copied (those another process's pass copied meanwhile are not counted).
   */
  async flush(): Promise<number> {
    while (this.#running !== undefined) await this.#running;
    let total = 0;
    const run = (async () => {
      while (true) {
        const row = await this.#batch(this.#waiting);
        total += row.indexed;
        if (!this.#more(row)) return;
      }
    })();
    this.#track(run);
    await run;
    return total;
  }

  /** Stops the timer and waits for a pass in progress; later passes do not start. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    while (this.#running !== undefined) await this.#running;
  }

  #fire(): void {
    this.#timer = undefined;
    if (this.#closed) return;
    if (this.#running !== undefined) {
      // A flush is running; look again once it is done.
      this.schedule();
      return;
    }
    const run = this.#batch(this.#background).then((row) => {
      if (this.#more(row)) this.schedule(0);
    });
    this.#track(run);
    run.catch((error: unknown) => this.#failed(storageError(error, CONTEXT)));
  }

  /** Marks `run` as the one running until it settles; `#running` itself never rejects. */
  #track(run: Promise<void>): void {
    const settled: Promise<void> = run
      .catch(() => undefined)
      .finally(() => {
        if (this.#running === settled) this.#running = undefined;
      });
    this.#running = settled;
  }

  async #batch(statement: Statement): Promise<BatchRow> {
    const result = await this.#database.query<BatchRow>({
      statement,
      values: [BATCH_SESSIONS, BATCH_ROWS, this.#schemaName],
      context: CONTEXT,
    });
    return result.rows[0] ?? { sessions: 0, events: 0, indexed: 0 };
  }

  /** True when the batch was full, so that more may be waiting. */
  #more(row: BatchRow): boolean {
    return row.events > 0 && (row.sessions === BATCH_SESSIONS || row.events === BATCH_ROWS);
  }

  #failed(error: AgentError): void {
    if (this.#closed) return;
    // Nothing is lost: the messages stay searchable from the events, and the next write asks again.
    this.#retryAt = Date.now() + RETRY_DELAY_MS;
    if (error.retryable !== true) this.#onBackgroundError(error);
  }
}
