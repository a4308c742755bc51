import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { textReply, toolCallReply } from '../../../test-support/cli-wire.js';
import { BIN } from './support/build.js';
import { runCli } from './support/cli.js';
import { useTmuxHarness } from './support/harness.js';

const harness = useTmuxHarness();
const { startChat } = harness;

const STUCK_SERVER = fileURLToPath(new URL('./fixtures/stuck-tool-mcp-server.mjs', import.meta.url));
const ESC = '\x1b';
const ANSWER = [
  '# Release notes\n\n',
  'Some **bold** words.\n\n',
  '| name | value |\n|---|---|\n',
  '| alpha | 1 |\n\n',
  'Done.',
];

describe('Markdown answers', () => {
  test('in a terminal a heading, bold text and a table are drawn styled, not as Markdown', async () => {
    harness.server.reply(textReply(...ANSWER));
    const chat = await startChat();
    await chat.type('notes please');
    await chat.keys('Enter');

    const screen = await chat.waitFor(/Done\.\n› *\n*$/, 20_000);
    expect(screen).toContain('Release notes');
    expect(screen).not.toContain('# Release notes');
    expect(screen).not.toContain('**bold**');
    expect(screen).not.toContain('|---|');
    expect(screen).toMatch(/┌─+┬─+┐/);
    expect(screen).toMatch(/│ alpha +│ 1 +│/);
    const styled = await chat.styledScreen();
    const headingLine = styled.split('\n').find((line) => line.includes('Release notes')) ?? '';
    expect(headingLine).toContain(`${ESC}[`);
    const boldLine = styled.split('\n').find((line) => line.includes('bold')) ?? '';
    // Bold is SGR attribute 1, alone or among others.
    expect(boldLine).toMatch(new RegExp(`${ESC}\\[(?:\\d+;)*1(?:;\\d+)*mbold`));
  }, 40_000);

  test('-p onto a terminal renders the answer as well', async () => {
    harness.server.reply(textReply(...ANSWER));
    const session = await harness.startInTmux([
      '/bin/sh',
      '-c',
      `"$0" "$1" -p 'notes please' --base-url "$2"; echo "exit $?"; sleep 30`,
      process.execPath,
      BIN,
      harness.server.baseURL,
    ]);
    const screen = await session.waitFor(/exit 0/, 20_000);
    expect(screen).toContain('Release notes');
    expect(screen).not.toContain('# Release notes');
    expect(screen).toMatch(/│ alpha +│ 1 +│/);
  }, 40_000);

  test('-p into a pipe prints the Markdown exactly as the model wrote it', async () => {
    harness.server.reply(textReply(...ANSWER));
    const result = await runCli({
      args: ['-p', 'notes please', '--base-url', harness.server.baseURL],
      sandbox: harness.sandbox,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${ANSWER.join('')}\n`);
  }, 30_000);
});

describe('Ctrl-C during a long tool', () => {
  test('gives the prompt back while a tool that ignores its signal is still running', async () => {
    // The tool is slow on purpose: it never answers, so the Ctrl-C always lands while it runs, however fast
    // the machine is. It marks when it was called, so the test waits for that state, not for a duration.
    const started = path.join(harness.sandbox.root, 'stuck-started');
    await mkdir(harness.sandbox.home, { recursive: true });
    await writeFile(
      path.join(harness.sandbox.home, 'config.json'),
      JSON.stringify({
        mcpServers: { hold: { command: process.execPath, args: [STUCK_SERVER, started] } },
      }),
    );
    harness.server.reply(
      toolCallReply({ id: 'call_stuck', name: 'hold__stuck', arguments: {} }),
      textReply('never asked for'),
    );
    const chat = await startChat();
    await chat.type('wait for it');
    await chat.keys('Enter');
    await waitForFile(started);
    await chat.keys('C-c');
    await chat.waitFor(/cancelled\n› *\n*$/, 20_000);
    // The model was not asked again: the turn ended with the cancel.
    expect(harness.server.turnRequests()).toHaveLength(1);
  }, 60_000);
});

async function waitForFile(file: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`${file} was never created`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
