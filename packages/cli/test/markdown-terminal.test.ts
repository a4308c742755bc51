import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { textReply, toolCallReply } from '../../../test-support/cli-wire.js';
import { BIN } from './support/build.js';
import { runCli } from './support/cli.js';
import { useTmuxHarness } from './support/harness.js';

const harness = useTmuxHarness();
const { startChat } = harness;

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
  test('gives the prompt back within a second while grep searches large files', async () => {
    // Lines of a and b that this pattern needs RE2's slowest path for: a few seconds per file.
    const line = `${'ab'.repeat(40)}\n`;
    const content = line.repeat(Math.floor((16 * 1024 * 1024) / line.length) - 1);
    for (let index = 0; index < 4; index += 1) {
      await writeFile(path.join(harness.sandbox.workspace, `big${index}.txt`), content);
    }
    harness.server.reply(
      toolCallReply({ id: 'call_grep', name: 'grep', arguments: { pattern: '[ab]*a[ab]{60}x' } }),
      textReply('never asked for'),
    );
    const chat = await startChat();
    await chat.type('search everything');
    await chat.keys('Enter');
    await chat.waitFor(/grep/, 20_000);
    // The search has started and runs for seconds.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const interrupted = performance.now();
    await chat.keys('C-c');
    await chat.waitFor(/cancelled\n› *\n*$/, 5_000);
    expect(performance.now() - interrupted).toBeLessThan(1_000);
    // The model was not asked again: the turn ended with the cancel.
    expect(harness.server.turnRequests()).toHaveLength(1);
  }, 60_000);
});
