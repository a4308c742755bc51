import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';
import {
  contentText,
  hangingReply,
  messagesOf,
  textReply,
  toolCallReply,
  toolResult,
} from '../../../test-support/cli-wire.js';
import { BIN } from './support/build.js';
import { useTmuxHarness } from './support/harness.js';

const run = promisify(execFile);

/** The one child process of `pid`. */
async function onlyChild(pid: number): Promise<number> {
  const { stdout } = await run('ps', ['-o', 'pid=', '--ppid', String(pid)]);
  return Number.parseInt(stdout.trim(), 10);
}
const harness = useTmuxHarness();
const { startChat } = harness;

/** The text of the last user message of the `index`th turn request. */
function sentText(index: number): string | undefined {
  const request = harness.server.turnRequests()[index];
  const last = request === undefined ? undefined : messagesOf(request).at(-1);
  return last === undefined ? undefined : contentText(last);
}

describe('the prompt line', () => {
  test('a long multi-line paste arrives whole as one message, shown as [pasted N lines]; what it holds acts as no key', async () => {
    harness.server.reply(textReply('Got it.'));
    const chat = await startChat();
    const lines = Array.from({ length: 8 }, (_, index) => `line ${index + 1}`);
    // An up arrow and a lookalike of the paste's end marker inside the paste are data, not keys.
    lines[3] = 'up \x1b[A here [201~ and \x1b[201 too';
    await chat.type('look: ');
    await chat.paste(lines.join('\n'));
    await chat.waitFor('› look: [pasted 8 lines]');
    await chat.type(' end');
    await chat.waitFor('[pasted 8 lines] end');
    expect(harness.server.turnRequests()).toHaveLength(0);
    await chat.keys('Enter');
    await chat.waitFor(/Got it\.[\s\S]*\n› *\n*$/);
    expect(harness.server.turnRequests()).toHaveLength(1);
    expect(sentText(0)).toBe(`look: ${lines.join('\n')} end`);
  });

  test('a short paste is shown as it is, on lines of its own, and is sent with Enter', async () => {
    harness.server.reply(textReply('Two.'));
    const chat = await startChat();
    await chat.paste('first\nsecond');
    await chat.waitFor(/› first\n +second/);
    await chat.keys('Enter');
    await chat.waitFor(/Two\.[\s\S]*\n› *\n*$/);
    expect(sentText(0)).toBe('first\nsecond');
  });

  test('Shift+Enter (kitty and xterm forms), Alt+Enter and \\ then Enter insert newlines; Enter sends', async () => {
    harness.server.reply(textReply('Five.'));
    const chat = await startChat();
    await chat.type('a');
    await chat.raw('\x1b[13;2u');
    await chat.type('b');
    await chat.raw('\x1b[27;2;13~');
    await chat.type('c');
    await chat.raw('\x1b\r');
    await chat.type('d\\');
    await chat.keys('Enter');
    await chat.type('e');
    await chat.waitFor(/› a\n +b\n +c\n +d\n +e/);
    expect(harness.server.turnRequests()).toHaveLength(0);
    await chat.keys('Enter');
    await chat.waitFor(/Five\.[\s\S]*\n› *\n*$/);
    expect(sentText(0)).toBe('a\nb\nc\nd\ne');
  });

  test('@path attaches a workspace file (Tab completes it); @../, a symlink out, a hidden path and a denied path are not attached', async () => {
    const { workspace, root, home } = harness.sandbox;
    await writeFile(path.join(workspace, 'notes-for-model.txt'), 'alpha line\nbeta line\n');
    await writeFile(path.join(workspace, 'notes-other.md'), 'other\n');
    await writeFile(path.join(root, 'secret.txt'), 'OUTSIDE-SECRET\n');
    await symlink(path.join(root, 'secret.txt'), path.join(workspace, 'link.txt'));
    await mkdir(path.join(workspace, 'private'));
    await writeFile(path.join(workspace, 'private', 'key.txt'), 'DENIED-SECRET\n');
    await mkdir(path.join(workspace, 'vault'));
    await writeFile(path.join(workspace, 'vault', 'key.txt'), 'HIDDEN-SECRET\n');
    await mkdir(home, { recursive: true });
    await writeFile(
      path.join(home, 'config.json'),
      JSON.stringify({
        approval: { deny: ['read_file(private/**)'] },
        sandbox: { hiddenPaths: [path.join(workspace, 'vault')] },
      }),
    );
    harness.server.reply(textReply('Read.'));
    const chat = await startChat();

    await chat.type('read @no');
    await chat.keys('Tab');
    await chat.waitFor('› read @notes-');
    // Two files start so: a second Tab lists them and draws the prompt again below.
    await chat.keys('Tab');
    await chat.waitFor(/notes-for-model\.txt {2}notes-other\.md\n› read @notes-/);
    await chat.type('f');
    await chat.keys('Tab');
    await chat.waitFor('› read @notes-for-model.txt');
    // Nothing outside the workspace is completed.
    await chat.type(' @../secr');
    await chat.keys('Tab');
    await chat.type(' @link.txt @private/key.txt @vault/key.txt');
    await chat.waitFor('@../secr @link.txt');
    await chat.keys('Enter');
    const screen = await chat.waitFor(/Read\.[\s\S]*\n› *\n*$/);
    expect(screen).toMatch(/@\.\.\/secr not attached/);
    expect(screen).toMatch(/@link\.txt not attached/);
    expect(screen).toMatch(/@private\/key\.txt not attached/);
    expect(screen).toMatch(/@vault\/key\.txt not attached/);
    const sent = sentText(0) ?? '';
    expect(sent.startsWith('read @notes-for-model.txt @../secr @link.txt')).toBe(true);
    expect(sent).toContain('alpha line');
    expect(sent).toContain('beta line');
    expect(sent).not.toContain('SECRET');
  });

  test('!command runs in the sandbox, its output is shown and arrives with the next message', async () => {
    harness.server.reply(textReply('Seen.'));
    await writeFile(path.join(harness.sandbox.workspace, 'data.txt'), 'from-a-file\n');
    const chat = await startChat();

    await chat.type('!cat data.txt; echo made-by-bang > bang-out.txt; echo second-line');
    await chat.keys('Enter');
    await chat.waitFor(/second-line[\s\S]*attached to your next message[\s\S]*\n› *\n*$/);
    expect(harness.server.turnRequests()).toHaveLength(0);
    await chat.type('what did it say?');
    await chat.keys('Enter');
    await chat.waitFor(/Seen\.[\s\S]*\n› *\n*$/);
    const sent = sentText(0) ?? '';
    expect(sent).toContain('from-a-file');
    expect(sent).toContain('second-line');
    expect(sent).toContain('echo made-by-bang');
    expect(sent.endsWith('what did it say?')).toBe(true);
  });

  test('!command typed while a turn runs waits for the turn to end, then runs', async () => {
    harness.server.reply(hangingReply('thinking about it'));
    const chat = await startChat();
    await chat.type('slow one');
    await chat.keys('Enter');
    await chat.waitFor('thinking about it');
    await chat.type('!echo queued-$((40 + 2))');
    await chat.keys('Enter');
    await chat.waitFor('(queued: runs when this turn ends)');
    await chat.keys('C-c');
    await chat.waitFor(/queued-42\n[\s\S]*attached to your next message[\s\S]*\n› *\n*$/);
    expect(harness.server.turnRequests()).toHaveLength(1);
  });

  test('Ctrl-Z at the prompt stops youyou; after fg the prompt is back with its text and works', async () => {
    harness.server.reply(textReply('Back.'));
    const shell = await harness.startInTmux(['bash', '--norc', '--noprofile', '-i']);
    await shell.type(`PS1='shell$ '; '${process.execPath}' '${BIN}' --base-url '${harness.server.baseURL}'`);
    await shell.keys('Enter');
    await shell.waitFor(/\n› *\n*$/);
    await shell.type('kept text');
    await shell.keys('C-z');
    await shell.waitFor(/Stopped[\s\S]*shell\$ *\n*$/);
    await shell.type('fg');
    await shell.keys('Enter');
    await shell.waitFor(/› kept text *\n*$/);
    await shell.type(' and more');
    await shell.keys('Enter');
    await shell.waitFor(/Back\.[\s\S]*\n› *\n*$/);
    expect(sentText(0)).toBe('kept text and more');
  });

  test.each(['Ctrl-D', 'SIGTERM'])(
    'bracketed paste is turned off when youyou ends (%s): a paste into the next program has no markers',
    async (how) => {
      const shell = await harness.startInTmux([
        'sh',
        '-c',
        `'${process.execPath}' '${BIN}' --base-url '${harness.server.baseURL}'; echo exited; cat -v`,
      ]);
      await shell.waitFor(/\n› *\n*$/);
      if (how === 'Ctrl-D') await shell.keys('C-d');
      else {
        // The pane runs tmux's shell, which runs sh, which runs youyou.
        let pid = await shell.panePid();
        for (let depth = 0; depth < 2; depth += 1) pid = await onlyChild(pid);
        process.kill(pid, 'SIGTERM');
      }
      await shell.waitFor(/exited\n*$/);
      await shell.paste('plain');
      await shell.keys('Enter');
      const screen = await shell.waitFor(/exited\n(.*plain.*\n){2}/);
      expect(screen).not.toContain('[200~');
    },
  );

  test('a paste while a turn runs is text: it answers no question, its ^C cancels nothing, its CR sends nothing', async () => {
    harness.server.reply(
      toolCallReply({ id: 'call_w', name: 'write_file', arguments: { path: 'a.txt', content: 'a' } }),
      (request) => textReply(toolResult(request, 'call_w')?.includes('denied') ? 'Denied.' : 'Written.'),
      hangingReply('partial '),
    );
    const chat = await startChat();

    await chat.type('write a');
    await chat.keys('Enter');
    await chat.waitFor(/Allow write_file a\.txt[\s\S]*y = yes/);
    await chat.paste('y\x03\ny');
    await chat.type('n');
    await chat.waitFor(/Denied\.\n› *\n*$/);
    expect(existsSync(path.join(harness.sandbox.workspace, 'a.txt'))).toBe(false);

    await chat.type('go slow');
    await chat.keys('Enter');
    await chat.waitFor('partial');
    await chat.paste('kept\x03\ntext');
    // One Ctrl-C typed cancels the turn; had the pasted one counted, this one would end youyou.
    await chat.keys('C-c');
    await chat.waitFor(/cancelled\n› kept\\x03\n +text *\n*$/);
    await harness.server.wire.clientClosed();
    harness.server.reply(textReply('Fine.'));
    await chat.keys('Enter');
    await chat.waitFor(/Fine\.[\s\S]*\n› *\n*$/);
    expect(sentText(3)).toBe('kept\x03\ntext');
  });
});
