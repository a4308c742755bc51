import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test, vi } from 'vitest';
import { useCliHarness } from './support/harness.js';
import { runShellTurn } from './support/shell-turn.js';

const harness = useCliHarness();

async function writeConfig(config: unknown): Promise<void> {
  await mkdir(harness.sandbox.home, { recursive: true });
  await writeFile(path.join(harness.sandbox.home, 'config.json'), JSON.stringify(config));
}

/** Live processes of this machine whose command line contains `marker`. */
function processesWith(marker: string): number {
  let count = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const line = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8').replace(/^.*\) /s, '')[0];
      if (line.includes(marker) && state !== 'Z') count += 1;
    } catch {
      // The process ended while it was read.
    }
  }
  return count;
}

/** Exit code of a signal's death as the shell reports it. */
const SIGXFSZ_STATUS = 128 + 25;
const SIGXCPU_STATUS = 128 + 24;

describe('resource limits of sandboxed commands (sandbox.limits in config.json)', () => {
  test('a command writing without end stops at fileSizeBytes and is reported as failed', async () => {
    const limit = 1024 * 1024;
    await writeConfig({ sandbox: { limits: { fileSizeBytes: limit } } });
    // Bounded at 20 MB, so that without the limit the test fails without filling the disk.
    const { result, output } = await runShellTurn(harness, { command: 'yes | head -c 20000000 > big' });
    expect(result.code).toBe(0);
    expect(statSync(path.join(harness.sandbox.workspace, 'big')).size).toBeLessThanOrEqual(limit);
    expect(output).toContain(`[exit code ${SIGXFSZ_STATUS}]`);
  });

  test('a fork bomb (bounded at 1000) is stopped at the process limit and everything it started is gone', async () => {
    await writeConfig({ sandbox: { limits: { processes: 64 } } });
    const marker = `1000.${process.pid}${Math.floor(Math.random() * 1e6)}`;
    // Each started sleep is counted in a file (a builtin: no fork); dash gives up at the first failed fork.
    const { result, output } = await runShellTurn(harness, {
      command:
        `sh -c 'i=0; while [ $i -lt 1000 ]; do sleep ${marker} & i=$((i+1)); echo $i > started; done; ` +
        `echo ALL-STARTED'; echo "bomb status $?"`,
      timeoutMs: 120_000,
    });
    expect(result.code).toBe(0);
    expect(output).toMatch(/bomb status [1-9]/);
    const started = Number(await readFile(path.join(harness.sandbox.workspace, 'started'), 'utf8'));
    // 64 for a user; as root the kernel ignores RLIMIT_NPROC and the namespace's pid_max (at least 301) holds.
    const bound = process.getuid?.() === 0 ? 300 : 64;
    expect(started).toBeGreaterThan(0);
    expect(started).toBeLessThanOrEqual(bound);
    await vi.waitFor(() => expect(processesWith(marker)).toBe(0), { timeout: 10_000, interval: 100 });
    // The machine still starts processes.
    expect(execFileSync('sh', ['-c', 'echo alive'], { encoding: 'utf8' })).toBe('alive\n');
  });

  test('a process spinning on the CPU is killed at cpuSeconds, long before the timeout', async () => {
    await writeConfig({ sandbox: { limits: { cpuSeconds: 1 } } });
    const { output } = await runShellTurn(harness, {
      command: `sh -c 'while :; do :; done'; echo "spin status $?"`,
      timeoutMs: 60_000,
    });
    expect(output).toContain(`spin status ${SIGXCPU_STATUS}`);
    expect(output).not.toMatch(/timed out/);
  });
});
