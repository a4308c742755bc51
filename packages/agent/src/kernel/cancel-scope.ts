/**
 * One 'abort' listener on a signal for as long as a scope lasts (a turn), shared by every wait inside it (each
 * model call, each tool batch). Adding and removing a listener on an AbortSignal is an EventTarget operation
 * that costs far more than a Set insertion; a turn of 200 steps made 400 of each. The scope listens from its
 * first `watch` until `close`, so nothing of it stays on the signal once the turn has ended.
 */
export class CancelScope {
  /** The signal the scope listens to. */
  readonly signal: AbortSignal;
  readonly #watchers = new Set<() => void>();
  #listening = false;
  #closed = false;

  constructor(signal: AbortSignal) {
    this.signal = signal;
  }

  /**
   * Calls `onCancel` once when the signal fires, unless `unwatch(onCancel)` came first. Nothing is called for a
   * signal that fired already (the caller checks `signal.aborted` first), nor after `close`.
   */
  watch(onCancel: () => void): void {
    if (this.#closed || this.signal.aborted) return;
    this.#watchers.add(onCancel);
    if (!this.#listening) {
      this.#listening = true;
      this.signal.addEventListener('abort', this.#onAbort, { once: true });
    }
  }

  /** Forgets `onCancel`: the wait it was for has ended. */
  unwatch(onCancel: () => void): void {
    this.#watchers.delete(onCancel);
  }

  /** Ends the scope: its listener leaves the signal, and no watcher is called any more. */
  close(): void {
    this.#closed = true;
    this.#watchers.clear();
    if (this.#listening) {
      this.#listening = false;
      this.signal.removeEventListener('abort', this.#onAbort);
    }
  }

  readonly #onAbort = (): void => {
    this.#listening = false;
    // A watcher may unwatch itself or another while called: each is taken off before it runs.
    for (const onCancel of this.#watchers) {
      this.#watchers.delete(onCancel);
      onCancel();
    }
  };
}
