import type { SqliteConnection } from './connection.js';
import { eventRange } from './event-keys.js';
import { indexedText, MESSAGE_TEXT_FUNCTION, searchTextOfPayload } from './text.js';

/** Messages indexed per transaction: a batch blocks the event loop for a few milliseconds at most. */
const BATCH_ROWS = 100;
/** Sessions looked at per transaction. */
const BATCH_SESSIONS = 50;
/** How long after a write the index catches up, so that bursts of writes are indexed together. */
const IDLE_DELAY_MS = 250;
/** When a pass failed (the file stayed locked, say), the next try waits this long. */
const RETRY_DELAY_MS = 5_000;

const SQL = {
  pending: 'SELECT EXISTS (SELECT 1 FROM session_activity WHERE event_count > indexed_seq)',
  pendingSessions: `SELECT updated_at, session_id, session, indexed_seq, event_count FROM session_activity
    WHERE event_count > indexed_seq LIMIT ?`,
  unindexed:
    'SELECT id, payload, tagged FROM events WHERE id > ? AND id <= ? AND searchable = 1 ORDER BY id LIMIT ?',
  insertText: 'INSERT INTO search_texts (id, text) VALUES (?, ?)',
  index: 'INSERT INTO search_texts_fts (rowid, text) VALUES (?, ?)',
  setIndexedSeq: 'UPDATE session_activity SET indexed_seq = ? WHERE updated_at = ? AND session_id = ?',
} as const;

/**
 * Keeps the full-text index of message text up to date off the write path. Indexing a message with the
 * trigram tokenizer costs several times a bare INSERT (most of it per transaction), so `saveEvent` only
 * marks a message `searchable`, and this indexes new messages in batches a moment after the writes (or
 * when `flush()` is called), moving each session's `indexed_seq` (in `session_activity`) forward. Searches stay exact meanwhile:
 * they use the index up to `indexed_seq` and check the messages after it one by one (with the SQL function
 * `youyou_message_text`), so a pass that fails or never runs (a read-only connection, a process that exits
 * at once) only makes a search slower, never wrong.
 */
export class SearchIndexer {
  readonly #connection: SqliteConnection;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  /** Registers `youyou_message_text` on the connection; passes never run on a read-only connection. */
  constructor(connection: SqliteConnection) {
    this.#connection = connection;
    connection.database.function(
      MESSAGE_TEXT_FUNCTION,
      { deterministic: true, directOnly: true },
      (payload: unknown, tagged: unknown) =>
        typeof payload === 'string' ? searchTextOfPayload(payload, tagged === 1) : null,
    );
    connection.onClose(() => {
      this.#closed = true;
      clearTimeout(this.#timer);
    });
  }

  /** Asks for a pass after `delayMs` unless one is due already; the timer never keeps the process alive. */
  schedule(delayMs = IDLE_DELAY_MS): void {
    if (this.#closed || this.#timer !== undefined || this.#connection.database.readonly) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#pass();
    }, delayMs);
    this.#timer.unref();
  }

  /** Indexes every message not indexed yet, now; resolves with how many were indexed. */
  async flush(): Promise<number> {
    let total = 0;
    while (true) {
      const { indexed, more } = await this.#connection.write('indexing message text', () =>
        this.#indexBatch(),
      );
      total += indexed;
      if (!more) return total;
    }
  }

  async #pass(): Promise<void> {
    const connection = this.#connection;
    try {
      const pending = await connection.read('checking the search index', () =>
        connection.statement(SQL.pending).pluck().get(),
      );
      if (pending !== 1) return;
      const { more } = await connection.write('indexing message text', () => this.#indexBatch());
      if (more) this.schedule(0);
    } catch {
      // Nothing is lost: the messages stay searchable one by one, and a later pass indexes them.
      this.schedule(RETRY_DELAY_MS);
    }
  }

  /** Indexes up to one batch inside the caller's write transaction. */
  #indexBatch(): { indexed: number; more: boolean } {
    const connection = this.#connection;
    const sessions = connection.statement(SQL.pendingSessions).raw().all(BATCH_SESSIONS) as [
      updatedAt: number,
      sessionId: string,
      key: number,
      indexedSeq: number,
      eventCount: number,
    ][];
    const unindexed = connection.statement(SQL.unindexed).raw();
    const insertText = connection.statement(SQL.insertText);
    const index = connection.statement(SQL.index);
    let budget = BATCH_ROWS;
    for (const [updatedAt, sessionId, key, indexedSeq, eventCount] of sessions) {
      if (budget === 0) return { indexed: BATCH_ROWS, more: true };
      const base = eventRange(key).first - 1;
      const rows = unindexed.all(base + indexedSeq, base + eventCount, budget) as [number, string, 0 | 1][];
      for (const [id, payload, tagged] of rows) {
        const text = searchTextOfPayload(payload, tagged === 1) ?? '';
        insertText.run(id, text);
        index.run(id, indexedText(text));
      }
      // A full batch may have stopped inside the session: it resumes after the last row indexed.
      const full = rows.length === budget;
      budget -= rows.length;
      const indexedUpTo = full ? (rows.at(-1)?.[0] as number) - base : eventCount;
      connection.statement(SQL.setIndexedSeq).run(indexedUpTo, updatedAt, sessionId);
    }
    return { indexed: BATCH_ROWS - budget, more: budget === 0 || sessions.length === BATCH_SESSIONS };
  }
}
