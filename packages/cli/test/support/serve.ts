import type { RunningCli } from './cli.js';

/** A bearer token the `youyou serve` tests give the server (at least 16 characters). */
export const SERVE_TOKEN = 'serve-test-token-0123456789';

/** Headers of an API call with SERVE_TOKEN. */
export const SERVE_AUTH = { authorization: `Bearer ${SERVE_TOKEN}`, 'content-type': 'application/json' };

/** The URL a running `youyou serve` printed once it listens; rejects with its stderr when it exits first. */
export async function waitForServeUrl(cli: RunningCli, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = /serving on (http:\/\/127\.0\.0\.1:\d+)/.exec(cli.stdout());
    if (match?.[1] !== undefined) return match[1];
    if (cli.child.exitCode !== null || Date.now() > deadline) {
      if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
      const result = await cli.result;
      throw new Error(`youyou serve did not start: ${result.stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Stops a `youyou serve` with SIGTERM and answers its exit code (SIGKILL when it does not stop in time). */
export async function stopServe(cli: RunningCli): Promise<number | null> {
  if (cli.child.exitCode !== null) return cli.child.exitCode;
  cli.child.kill('SIGTERM');
  const timer = setTimeout(() => cli.child.kill('SIGKILL'), 15_000);
  try {
    return (await cli.result).code;
  } finally {
    clearTimeout(timer);
  }
}

export { until } from './until.js';
