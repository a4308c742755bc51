import { deadlines, MAX_TIMER_MS } from './deadlines.js';

/** How a bounded wait ended. */
type Settled<T> =
  | { status: 'fulfilled'; value: T }
  | { status: 'rejected'; error: unknown }
  | { status: 'timeout' };

/** Every time-out is the same answer; nobody changes it. */
const TIMED_OUT: { status: 'timeout' } = Object.freeze({ status: 'timeout' });

/** True for a bound a timer can keep: a larger one, or one that is not a number, means "no bound". */
export function isTimerBound(timeoutMs: number): boolean {
  return Number.isFinite(timeoutMs) && timeoutMs <= MAX_TIMER_MS;
}

/**
 * Waits for `promise` at most `timeoutMs`, never rejecting; the deadline (kernel/deadlines.ts) is cancelled as
 * soon as the promise settles, and a late rejection is swallowed here so that it is never reported as unhandled.
 */
export function settleWithin<T>(promise: PromiseLike<T>, timeoutMs: number): Promise<Settled<T>> {
  return new Promise((resolve) => {
    const deadline = isTimerBound(timeoutMs) ? deadlines.schedule(timeoutMs, resolve, TIMED_OUT) : undefined;
    Promise.resolve(promise).then(
      (value) => {
        deadlines.cancel(deadline);
        resolve({ status: 'fulfilled', value });
      },
      (error: unknown) => {
        deadlines.cancel(deadline);
        resolve({ status: 'rejected', error });
      },
    );
  });
}

/** True for anything `await` would wait for: an object or function with a `then` method. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
