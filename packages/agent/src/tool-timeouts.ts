import { keepShape } from './shapes.js';

/** One bounded wait: due at `due` (a performance.now() time), then `onTimeout` runs once. */
export interface TimeoutEntry {
  due: number;
  onTimeout: () => void;
}

/**
 * The time-outs of one batch's tool calls on one timer: a batch of a hundred concurrent calls set and cleared a
 * hundred timers, a measurable part of each call. The timer is set for the earliest due entry; when it fires,
 * every entry that is due runs, and the timer is set again for the rest. An entry never runs before it is due,
 * and at most about a millisecond after (the timer's own granularity).
 */
export class TimeoutGroup {
  readonly #entries = new Set<TimeoutEntry>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerDue = Number.POSITIVE_INFINITY;

  /** Starts bounding an entry. */
  add(entry: TimeoutEntry): void {
    this.#entries.add(entry);
    if (entry.due < this.#timerDue) this.#arm(entry.due);
  }

  /** Stops bounding an entry (its wait ended); the timer goes when nothing is left to bound. */
  delete(entry: TimeoutEntry): void {
    if (!this.#entries.delete(entry) || this.#entries.size > 0) return;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDue = Number.POSITIVE_INFINITY;
  }

  #arm(due: number): void {
    clearTimeout(this.#timer);
    this.#timerDue = due;
    this.#timer = setTimeout(this.#fire, Math.max(1, Math.ceil(due - performance.now())));
  }

  readonly #fire = (): void => {
    this.#timer = undefined;
    this.#timerDue = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    for (const entry of this.#entries) {
      if (entry.due <= now) {
        this.#entries.delete(entry);
        entry.onTimeout();
      } else if (entry.due < next) next = entry.due;
    }
    // An entry added by an onTimeout has set the timer itself.
    if (next < this.#timerDue && this.#entries.size > 0) this.#arm(next);
  };
}

keepShape(new TimeoutGroup());
