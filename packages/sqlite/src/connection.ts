import { closeSync, openSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { type AgentError, isAgentError } from '@youyou/agent';
import Database from 'better-sqlite3';
import { closedError, invalidConfig, isBusy, storageError } from './errors.js';
import { MIGRATIONS, type Migration, runMigrations } from './migrations.js';

/** What `openSqliteStorage` takes besides the path; every field is optional. */
/** Claim settings of a storage (`openSqliteStorage(path, { claims })`). */
export interface SqliteClaimOptions {
  /** How long a claim outlives its last renewal, when its process cannot be seen to have died. Default 30000. */
  ttlMs?: number;
  /** How often a held claim is renewed. Default a third of the ttl. */
  heartbeatMs?: number;
}

export interface SqliteStorageOptions {
  /** Open the file read-only: reads work, every write rejects with STORAGE_ERROR. Default false. */
  readonly?: boolean;
  /** How long SQLite itself waits for another connection's lock before giving up. Default 5000 ms. */
  busyTimeoutMs?: number;
  /** How many more times a locked operation is tried after the busy timeout, with jittered backoff. Default 3. */
  busyRetries?: number;
  /**
   * `'normal'` (default): a commit survives a crash of the process; a power failure may lose the last
   * commits but never corrupts the file (SQLite's advice for WAL). `'full'`: each commit is fsynced.
   */
  synchronous?: 'normal' | 'full';
  /** How session claims (`acquireSession`) expire and are renewed. */
  claims?: SqliteClaimOptions;
  /** Failures of background work (renewing a claim) that no call can reject with. Default: console.warn. */
  onBackgroundError?: (error: AgentError) => void;
  /**
   * The permission bits a new database file is created with; SQLite gives its -wal and -shm files the
   * database's. Default 0o600: sessions hold every prompt, answer and tool output, readable by no one else.
   * An existing file keeps its mode.
   */
  fileMode?: number;
}

const DEFAULT_BUSY_TIMEOUT_MS = 5_000;
const DEFAULT_BUSY_RETRIES = 3;
const DEFAULT_FILE_MODE = 0o600;
/**
 * The page cache of a connection, in KiB: SQLite's own default. better-sqlite3 builds SQLite with 16 MB, which
 * a long-running process fills as its file grows and keeps for good, while the logs are appended to and read
 * one session at a time, and the file's pages sit in the OS cache anyway (bench/README.md, "Soaks").
 */
const PAGE_CACHE_KIB = 2_000;
/**
 * The page size of a new file, in bytes (SQLite's default is 4096; an existing file keeps its own). In WAL mode a
 * commit writes every page it touched whole, and the fsync of each checkpoint costs about what was written, so
 * for a log of small events (a tool step: two commits of a few hundred bytes, each touching a page of `events`
 * and one of `session_activity`) a smaller page is less to write and to sync for the same data. Measured
 * against 4 KiB (tool steps saved as the core saves them): 0.8x the time with 2 KB and 8 KB tool outputs, the
 * same time and 1.05x the CPU with 32 KB ones; loading 10,000 events up to 1.07x, indexing and search the same.
 * 1 KiB gained more on small events but lost 20-30% on loads, large writes and searches.
 */
const PAGE_SIZE = 2_048;
const BACKOFF_BASE_MS = 20;
const BACKOFF_CAP_MS = 500;

function checkOptions(path: unknown, options: SqliteStorageOptions): void {
  if (typeof path !== 'string' || path === '') {
    throw invalidConfig("openSqliteStorage takes the path of a database file, or ':memory:'");
  }
  const { readonly, busyTimeoutMs, busyRetries, synchronous, fileMode } = options;
  if (fileMode !== undefined && (!Number.isInteger(fileMode) || fileMode < 0 || fileMode > 0o777)) {
    throw invalidConfig(`fileMode must be permission bits from 0 to 0o777, got ${String(fileMode)}`);
  }
  if (readonly !== undefined && typeof readonly !== 'boolean')
    throw invalidConfig('readonly must be a boolean');
  if (busyTimeoutMs !== undefined && (!Number.isInteger(busyTimeoutMs) || busyTimeoutMs < 0)) {
    throw invalidConfig(`busyTimeoutMs must be an integer of at least 0, got ${String(busyTimeoutMs)}`);
  }
  if (busyRetries !== undefined && (!Number.isInteger(busyRetries) || busyRetries < 0)) {
    throw invalidConfig(`busyRetries must be an integer of at least 0, got ${String(busyRetries)}`);
  }
  if (synchronous !== undefined && synchronous !== 'normal' && synchronous !== 'full') {
    throw invalidConfig(`synchronous must be 'normal' or 'full', got ${String(synchronous)}`);
  }
  if (options.claims !== undefined && (typeof options.claims !== 'object' || options.claims === null)) {
    throw invalidConfig('claims must be an object { ttlMs?, heartbeatMs? }');
  }
  if (options.onBackgroundError !== undefined && typeof options.onBackgroundError !== 'function') {
    throw invalidConfig('onBackgroundError must be a function');
  }
}

/**
 * Creates the database file with `mode` when it does not exist yet, so that SQLite opens a file that was
 * private from its first byte (and makes its -wal and -shm files alike). `:memory:`, temporary databases
 * (the empty path) and `file:` URIs are left to SQLite.
 */
function createPrivately(path: string, mode: number): void {
  if (path === ':memory:' || path.startsWith('file:')) return;
  try {
    // 'wx' only creates: an existing file fails with EEXIST and is opened as it is.
    closeSync(openSync(path, 'wx', mode));
  } catch {
    // EEXIST, or a failure (a missing folder, no permission) that SQLite reports with its own message.
  }
}

/** Exponential backoff with full jitter, so that two waiting processes do not retry in step. */
function backoffMs(attempt: number): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt);
  return Math.ceil(ceiling / 2 + Math.random() * (ceiling / 2));
}

