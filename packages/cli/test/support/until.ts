/** Waits until `check` holds (a state, polled every 20 ms), or fails naming what did not happen. */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string | (() => string) = 'the state',
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
