import { AgentError, describeError, isAgentError } from './error.js';
import type { SessionEvent, SessionEventPayload, SessionStorage } from './ports/storage.js';

/**
 * The write-ahead log of one session. Events are saved in the order they happened; an event the
 * storage refused stays queued and is written before the next one, so a storage outage loses
 * nothing that the session still holds, and the session goes on once the storage is back.
 */
export class SessionLog {
  private readonly storage: SessionStorage | undefined;
  private readonly sessionId: string;
  private readonly pending: SessionEvent[] = [];
  private flushing: Promise<void> = Promise.resolve();
  /** Write passes started or chained and not finished yet. */
  private passes = 0;

  constructor(options: { storage: SessionStorage | undefined; sessionId: string }) {
    this.storage = options.storage;
    this.sessionId = options.sessionId;
  }

  /** True when no storage is registered: the session lives in memory only. */
  get isVolatile(): boolean {
    return this.storage === undefined;
  }

  /** How many events wait for the storage to come back. */
  get pendingCount(): number {
    return this.pending.length;
  }

  /** Records an event now and writes it (after any earlier ones still queued); rejects with STORAGE_ERROR. */
  append(payload: SessionEventPayload): Promise<void> {
    if (this.storage === undefined) return Promise.resolve();
    this.pending.push({ timestamp: new Date(), payload });
    return this.flush();
  }

  /** Writes every queued event, in order; rejects with STORAGE_ERROR and keeps the rest queued. */
  flush(): Promise<void> {
    // With no pass running, this one starts at once rather than a tick later behind the settled chain: every
    // message of a turn comes through here.
    this.passes += 1;
    const run = this.passes === 1 ? this.writePending() : this.flushing.then(() => this.writePending());
    // The chain must survive a failure, so that the next flush retries.
    this.flushing = run.catch(ignore);
    return run;
  }

  /**
   * One write pass: the queued events one after another, each removed once the storage took it. Written with
   * promises rather than as an async function: a pass usually writes one event, and a suspended async function
   * per event was much of its cost.
   */
  private writePending(): Promise<void> {
    const storage = this.storage;
    const event = this.pending[0];
    if (storage === undefined || event === undefined) {
      this.passes -= 1;
      return Promise.resolve();
    }
    let saved: Promise<void>;
    try {
      saved = Promise.resolve(storage.saveEvent(this.sessionId, event));
    } catch (error) {
      this.passes -= 1;
      return Promise.reject(storageError(error, `saving an event of session '${this.sessionId}' failed`));
    }
    return saved.then(this.saved, this.notSaved) as Promise<void>;
  }

  private readonly saved = (): Promise<void> | undefined => {
    this.pending.shift();
    if (this.pending.length > 0) return this.writePending();
    this.passes -= 1;
    return undefined;
  };

  private readonly notSaved = (error: unknown): never => {
    this.passes -= 1;
    throw storageError(error, `saving an event of session '${this.sessionId}' failed`);
  };
}

function ignore(): undefined {
  return undefined;
}

/** Whatever a storage threw, as STORAGE_ERROR (the original kept as `cause`). */
export function storageError(error: unknown, context: string): AgentError {
  if (isAgentError(error) && error.code === 'STORAGE_ERROR') return error;
  return new AgentError({
    code: 'STORAGE_ERROR',
    message: `${context}: ${describeError(error)}`,
    retryable: isAgentError(error) ? error.retryable : false,
    cause: error,
  });
}