/**
 * One better-sqlite3 connection shared by the session and memory storages. Every operation is a
 * synchronous body run inside one transaction; operations run one at a time in call order (a FIFO), so
 * a write waiting out a lock never lets a later write of the same caller overtake it. A body that fails
 * with SQLITE_BUSY/LOCKED (after SQLite's own busy timeout) is rolled back and tried again after a
 * jittered backoff, up to `busyRetries` times; then it rejects with a retryable STORAGE_ERROR.
 */
export class SqliteConnection {
  /** The better-sqlite3 handle. */
  readonly database: Database.Database;
  /** The path given to open, for messages. */
  readonly path: string;
  readonly #busyTimeoutMs: number;
  readonly #busyRetries: number;
  readonly #statements = new Map<string, Database.Statement>();
  readonly #closeListeners: (() => void)[] = [];
  #tail: Promise<unknown> = Promise.resolve();
  /** Operations waiting in (or running from) the queue. */
  #queued = 0;
  #closing: Promise<void> | undefined;

  private constructor(options: {
    database: Database.Database;
    path: string;
    busyTimeoutMs: number;
    busyRetries: number;
  }) {
    this.database = options.database;
    this.path = options.path;
    this.#busyTimeoutMs = options.busyTimeoutMs;
    this.#busyRetries = options.busyRetries;
  }

