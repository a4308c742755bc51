/** Where a session stands, as this storage last wrote or read it; checked by every write. */
export class KnownSessionState {
  key: number;
  updatedAtMs: number;
  eventCount: number;
  titled: boolean;

  constructor(fields: { key: number; updatedAtMs: number; eventCount: number; titled: boolean }) {
    this.key = fields.key;
    this.updatedAtMs = fields.updatedAtMs;
    this.eventCount = fields.eventCount;
    this.titled = fields.titled;
  }
}

/** How many sessions a cache remembers the state of before it forgets them all. */
export const STATE_CACHE_SIZE = 10_000;

/**
 * Session id → its state after this storage's last write, so the next write needs no lookup. An entry lives
 * while the session runs here: the storage drops it when the session's claim is released (a closed session
 * is written again only after it is claimed and loaded anew) or the session is deleted, so a process that runs
 * for days holds the states of its open sessions, not of every session it ever wrote. Writes made without a
 * claim are remembered too; the size bound keeps those from growing without end.
 */
export class SessionStateCache {
  readonly #states = new Map<string, KnownSessionState>();

  /** How many sessions are remembered. */
  get size(): number {
    return this.#states.size;
  }

  /** The remembered state of a session, if any. */
  get(sessionId: string): KnownSessionState | undefined {
    return this.#states.get(sessionId);
  }

  /** Remembers a session's state; at the bound, the others are forgotten first. */
  remember(sessionId: string, state: KnownSessionState): void {
    if (!this.#states.has(sessionId) && this.#states.size >= STATE_CACHE_SIZE) this.#states.clear();
    this.#states.set(sessionId, state);
  }

  /** Forgets a session: its next write reads where it stands from the file. */
  forget(sessionId: string): void {
    this.#states.delete(sessionId);
  }
}
