import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test, vi } from 'vitest';
import { hangingReply, textReply, toolCallReply, toolResult } from '../../../test-support/cli-wire.js';
import { runCli, startCli } from './support/cli.js';
import { useCliHarness } from './support/harness.js';

const harness = useCliHarness();
const STUCK_SERVER = fileURLToPath(new URL('./fixtures/stuck-tool-mcp-server.mjs', import.meta.url));

async function modeOf(file: string): Promise<number> {
  return (await stat(file)).mode & 0o777;
}

describe('nothing the model sends freezes the CLI', () => {
  test('grep for (a+)+$ over lines of a’s and glob for *a*a*a*a*a*a*b answer, and the CLI exits', async () => {
    await writeFile(path.join(harness.sandbox.workspace, 'aaa.txt'), `${'a'.repeat(60)}!\n`.repeat(100));
    for (let index = 0; index < 10; index += 1) {
      await writeFile(path.join(harness.sandbox.workspace, `${'a'.repeat(120)}${index}`), '');
    }
    harness.server.reply(
      toolCallReply({ id: 'call_grep', name: 'grep', arguments: { pattern: '(a+)+$' } }),
      toolCallReply({ id: 'call_glob', name: 'glob', arguments: { pattern: '*a*a*a*a*a*a*b' } }),
      textReply('searched'),
    );
    // Start-up, three model calls and closing take about a second; a backtracking matcher takes hours, which the
    // test's timeout fails (no wall time is asserted: a loaded machine only makes the run slower).
    const result = await runCli({
      args: ['-p', 'search', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('searched\n');
    const [, second, third] = harness.server.turnRequests();
    expect(toolResult(second!, 'call_grep')).toMatch(/^no lines match/);
    expect(toolResult(third!, 'call_glob')).toMatch(/^no files match/);
  }, 30_000);

  test('-p: Ctrl-C (SIGINT) during a tool that never ends ends the turn and exits 130', async () => {
    // The tool is slow on purpose: it never answers and ignores cancellation, so the SIGINT always lands while
    // it runs, and an exit at all proves the CLI did not wait for it. It marks when it was called.
    const started = path.join(harness.sandbox.root, 'stuck-started');
    await mkdir(harness.sandbox.home, { recursive: true });
    await writeFile(
      path.join(harness.sandbox.home, 'config.json'),
      JSON.stringify({ mcpServers: { hold: { command: process.execPath, args: [STUCK_SERVER, started] } } }),
    );
    harness.server.reply(
      toolCallReply({ id: 'call_stuck', name: 'hold__stuck', arguments: {} }),
      textReply('never asked for'),
    );
    const running = startCli({
      args: ['-p', 'wait for it', '--base-url', harness.server.baseURL, '--json'],
      sandbox: harness.sandbox,
    });
    await vi.waitFor(() => expect(existsSync(started)).toBe(true), { timeout: 30_000, interval: 50 });
    running.child.kill('SIGINT');
    const result = await running.result;
    expect(result.code).toBe(130);
    expect(result.stdout).toContain('"turn_cancelled"');
    // The tool was stopped, not waited for: no success was reported for it.
    expect(result.stdout).not.toContain('"success":true');
    expect(harness.server.turnRequests()).toHaveLength(1);
  }, 60_000);

  test('glob and grep leave out what .gitignore ignores', async () => {
    await writeFile(path.join(harness.sandbox.workspace, '.gitignore'), 'build/\n');
    await mkdir(path.join(harness.sandbox.workspace, 'build'));
    await mkdir(path.join(harness.sandbox.workspace, 'src'));
    await writeFile(path.join(harness.sandbox.workspace, 'build', 'out.js'), 'needle\n');
    await writeFile(path.join(harness.sandbox.workspace, 'src', 'in.js'), 'needle\n');
    await writeFile(path.join(harness.sandbox.workspace, 'src', '.gitignore'), 'secret.js\n');
    await writeFile(path.join(harness.sandbox.workspace, 'src', 'secret.js'), 'needle\n');
    harness.server.reply(
      toolCallReply({ id: 'call_glob', name: 'glob', arguments: { pattern: '**/*.js' } }),
      toolCallReply({ id: 'call_grep', name: 'grep', arguments: { pattern: 'needle' } }),
      textReply('ok'),
    );
    const result = await runCli({
      args: ['-p', 'find', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });
    expect(result.code).toBe(0);
    const [, second, third] = harness.server.turnRequests();
    expect(toolResult(second!, 'call_glob')).toBe('src/in.js');
    expect(toolResult(third!, 'call_grep')).toBe('src/in.js:1: needle');
  }, 30_000);
});

describe('files are never damaged', () => {
  test('edit_file refuses a Latin-1 file and leaves every byte; a CRLF file keeps CRLF', async () => {
    const latin1 = Buffer.from('caf\xe9\nna\xefve\n', 'latin1');
    await writeFile(path.join(harness.sandbox.workspace, 'menu.txt'), latin1);
    await writeFile(path.join(harness.sandbox.workspace, 'win.txt'), 'first\r\nsecond\r\n');
    harness.server.reply(
      toolCallReply({
        id: 'call_latin',
        name: 'edit_file',
        arguments: { path: 'menu.txt', oldString: 'caf', newString: 'bar' },
      }),
      toolCallReply({
        id: 'call_crlf',
        name: 'edit_file',
        arguments: { path: 'win.txt', oldString: 'first\nsecond', newString: 'first\nmiddle\nsecond' },
      }),
      textReply('edited'),
    );
    const result = await runCli({
      args: ['-p', 'edit', '--yes', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });
    expect(result.code).toBe(0);
    expect(await readFile(path.join(harness.sandbox.workspace, 'menu.txt'))).toEqual(latin1);
    expect(await readFile(path.join(harness.sandbox.workspace, 'win.txt'))).toEqual(
      Buffer.from('first\r\nmiddle\r\nsecond\r\n'),
    );
    const [, second] = harness.server.turnRequests();
    expect(toolResult(second!, 'call_latin')).toContain('UTF-8');
  }, 30_000);

  test('a new home is 0700 and the database with its WAL and SHM files 0600', async () => {
    harness.server.reply(hangingReply('thinking'));
    const running = startCli({
      args: ['-p', 'hello', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });
    // While the turn hangs the database is open in WAL mode: all three files exist.
    await vi.waitFor(() => expect(harness.server.turnRequests()).toHaveLength(1), { timeout: 15_000 });
    try {
      expect(await modeOf(harness.sandbox.home)).toBe(0o700);
      for (const name of ['youyou.db', 'youyou.db-wal', 'youyou.db-shm']) {
        expect(await modeOf(path.join(harness.sandbox.home, name)), name).toBe(0o600);
      }
    } finally {
      running.child.kill('SIGKILL');
      await running.result;
    }
  }, 30_000);

  test('an existing home open to others and its database are made private', async () => {
    await mkdir(harness.sandbox.home);
    await chmod(harness.sandbox.home, 0o755);
    await writeFile(path.join(harness.sandbox.home, 'youyou.db'), '');
    await chmod(path.join(harness.sandbox.home, 'youyou.db'), 0o644);
    await writeFile(path.join(harness.sandbox.home, 'history'), 'earlier prompt\n');
    await chmod(path.join(harness.sandbox.home, 'history'), 0o644);
    harness.server.reply(textReply('hi'));
    const result = await runCli({
      args: ['-p', 'hello', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });
    expect(result.code).toBe(0);
    expect(await modeOf(harness.sandbox.home)).toBe(0o700);
    expect(await modeOf(path.join(harness.sandbox.home, 'youyou.db'))).toBe(0o600);
    expect(await modeOf(path.join(harness.sandbox.home, 'history'))).toBe(0o600);
  }, 30_000);
});
