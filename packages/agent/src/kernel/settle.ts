/** How a bounded wait ended. */
type Settled<T> =
  | { status: 'fulfilled'; value: T }
  | { status: 'rejected'; error: unknown }
  | { status: 'timeout' };

/** The largest delay setTimeout accepts; a larger bound means "no bound". */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Waits for `promise` at most `timeoutMs`, never rejecting; the timer is cleared as soon as the promise settles,
 * and a late rejection is swallowed here so that it is never reported as unhandled.
 */
export function settleWithin<T>(promise: PromiseLike<T>, timeoutMs: number): Promise<Settled<T>> {
  return new Promise((resolve) => {
    const bounded = Number.isFinite(timeoutMs) && timeoutMs <= MAX_TIMER_MS;
    const timer = bounded
      ? setTimeout(() => resolve({ status: 'timeout' }), Math.max(0, timeoutMs))
      : undefined;
    Promise.resolve(promise).then(
      (value) => {
        clearTimeout(timer);
        resolve({ status: 'fulfilled', value });
      },
      (error: unknown) => {
        clearTimeout(timer);
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
