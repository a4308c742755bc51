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
  /** Set when the signal's owner calls `aborted()` itself: the scope then never listens on the signal. */
  readonly #told: boolean;
  /** For a `told` scope: set by the owner as it aborts the signal (see `cancelled`). */
  #abortTold = false;

  /** `told`: the signal's controller calls `aborted()` when it aborts (a TurnAbortController), so no listener is needed. */
  constructor(signal: AbortSignal, told = false) {
    this.signal = signal;
    this.#told = told;
  }

  /**
   * Calls `onCancel` once when the signal fires, unless `unwatch(onCancel)` came first. Nothing is called for a
   * signal that fired already (the caller checks `signal.aborted` first), nor after `close`.
   */
  watch(onCancel: () => void): void {
    if (this.#closed || this.cancelled) return;
    this.#watchers.push(onCancel);
    if (!this.#listening && !this.#told) {
      this.#listening = true;
      // The scope itself is the listener (its handleEvent): no function is made for it.
      this.signal.addEventListener('abort', this, { once: true });
    }
  }

  /**
   * True once the signal fired (also after `close`). A `told` scope answers from its own flag: Node's
   * `AbortSignal.aborted` getter checks its receiver on every read, and a turn reads this at every step and for
   * every streamed event.
   */
  get cancelled(): boolean {
    return this.#told ? this.#abortTold : this.signal.aborted;
  }

  /** The owner is about to abort the signal (only for a scope made `told`): `cancelled` answers true from now on. */
  aborting(): void {
    this.#abortTold = true;
  }

  /** Forgets `onCancel`: the wait it was for has ended. */
  unwatch(onCancel: () => void): void {
    const index = this.#watchers.lastIndexOf(onCancel);
    if (index >= 0) this.#watchers.splice(index, 1);
  }

  /** Ends the scope: its listener leaves the signal, and no watcher is called any more. */
  close(): void {
    this.#closed = true;
    // Emptied in place (an abort swaps the array out before calling its watchers): no array per turn's end.
    this.#watchers.length = 0;
    if (this.#listening) {
      this.#listening = false;
      this.signal.removeEventListener('abort', this);
    }
  }

  /**
   * The signal's owner aborted it (only for a scope made `told`). A watcher's throw is reported as an
   * uncaught exception on the next tick, as the signal's listener's would be; the abort itself goes on.
   */
  aborted(): void {
    this.#abortTold = true;
    try {
      this.handleEvent();
    } catch (error) {
      process.nextTick(() => {
        throw error;
      });
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

/**
 * The AbortController of a turn the runtime runs itself. Every abort of it goes through `abort()` (the runtime's
 * cancel, close and shutdown, all of which hold this controller), which tells the turn's cancel scope directly:
 * the scope puts no listener on the signal, a turn saves adding and removing one. The signal itself aborts as
 * any controller's does, for the provider and the tools that listen to it.
 */
export class TurnAbortController extends AbortController {
  /** The turn's cancel scope, told by `abort()`. */
  readonly scope: CancelScope = new CancelScope(this.signal, true);

  override abort(reason?: unknown): void {
    if (this.signal.aborted) return;
    this.scope.aborting();
    super.abort(reason);
    this.scope.aborted();
  }
}
