import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { makeWorkspace, type TestWorkspace } from './helpers.js';

let workspace: TestWorkspace;

beforeEach(async () => {
  workspace = await makeWorkspace({ outputLimitBytes: 1000 });
});

afterEach(() => workspace.cleanup());

/**
 * Waits (a few seconds at most) for a process to be gone. Its pipes close a moment before the kernel marks it
 * dead, so the check right after the tool returns can still see it; a process that was not killed lives 30 s.
 */
async function expectGone(pid: number): Promise<void> {
  await vi.waitFor(() => expect(isAlive(pid)).toBe(false), { timeout: 5000, interval: 20 });
}

/** True while the process exists and is not a zombie waiting to be reaped. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const statFile = `/proc/${pid}/stat`;
  if (!existsSync(statFile)) return true;
  // The state follows the parenthesised command name.
  const state = readFileSync(statFile, 'utf8').replace(/^.*\) /s, '')[0];
  return state !== 'Z';
}

/**
 * The pids (as this process sees them) of live processes whose command line is `marker`. A command in the
 * sandbox has its own PID namespace, so the `$!` it prints is not a pid out here.
 */
function pidsOf(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      if (commandLine === marker && isAlive(Number(entry))) pids.push(Number(entry));
    } catch {
      // Gone while reading.
    }
  }
  return pids;
}

/** A `sleep` that no other test starts, so that pidsOf finds only its own. */
function uniqueSleep(): string {
  return `sleep 30.${process.pid}${Math.floor(Math.random() * 1e6)}`;
}

