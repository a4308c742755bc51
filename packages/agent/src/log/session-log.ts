import { AgentError, describeError, isAgentError } from '../kernel/error.js';
import type { SessionEvent, SessionEventPayload, SessionStorage } from '../ports/storage.js';

/**
 * The write-ahead log of one session. Events are saved in the order they happened; an event the
 * storage refused stays queued and is written before the next one, so a storage outage loses
 * nothing that the session still holds, and the session goes on once the storage is back.
 */
export class SessionLog {
  private readonly storage: SessionStorage | undefined;
  private readonly sessionId: string;
  private readonly pending: SessionEvent[] = [];
  /**
   * The write pass under way, if any. A pass writes until the queue is empty, so an event queued while it runs
   * is written by it: appends during a pass join it rather than start a pass of their own. It is cleared at
   * the very moment the pass finds the queue empty (or fails), never later, so that no append can join a pass
   * that will not look at the queue again.
   */
  private running: Promise<void> | undefined;

  constructor(options: { storage: SessionStorage | undefined; sessionId: string }) {
    this.storage = options.storage;
    this.sessionId = options.sessionId;
  }

  /** True when no storage is registered: the session lives in memory only. */
  get isVolatile(): boolean {
    return this.storage === undefined;
  }

  /** True when nothing is queued and no write pass runs: a flush now would have nothing to wait for. */
  get isIdle(): boolean {
    return this.running === undefined && this.pending.length === 0;
  }

  /** How many events wait for the storage to come back. */
  get pendingCount(): number {
    return this.pending.length;
  }

  /**
   * Records an event now and writes it (after any earlier ones still queued); rejects with STORAGE_ERROR.
   * Events appended one after another without waiting share one write pass and one promise.
   */
  append(payload: SessionEventPayload): Promise<void> {
    if (this.storage === undefined) return Promise.resolve();
    this.pending.push({ timestamp: new Date(), payload });
    return this.flush();
  }

  /**
   * Records an event now and writes it with the next event appended (or at the next flush), not on its own: for
   * a record that need not be durable before anything else happens (a model call's usage, written with the
   * answer saved right after the call), so that a storage with `saveEvents` writes both in one transaction.
   */
  appendWithNext(payload: SessionEventPayload): void {
    if (this.storage === undefined) return;
    this.pending.push({ timestamp: new Date(), payload });
  }

  /** Writes every queued event, in order; rejects with STORAGE_ERROR and keeps the rest queued. */
  flush(): Promise<void> {
    this.running ??= this.writePending();
    return this.running;
  }

  /**
   * Writes the queued events in order, each removed once the storage took it; what is queued together goes in
   * one `saveEvents` call when the storage has it.
   */
  private async writePending(): Promise<void> {
    // The pass starts a tick later, so `running` holds it before it can end (even with a storage that throws).
    await undefined;
    const storage = this.storage;
    try {
      // Nothing is queued without a storage.
      if (storage === undefined) return;
      for (let count = this.pending.length; count > 0; count = this.pending.length) {
        if (count > 1 && storage.saveEvents !== undefined) {
          // All or none: the batch leaves the queue only once the storage took all of it.
          await storage.saveEvents(this.sessionId, this.pending.slice(0, count));
          this.pending.splice(0, count);
        } else {
          await storage.saveEvent(this.sessionId, this.pending[0] as SessionEvent);
          this.pending.shift();
        }
      }
    } catch (error) {
      throw storageError(error, `saving an event of session '${this.sessionId}' failed`);
    } finally {
      this.running = undefined;
    }
  }
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
