import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { textReply, toolCallReply, toolResult } from '../../../test-support/cli-wire.js';
import { REPOSITORY } from './support/build.js';
import { startCli } from './support/cli.js';
import { PROMPT_BACK, send, useTmuxHarness } from './support/harness.js';
import { until } from './support/until.js';

const harness = useTmuxHarness();

/** The file the command waits for: the test creates it only once it has seen the command's first lines. */
const GATE = 'gate';

/**
 * A command that prints a hostile line (OSC 0 sets the title, CSI 2J clears the screen) and a plain one, then
 * blocks until the test creates the gate, then prints its last line.
 */
const COMMAND =
  "printf '\\033]0;owned\\007\\033[2J%s-%s\\n' hostile line; printf '%s-%s\\n' first line; " +
  `while [ ! -e ${GATE} ]; do sleep 0.05; done; printf '%s-%s\\n' gate opened`;

function scriptShellTurn(): void {
  harness.server.reply(
    toolCallReply({ id: 'call_sh', name: 'shell', arguments: { command: COMMAND } }),
    (request) =>
      textReply(
        `Ran it: ${toolResult(request, 'call_sh')?.includes('gate-opened') === true ? 'whole' : 'cut'}.`,
      ),
  );
}

describe('a running command’s output', () => {
  test('shows its last lines under the shell line, neutralised, while it runs, and collapses when it ends', async () => {
    scriptShellTurn();
    const chat = await harness.startChat('--yes');
    const titleBefore = await chat.paneTitle();

    await send(chat, 'run it');
    const running = await chat.waitFor(/│ first-line/);
    // The command is still blocked on the gate: the lines came while it ran, under the running call's line.
    expect(running).not.toContain('gate-opened');
    const rows = running.split('\n');
    const hostileRow = rows.findIndex((row) => row.includes('│ \\e]0;owned'));
    expect(rows[hostileRow - 1]).toMatch(/\bshell\b/);
    expect(rows[hostileRow]).toContain('│ \\e]0;owned\\a\\e[2Jhostile-line');
    expect(rows[hostileRow + 1]).toContain('│ first-line');

    await writeFile(path.join(harness.sandbox.workspace, GATE), '');
    const after = await chat.waitFor(/Ran it: whole\.[\s\S]*› *\n*$/);
    expect(after).toMatch(PROMPT_BACK);
    expect(after).not.toContain('│ first-line');
    expect(after).toMatch(/✓ shell/);
    expect(await chat.paneTitle()).toBe(titleBefore);
  });

  test('youyou -p writes it to stderr as it comes, neutralised', async () => {
    scriptShellTurn();
    const cli = startCli({
      args: ['-p', 'run it', '--yes', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });
    let stderr = '';
    cli.child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    await until(() => stderr.includes('first-line'), 'the first line on stderr');
    expect(stderr).not.toContain('gate-opened');
    expect(stderr).toContain('\\e]0;owned\\a\\e[2Jhostile-line\n');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: no raw ESC or BEL may reach the terminal.
    expect(stderr).not.toMatch(/[\x07\x1b]/);

    await writeFile(path.join(harness.sandbox.workspace, GATE), '');
    const result = await cli.result;
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Ran it: whole.');
    expect(stderr).toContain('gate-opened');
  });

  test('youyou -p writes an MCP tool’s progress to stderr as it comes, neutralised', async () => {
    const fixture = path.join(REPOSITORY, 'packages/mcp/test/fixtures/progress-server.mjs');
    await mkdir(harness.sandbox.home, { recursive: true });
    await writeFile(
      path.join(harness.sandbox.home, 'config.json'),
      JSON.stringify({ mcpServers: { prog: { command: process.execPath, args: [fixture] } } }),
    );
    const gate = path.join(harness.sandbox.workspace, GATE);
    harness.server.reply(
      toolCallReply({ id: 'call_p', name: 'prog__report', arguments: { gate } }),
      (request) => textReply(`Reported: ${toolResult(request, 'call_p') ?? 'nothing'}.`),
    );
    const cli = startCli({
      args: ['-p', 'report', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });
    let stderr = '';
    cli.child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    await until(() => stderr.includes('step 1 of 3\n'), 'the first progress on stderr');
    expect(stderr).not.toContain('2/3');

    await writeFile(gate, '');
    const result = await cli.result;
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Reported: reported.');
    expect(stderr).toContain('step 1 of 3\n2/3\ndone\\e]0;owned\\a\n');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: no raw ESC or BEL may reach the terminal.
    expect(stderr).not.toMatch(/[\x07\x1b]/);
  });
});