describe('shell', () => {
  it('runs in the workspace root and reports output and exit code', async () => {
    const output = await workspace.call('shell', { command: 'pwd; echo hi' });
    expect(output).toEqual({ isError: false, content: `${workspace.root}\nhi\n[exit code 0]` });
  });

  it('interleaves stdout and stderr in the order they were written', async () => {
    const output = await workspace.call('shell', {
      command: 'for i in 1 2 3 4 5; do echo out$i; echo err$i >&2; done',
    });
    expect(output.content).toBe('out1\nerr1\nout2\nerr2\nout3\nerr3\nout4\nerr4\nout5\nerr5\n[exit code 0]');
  });

  it('reports a non-zero exit code as an error result, and a syntax error in the output', async () => {
    expect(await workspace.call('shell', { command: 'echo failing; exit 3' })).toEqual({
      isError: true,
      content: 'failing\n[exit code 3]',
    });
    const syntax = await workspace.call('shell', { command: 'if then fi (' });
    expect(syntax.isError).toBe(true);
    expect(syntax.content).toMatch(/syntax error/i);
    expect(await workspace.call('shell', { command: 'true' })).toEqual({
      isError: false,
      content: '(no output)\n[exit code 0]',
    });
  });

  it('never gives the command a stdin', async () => {
    const output = await workspace.call('shell', { command: 'cat; echo "read: $?"' });
    expect(output.content).toBe('read: 0\n[exit code 0]');
  });

  it('keeps the head and tail of long output with a marker', async () => {
    const output = await workspace.call('shell', { command: 'seq 1 10000' });
    expect(output.isError).toBe(false);
    expect(output.content.startsWith('1\n2\n3\n')).toBe(true);
    expect(output.content.endsWith('9999\n10000\n[exit code 0]')).toBe(true);
    const total = Buffer.byteLength(execFileSync('seq', ['1', '10000']));
    expect(output.content).toContain(`\n[... ${total - 1000} bytes of output omitted ...]\n`);
    expect(Buffer.byteLength(output.content)).toBeLessThan(1000 + 100);
  });

  it('kills the command and its children when it times out', async () => {
    const sleeper = uniqueSleep();
    const running = workspace.call('shell', { command: `${sleeper} & wait`, timeoutMs: 1000 });
    await vi.waitFor(() => expect(pidsOf(sleeper)).toHaveLength(1), { timeout: 5000, interval: 20 });
    const [pid] = pidsOf(sleeper);
    const output = await running;
    expect(output.isError).toBe(true);
    expect(output.content).toBe(
      '(no output)\n[timed out after 1000ms; the command and the processes it started were killed]',
    );
    await expectGone(pid as number);
  });

  it('uses the default timeout given to createWorkspaceTools', async () => {
    const quick = await makeWorkspace({ shellTimeoutMs: 300 });
    try {
      const output = await quick.call('shell', { command: 'sleep 30' });
      expect(output.content).toContain('[timed out after 300ms;');
    } finally {
      await quick.cleanup();
    }
  });

  it('kills the process group when the signal fires', async () => {
    const fifo = path.join(workspace.root, 'started');
    execFileSync('mkfifo', [fifo]);
    const controller = new AbortController();
    const sleeper = uniqueSleep();
    const running = workspace.call(
      'shell',
      { command: `echo running; ${sleeper} & echo started > started; wait` },
      controller.signal,
    );
    // Opening the FIFO for reading waits until the command has started the sleeper.
    await readFile(fifo, 'utf8');
    await vi.waitFor(() => expect(pidsOf(sleeper)).toHaveLength(1), { timeout: 5000, interval: 20 });
    const [pid] = pidsOf(sleeper);
    controller.abort();
    const output = await running;
    expect(output).toEqual({
      isError: true,
      content: 'running\n[cancelled; the command and the processes it started were killed]',
    });
    await expectGone(pid as number);
  });

  it('returns when the shell exits and ends what it left running in the background', async () => {
    const sleeper = uniqueSleep();
    // The sleeper runs 30 s, past the test's timeout: a shell tool that waited for it fails the test.
    const output = await workspace.call('shell', { command: `${sleeper} & echo done` });
    expect(output).toEqual({ isError: false, content: 'done\n[exit code 0]' });
    await vi.waitFor(() => expect(pidsOf(sleeper)).toEqual([]), { timeout: 5000, interval: 20 });
  });

  it('returns when a process that left the group still holds the output, unconfined', async () => {
    const unconfined = await makeWorkspace({
      shellSandbox: { mode: 'danger-full-access', network: true, bwrapPath: 'bwrap', hiddenPaths: [] },
    });
    const sleeper = uniqueSleep();
    try {
      const output = await unconfined.call('shell', { command: `setsid ${sleeper} & sleep 0.5; echo done` });
      expect(output).toEqual({
        isError: false,
        content:
          'done\n[processes left running in the background still hold the output; it is not shown]\n[exit code 0]',
      });
    } finally {
      for (const pid of pidsOf(sleeper)) process.kill(pid, 'SIGKILL');
      await unconfined.cleanup();
    }
  });

  it('does not start when the signal has already fired', async () => {
    const controller = new AbortController();
    controller.abort();
    const output = await workspace.call('shell', { command: 'touch ran.txt' }, controller.signal);
    expect(output.isError).toBe(true);
    expect(existsSync(path.join(workspace.root, 'ran.txt'))).toBe(false);
  });
});

describe('shell live output', () => {
  it('reports stdout and stderr as they come, whole and decoded, while the result keeps head and tail', async () => {
    const shell = workspace.tools.find((tool) => tool.name === 'shell');
    if (shell === undefined) throw new Error('no shell tool');
    const chunks: string[] = [];
    // 3000 two-byte characters: pipe reads may split one, which must still arrive whole.
    const output = await shell.execute({
      callId: 'call-1',
      arguments: { command: "printf 'é%.0s' $(seq 3000); echo; echo to-stderr >&2" },
      sessionId: 'session-1',
      turnId: 'turn-1',
      signal: new AbortController().signal,
      onOutput: (text) => chunks.push(text),
    });
    expect(chunks.join('')).toBe(`${'é'.repeat(3000)}\nto-stderr\n`);
    expect(output.content).toContain('bytes of output omitted');
    expect(output.content).toContain('to-stderr');
  });
});
