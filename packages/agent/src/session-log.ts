import { AgentError, describeError, isAgentError } from './error.js';
import type { SessionEvent, SessionEventPayload, SessionStorage } from './ports/storage.js';
import { keepShape } from './shapes.js';
import { immediateSaverOf } from './storage/in-memory.js';

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
   * is written by it: appends during a pass join it rather than chain a pass of their own. It is cleared at
   * the very moment the pass finds the queue empty (or fails), never later, so that no append can join a pass
   * that will not look at the queue again.
   */
  private running: Promise<void> | undefined;

  /** The storage's synchronous save, when it has one (the in-memory storage). */
  private readonly saveNow: ((sessionId: string, event: SessionEvent) => void) | undefined;

  constructor(options: { storage: SessionStorage | undefined; sessionId: string }) {
    this.storage = options.storage;
    this.sessionId = options.sessionId;
    this.saveNow = options.storage === undefined ? undefined : immediateSaverOf(options.storage);
  }

  /** True when no storage is registered: the session lives in memory only. */
  get isVolatile(): boolean {
    return this.storage === undefined;
  }

  /** How many events wait for the storage to come back. */
  get pendingCount(): number {
    return this.pending.length;
  }

  /**
   * Records an event now and writes it (after any earlier ones still queued); rejects with STORAGE_ERROR.
   * Events appended one after another without waiting share one write pass and one promise. Answers
   * `undefined` rather than a promise when the event is already written (or there is no storage).
   */
  append(payload: SessionEventPayload): Promise<void> | undefined {
    if (this.storage === undefined) return undefined;
    const event: SessionEvent = { timestamp: new Date(), payload };
    if (this.saveNow !== undefined && this.running === undefined && this.pending.length === 0) {
      try {
        this.saveNow(this.sessionId, event);
        return undefined;
      } catch {
        // Refused: queued and written through the port like any storage's event, which reports the failure
        // (and retries it before the next event) the way every other refusal is reported.
      }
    }
    this.pending.push(event);
    return this.flush();
  }

  /** Writes every queued event, in order; rejects with STORAGE_ERROR and keeps the rest queued. */
  flush(): Promise<void> {
    if (this.running !== undefined) return this.running;
    const pass = this.writePending();
    // A pass that ended at once (nothing queued, or a synchronous refusal) is not one to join.
    if (this.writing) this.running = pass;
    return pass;
  }

  /** Set while a pass waits for the storage; read by `flush` right after it started one. */
  private writing = false;

  /**
   * Writes the queued events one after another, each removed once the storage took it. Written with promises
   * rather than as an async function: a pass usually writes one event, and a suspended async function per
   * event was much of its cost.
   */
  private writePending(): Promise<void> {
    const storage = this.storage;
    const event = this.pending[0];
    if (storage === undefined || event === undefined) return this.ended();
    let saved: Promise<void>;
    try {
      saved = Promise.resolve(storage.saveEvent(this.sessionId, event));
    } catch (error) {
      this.ended();
      return Promise.reject(storageError(error, `saving an event of session '${this.sessionId}' failed`));
    }
    this.writing = true;
    return saved.then(this.saved, this.notSaved) as Promise<void>;
  }

  private readonly saved = (): Promise<void> | undefined => {
    this.pending.shift();
    if (this.pending.length > 0) return this.writePending();
    this.ended();
    return undefined;
  };

  private readonly notSaved = (error: unknown): never => {
    this.ended();
    throw storageError(error, `saving an event of session '${this.sessionId}' failed`);
  };

  /** The pass is over: later appends start a new one. */
  private ended(): Promise<void> {
    this.running = undefined;
    this.writing = false;
    return RESOLVED;
  }
}

const RESOLVED: Promise<void> = Promise.resolve();

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

keepShape(new SessionLog({ storage: undefined, sessionId: 'exemplar' }));