  /**
   * Opens (creating when needed) and migrates a database; rejects with INVALID_CONFIG or STORAGE_ERROR.
   * `migrations` defaults to the package's schema (tests pass their own).
   */
  static async open(request: {
    path: string;
    options?: SqliteStorageOptions;
    migrations?: readonly Migration[];
  }): Promise<SqliteConnection> {
    const { path, options = {}, migrations = MIGRATIONS } = request;
    checkOptions(path, options);
    const readonly = options.readonly ?? false;
    const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
    const busyRetries = options.busyRetries ?? DEFAULT_BUSY_RETRIES;
    const errorContext = { operation: `opening '${path}'`, path, busyTimeoutMs, busyRetries };
    if (!readonly) createPrivately(path, options.fileMode ?? DEFAULT_FILE_MODE);
    let database: Database.Database;
    try {
      database = new Database(path, { readonly, fileMustExist: readonly, timeout: busyTimeoutMs });
    } catch (error) {
      throw storageError(error, errorContext);
    }
    const connection = new SqliteConnection({ database, path, busyTimeoutMs, busyRetries });
    try {
      await connection.#withRetries({
        operation: errorContext.operation,
        body: () => {
          // WAL lets readers work while one connection writes; switching needs a lock, hence the retries.
          // Only a new, empty file takes a page size, and only before it is switched to WAL.
          if (!readonly) database.pragma(`page_size = ${PAGE_SIZE}`);
          if (!readonly) database.pragma('journal_mode = WAL');
          database.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
          database.pragma('foreign_keys = ON');
          database.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
          runMigrations({ database, migrations, path });
        },
      });
    } catch (error) {
      database.close();
      throw error;
    }
    return connection;
  }

  /** A prepared statement, compiled once per connection. */
  statement(sql: string): Database.Statement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.database.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** Runs `body` in one read transaction (one consistent snapshot); rejects with STORAGE_ERROR. */
  read<T>(operation: string, body: () => T): Promise<T> {
    return this.#enqueue(operation, () => this.#transaction('BEGIN DEFERRED', body));
  }

  /** Runs `body` in one write transaction (BEGIN IMMEDIATE); all of it is committed or none of it. */
  write<T>(operation: string, body: () => T): Promise<T> {
    return this.#enqueue(operation, () => this.#transaction('BEGIN IMMEDIATE', body));
  }

  /** Runs `listener` when `close()` is called (to stop timers). */
  onClose(listener: () => void): void {
    this.#closeListeners.push(listener);
  }

  /** Waits for the queued operations, then closes the file; later calls reject with STORAGE_ERROR. */
  close(): Promise<void> {
    if (this.#closing === undefined) {
      for (const listener of this.#closeListeners.splice(0)) listener();
    }
    this.#closing ??= this.#tail.then(() => {
      if (!this.database.open) return;
      try {
        // SQLite's advice: let it refresh the planner's statistics when a long-lived connection closes.
        if (!this.database.readonly) this.database.pragma('optimize');
      } catch {
        // Best effort only: a lock held elsewhere must not make close fail.
      }
      this.database.close();
    });
    return this.#closing;
  }

  #enqueue<T>(operation: string, body: () => T): Promise<T> {
    if (this.#closing !== undefined) return Promise.reject(closedError(this.path));
    if (this.#queued > 0) return this.#queue({ operation, body, attemptsMade: 0 });
    // Nothing waits: run now (still in call order) without a trip through the promise queue.
    try {
      return Promise.resolve(body());
    } catch (error) {
      if (isAgentError(error)) return Promise.reject(error);
      if (!isBusy(error) || this.#busyRetries === 0) {
        return Promise.reject(storageError(error, this.#errorContext(operation)));
      }
      // Locked: the retries wait in the queue, so that later calls stay behind this one.
      return this.#queue({ operation, body, attemptsMade: 1 });
    }
  }

  #queue<T>(options: { operation: string; body: () => T; attemptsMade: number }): Promise<T> {
    this.#queued += 1;
    const result = this.#tail.then(() => this.#withRetries(options));
    const settled = () => {
      this.#queued -= 1;
    };
    // Registered before the caller's own handlers, so the count is down when the caller goes on.
    this.#tail = result.then(settled, settled);
    return result;
  }

  #errorContext(operation: string) {
    return { operation, path: this.path, busyTimeoutMs: this.#busyTimeoutMs, busyRetries: this.#busyRetries };
  }

  #transaction<T>(begin: 'BEGIN DEFERRED' | 'BEGIN IMMEDIATE', body: () => T): T {
    this.statement(begin).run();
    try {
      const value = body();
      this.statement('COMMIT').run();
      return value;
    } catch (error) {
      if (this.database.inTransaction) this.statement('ROLLBACK').run();
      throw error;
    }
  }

  async #withRetries<T>(options: { operation: string; body: () => T; attemptsMade?: number }): Promise<T> {
    for (let attempt = options.attemptsMade ?? 0; ; attempt += 1) {
      if (attempt > 0) await sleep(backoffMs(attempt - 1));
      if (!this.database.open) throw closedError(this.path);
      try {
        return options.body();
      } catch (error) {
        if (isAgentError(error)) throw error;
        if (!isBusy(error) || attempt >= this.#busyRetries) {
          throw storageError(error, this.#errorContext(options.operation));
        }
      }
    }
  }
}
