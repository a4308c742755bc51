/**
 * One 'abort' listener on a signal for as long as a scope lasts (a turn), shared by every wait inside it (each
 * model call, each tool batch). Adding and removing a listener on an AbortSignal is an EventTarget operation
 * that costs far more than an array push; a turn of 200 steps made 400 of each. The scope listens from its
 * first `watch` until `close`, so nothing of it stays on the signal once the turn has ended. A turn's waits
 * come one at a time (a model call, then a batch), so the watchers are a short array, not a set.
 */
export class CancelScope {
  /** The signal the scope listens to. */
  readonly signal: AbortSignal;
  #watchers: (() => void)[] = [];
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
    this.#watchers.push(onCancel);
    if (!this.#listening) {
      this.#listening = true;
      // The scope itself is the listener (its handleEvent): no function is made for it.
      this.signal.addEventListener('abort', this, { once: true });
    }
  }

  /** Forgets `onCancel`: the wait it was for has ended. */
  unwatch(onCancel: () => void): void {
    const index = this.#watchers.lastIndexOf(onCancel);
    if (index >= 0) this.#watchers.splice(index, 1);
  }

  /** Ends the scope: its listener leaves the signal, and no watcher is called any more. */
  close(): void {
    this.#closed = true;
    this.#watchers = [];
    if (this.#listening) {
      this.#listening = false;
      this.signal.removeEventListener('abort', this);
    }
  }

  /** The signal fired: every watcher is called once, in the order they came. Not for callers. */
  handleEvent(): void {
    this.#listening = false;
    const watchers = this.#watchers;
    this.#watchers = [];
    // Each watcher is called even when an earlier one threw; the first error then goes on to the signal, as a
    // listener's would.
    let failure: { error: unknown } | undefined;
    for (const onCancel of watchers) {
      try {
        onCancel();
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure !== undefined) throw failure.error;
  }
}
