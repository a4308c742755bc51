import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const fixtures = new URL('../fixtures/', import.meta.url);

/** A running fixture script: its stdout lines, and ways to wait for one of them or for its exit. */
export interface Child {
  readonly process: ChildProcessWithoutNullStreams;
  /** Every stdout line so far. */
  readonly lines: string[];
  /** Resolves with the first line (already seen or still to come) that `match` accepts; rejects if the child exits first. */
  waitForLine(match: (line: string) => boolean): Promise<string>;
  /** Settles when the process has exited and its stdout is fully read. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** What the child wrote to stderr, for failure messages. */
  stderr(): string;
}

/**
 * Starts `node fixtures/<script> ...args` with `--import fixtures/run-sources.mjs`, which resolves
 * `@youyou/agent` and `@youyou/sqlite` to their TypeScript sources (the same code vitest tests), so no
 * build is needed and a stale dist can never be what is tested.
 */
export function startChild(script: string, args: readonly string[]): Child {
  const child = spawn(
    process.execPath,
    [
      '--enable-source-maps',
      '--import',
      fileURLToPath(new URL('run-sources.mjs', fixtures)),
      fileURLToPath(new URL(script, fixtures)),
      ...args,
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  const lines: string[] = [];
  const waiters: { match: (line: string) => boolean; resolve: (line: string) => void }[] = [];
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const reader = createInterface({ input: child.stdout });
  reader.on('line', (line) => {
    lines.push(line);
    for (const waiter of [...waiters]) {
      if (waiter.match(line)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  const readerClosed = new Promise<void>((resolve) => reader.once('close', resolve));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      void readerClosed.then(() => resolve({ code, signal }));
    });
  });
  return {
    process: child,
    lines,
    exited,
    stderr: () => stderr,
    waitForLine(match) {
      const seen = lines.find(match);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ match, resolve });
        void exited.then(({ code, signal }) =>
          reject(new Error(`${script} exited (code ${code}, signal ${signal}) first; stderr:\n${stderr}`)),
        );
      });
    },
  };
}
