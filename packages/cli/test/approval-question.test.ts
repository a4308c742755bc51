import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  contentText,
  hangingReply,
  messagesOf,
  reasoningReply,
  textReply,
  toolCallReply,
  toolResult,
} from '../../../test-support/cli-wire.js';
import type { WireReply } from '../../../test-support/wire-server.js';
import { BIN } from './support/build.js';
import { PROMPT_BACK, send, useTmuxHarness } from './support/harness.js';
import type { TmuxSession } from './support/tmux.js';
import { until } from './support/until.js';

const harness = useTmuxHarness();

/** The choices line of an open question. */
const CHOICES = 'y = yes · n = no · r = no, say why · a = always';
/** The choices drawn again after `a`'s second step was left with Backspace: the question is still open. */
const BACK_TO_CHOICES = /back ›\s*y = yes · n = no/;

async function startChat(config?: unknown): Promise<TmuxSession> {
  if (config !== undefined) {
    await mkdir(harness.sandbox.home, { recursive: true });
    await writeFile(path.join(harness.sandbox.home, 'config.json'), JSON.stringify(config));
  }
  return harness.startChat();
}

/** Waits for the question showing `expected`, and for its choices after it: the next key typed answers it. */
async function question(session: TmuxSession, expected: string | RegExp = CHOICES): Promise<string> {
  const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const source = typeof expected === 'string' ? literal(expected) : expected.source;
  const screen = await session.waitFor(expected);
  if (expected !== CHOICES) await session.waitFor(new RegExp(`${source}[\\s\\S]*${literal(CHOICES)}`));
  return screen;
}

function shellCall(id: string, command: string) {
  return toolCallReply({ id, name: 'shell', arguments: { command } });
}

/** Bytes typed on the terminal of process `pid` that nobody has read yet (FIONREAD on its stdin). */
function unreadInput(pid: number): number {
  const script = [
    'import array, fcntl, os, sys, termios',
    'fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)',
    "count = array.array('i', [0])",
    'fcntl.ioctl(fd, termios.FIONREAD, count, True)',
    'print(count[0])',
  ].join('\n');
  return Number.parseInt(execFileSync('python3', ['-c', script, `/proc/${pid}/fd/0`]).toString(), 10);
}

/** The youyou process in the pane: the pane's process, or the one of its descendants that runs the binary. */
function youyouPid(panePid: number): number {
  const pending = [panePid];
  while (pending.length > 0) {
    const pid = pending.shift() ?? 0;
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (argv[0] === process.execPath && argv[1] === BIN) return pid;
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    if (children !== '') pending.push(...children.split(' ').map(Number));
  }
  throw new Error(`no youyou process under pane process ${panePid}`);
}

/** Whether process `pid` is stopped (SIGSTOP): the state letter of /proc/PID/stat. */
function isStopped(pid: number): boolean {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).startsWith('T');
}

/** The screen's rows with the question's gutter taken off, joined: what the user can read of the call. */
function callText(screen: string): string {
  return screen
    .split('\n')
    .filter((line) => line.startsWith('  │ '))
    .map((line) => line.slice(4).trimEnd())
    .join('');
}

describe('the approval question in a terminal', () => {
  test('a command hiding itself with \\e[2K\\r is shown as it is; OSC 0/2 of an answer or its reasoning never set the title', async () => {
    await mkdir(path.join(harness.sandbox.workspace, 'victim'));
    harness.server.reply(
      shellCall('call_1', 'rm -rf victim\x1b[2K\rls -la'),
      reasoningReply(
        ['Pondering\x1b]2;owned by reasoning\x07 it.'],
        ['Fine\x1b]0;owned\x07 then\x1b]52;c;cm0gLXJmIH4=\x07.'],
      ),
    );
    const chat = await startChat();
    const titleBefore = await chat.paneTitle();

    await send(chat, 'tidy up');
    const screen = await question(chat);
    expect(screen).toContain('│ rm -rf victim\\e[2K\\rls -la');
    await chat.type('n');

    const after = await chat.waitFor(/Fine.*\.\n› *\n*$/);
    expect(after).toContain('Fine\\e]0;owned\\a then\\e]52;c;cm0gLXJmIH4=\\a.');
    expect(await chat.paneTitle()).toBe(titleBefore);
    expect(existsSync(path.join(harness.sandbox.workspace, 'victim'))).toBe(true);
  });

  test('a multi-line command is shown in full and a long one wrapped, never cut', async () => {
    const long = `echo ${'abcdefghij'.repeat(25)} END`;
    harness.server.reply(
      shellCall('call_1', 'echo first line\necho second line > out.txt'),
      shellCall('call_2', long),
      textReply('Both ran.'),
    );
    const chat = await startChat();

    await send(chat, 'run things');
    let screen = await question(chat);
    expect(screen).toContain('│ echo first line\n');
    expect(screen).toContain('│ echo second line > out.txt\n');
    await chat.type('y');
    screen = await question(chat, 'END');
    expect(callText(screen)).toContain(long);
    await chat.type('y');

    await chat.waitFor(/Both ran\.\n› *\n*$/);
    expect(await readFile(path.join(harness.sandbox.workspace, 'out.txt'), 'utf8')).toBe('second line\n');
  });

  test('write_file and edit_file are shown as a unified diff against the file on disk', async () => {
    await writeFile(path.join(harness.sandbox.workspace, 'a.txt'), 'keep\nold line\nkeep too\n');
    await writeFile(path.join(harness.sandbox.workspace, 'b.txt'), 'alpha\nbeta\ngamma\n');
    harness.server.reply(
      toolCallReply({
        id: 'call_w',
        name: 'write_file',
        arguments: { path: 'a.txt', content: 'keep\nnew line\nkeep too\n' },
      }),
      toolCallReply({
        id: 'call_e',
        name: 'edit_file',
        arguments: { path: 'b.txt', oldString: 'beta', newString: 'BETA' },
      }),
      textReply('Edited.'),
    );
    const chat = await startChat();

    await send(chat, 'change them');
    let screen = await question(chat);
    expect(screen).toMatch(/│ @@ -1,3 \+1,3 @@\n.*│ {2}keep\n.*│ -old line\n.*│ \+new line\n.*│ {2}keep too/);
    await chat.type('y');
    screen = await question(chat, '-beta');
    expect(screen).toMatch(/│ -beta\n.*│ \+BETA\n/);
    await chat.type('y');

    await chat.waitFor(/Edited\.\n› *\n*$/);
    expect(await readFile(path.join(harness.sandbox.workspace, 'b.txt'), 'utf8')).toBe(
      'alpha\nBETA\ngamma\n',
    );
  });

  test('a call longer than the screen is paged: space shows the rest', async () => {
    const content = Array.from({ length: 80 }, (_, index) => `row ${index + 1}`).join('\n');
    harness.server.reply(
      toolCallReply({ id: 'call_w', name: 'write_file', arguments: { path: 'long.txt', content } }),
      textReply('Long file written.'),
    );
    const chat = await startChat();

    await send(chat, 'write a long file');
    let screen = await question(chat, /lines 1–\d+ of 8\d/);
    expect(screen).toContain('+row 1\n');
    expect(screen).not.toContain('+row 80');
    await chat.keys('Space');
    await chat.waitFor('+row 60');
    await chat.keys('Space');
    screen = await chat.waitFor('+row 80');
    await chat.type('y');

    await chat.waitFor(/Long file written\.\n› *\n*$/);
    expect(await readFile(path.join(harness.sandbox.workspace, 'long.txt'), 'utf8')).toBe(content);
  });

  test('keys typed before the question appears never answer it', async () => {
    harness.server.reply(
      toolCallReply({ id: 'call_w', name: 'write_file', arguments: { path: 'note.txt', content: 'x' } }),
      textReply('Answered.'),
    );
    const chat = await startChat();

    // The y (and Enter) arrive while the model is still answering, before the question is drawn.
    await chat.type('write a note\ryy\r');
    await chat.waitFor(CHOICES);
    // A key typed now is handled after every key typed before it: once this `a` has opened the second step,
    // the question has seen all the stray keys and is still open, so none of them answered it.
    await chat.type('a');
    const screen = await chat.waitFor(/always allow, for this session|›\s*yes/);
    expect(screen).toContain('always allow, for this session');
    expect(existsSync(path.join(harness.sandbox.workspace, 'note.txt'))).toBe(false);
    expect(screen).not.toMatch(/›\s*yes/);
    await chat.keys('BSpace');
    await chat.waitFor(BACK_TO_CHOICES);

    await chat.type('y');
    await chat.waitFor('Answered.');
    expect(await readFile(path.join(harness.sandbox.workspace, 'note.txt'), 'utf8')).toBe('x');
  });

  test('keys typed before the question never answer it: not while youyou was stopped, not a burst going on when it opens', async () => {
    const held: (() => void)[] = [];
    /** A reply the server sends only once `release` is called; resolves when it has been written. */
    const heldReply = (reply: WireReply) => {
      let release: () => void = () => {};
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      held.push(() => release());
      return async (): Promise<WireReply> => {
        await released;
        return reply;
      };
    };
    harness.server.reply(
      heldReply(shellCall('call_1', 'touch first')),
      heldReply(shellCall('call_2', 'touch second')),
      textReply('Answered.'),
    );
    // The quiet time is long enough that no pause between the test's own keystrokes, however loaded the
    // machine, reaches it: typing that goes on is typing, and the question must not take it as an answer.
    await mkdir(harness.sandbox.home, { recursive: true });
    await writeFile(
      path.join(harness.sandbox.home, 'config.json'),
      JSON.stringify({ approval: { quietMs: 3000 } }),
    );
    // Under a shell: tmux continues a stopped process of its own at once, not a grandchild.
    const chat = await harness.startInTmux([
      '/bin/sh',
      '-c',
      '"$0" "$@"; exit $?',
      process.execPath,
      BIN,
      '--base-url',
      harness.server.baseURL,
    ]);
    await chat.waitFor(PROMPT_BACK);
    const pid = youyouPid(await chat.panePid());
    const exists = (name: string) => existsSync(path.join(harness.sandbox.workspace, name));

    await send(chat, 'make files');
    // youyou sent its request and waits for the model; it is held, as on a loaded machine, and keys arrive.
    await until(() => harness.server.turnRequests().length === 1, 'the model request');
    process.kill(pid, 'SIGSTOP');
    await until(() => isStopped(pid), 'youyou stopped');
    const typed = 'and also yes please';
    await chat.type(typed);
    await until(() => unreadInput(pid) >= typed.length, 'the keys in the terminal');
    // The model's tool call reaches youyou while it is stopped too; then it goes on.
    held[0]?.();
    await new Promise((resolve) => setImmediate(resolve));
    process.kill(pid, 'SIGCONT');

    await question(chat, '│ touch first');
    expect(exists('first')).toBe(false);
    expect(await chat.screen()).not.toContain('always allow');
    await chat.type('y');
    await until(() => harness.server.turnRequests().length === 2, 'the second model request');
    expect(exists('first')).toBe(true);

    // Typing that goes on while the next question opens, and after it (youyou held again as it opens): its
    // `y` is not an answer.
    held[1]?.();
    for (let index = 0; !(await chat.screen()).includes('│ touch second'); index += 1) {
      await chat.type(typed[index % typed.length] ?? ' ');
    }
    process.kill(pid, 'SIGSTOP');
    await until(() => isStopped(pid), 'youyou stopped');
    await chat.type('yes please');
    await until(() => unreadInput(pid) >= 'yes please'.length, 'the keys in the terminal');
    process.kill(pid, 'SIGCONT');
    await chat.waitFor(/typed before the question ignored\)\n.*y = yes/);
    expect(exists('second')).toBe(false);
    expect((await chat.screen()).split('│ touch second')[1]).not.toMatch(/›\s*yes/);
    await chat.type('n');

    await chat.waitFor('Answered.');
    expect(exists('second')).toBe(false);
    expect(toolResult(harness.server.turnRequests()[2]!, 'call_2')).toContain('the user denied');
  });

  test('"always" takes a second, deliberate key, and keeps a prefix rule that compound commands never match', async () => {
    harness.server.reply(
      shellCall('call_1', 'echo hello one'),
      shellCall('call_2', 'echo hello two'),
      shellCall('call_3', 'echo hello three; touch pwned'),
      textReply('Done.'),
    );
    const chat = await startChat();

    await send(chat, 'greet');
    await question(chat);
    await chat.type('a');
    const offer = await chat.waitFor('always allow, for this session');
    expect(offer).toContain('1 (or Enter) = shell commands starting with `echo hello`');
    // One stray `a` allowed nothing yet: Backspace takes the question back to its choices, so it is still
    // open, and the first command has not run.
    await chat.keys('BSpace');
    await chat.waitFor(BACK_TO_CHOICES);
    expect(harness.server.turnRequests()).toHaveLength(1);
    await chat.type('a');
    await chat.waitFor(/back ›[\s\S]*back ›/);
    await chat.type('1');

    const screen = await chat.waitFor(/│ echo hello three; touch pwned[\s\S]*y = yes/);
    expect(screen.match(/Allow shell/g)).toHaveLength(2);
    await chat.type('n');
    await chat.waitFor(/Done\.\n› *\n*$/);
    const last = harness.server.turnRequests().at(-1)!;
    expect(toolResult(last, 'call_2')).toContain('hello two');
    expect(toolResult(last, 'call_3')).toContain('denied');
    expect(existsSync(path.join(harness.sandbox.workspace, 'pwned'))).toBe(false);
  });

  test('"always" for an interpreter keeps only that exact command: other code for it is asked about', async () => {
    await writeFile(
      path.join(harness.sandbox.workspace, 'build.py'),
      "with open('built.txt', 'a') as f:\n    f.write('built\\n')\n",
    );
    harness.server.reply(
      shellCall('call_1', 'python3 build.py'),
      shellCall('call_2', `python3 -c "open('pwned', 'w')"`),
      shellCall('call_3', 'python3 build.py'),
      textReply('Built twice.'),
    );
    const chat = await startChat();

    await send(chat, 'build it');
    await question(chat);
    await chat.type('a');
    const offer = await chat.waitFor('always allow, for this session');
    expect(offer).toContain('1 (or Enter) = exactly `python3 build.py` again');
    expect(offer).not.toContain('commands starting with `python3`');
    await chat.type('1');

    // Other Python code is not covered by that answer: it is asked about, and refused here.
    await chat.waitFor(/│ python3 -c "open\('pwned', 'w'\)"[\s\S]*y = yes/);
    await chat.type('n');
    await chat.waitFor(/Built twice\.\n› *\n*$/);
    expect(existsSync(path.join(harness.sandbox.workspace, 'pwned'))).toBe(false);
    // The exact command ran again without a question.
    expect(await readFile(path.join(harness.sandbox.workspace, 'built.txt'), 'utf8')).toBe('built\nbuilt\n');
    expect((await chat.screen()).match(/Allow shell/g)).toHaveLength(2);
  });

  test('r denies with a reason, and the model is told the reason', async () => {
    harness.server.reply(shellCall('call_1', 'npm install left-pad'), textReply('Understood.'));
    const chat = await startChat();

    await send(chat, 'add a dependency');
    await question(chat);
    await chat.type('r');
    await chat.waitFor('why not?');
    await chat.type('we use pnpm here');
    await chat.keys('Enter');

    await chat.waitFor(/Understood\.\n› *\n*$/);
    const result = toolResult(harness.server.turnRequests()[1]!, 'call_1');
    expect(result).toContain('denied');
    expect(result).toContain('we use pnpm here');
  });

  test('a question nobody answers is reported to the model as unanswered, not as refused', async () => {
    harness.server.reply(shellCall('call_1', 'touch later.txt'), textReply('I will wait.'));
    const chat = await startChat({ toolTimeoutMs: 1000 });

    await send(chat, 'make a file');
    await chat.waitFor(CHOICES);
    await chat.waitFor('no answer', 5000);
    await chat.waitFor(/I will wait\.\n› *\n*$/);

    const result = toolResult(harness.server.turnRequests()[1]!, 'call_1');
    expect(result).toContain('did not answer');
    expect(result).toContain('it was not refused');
    expect(existsSync(path.join(harness.sandbox.workspace, 'later.txt'))).toBe(false);
  });

  test('rules of config.json: an allowed prefix runs without a question, a denied one never runs', async () => {
    await mkdir(path.join(harness.sandbox.workspace, 'keep'));
    harness.server.reply(
      shellCall('call_1', 'echo allowed'),
      shellCall('call_2', 'rm -rf keep'),
      textReply('Rules applied.'),
    );
    const chat = await startChat({ approval: { allow: ['shell(echo allowed)'], deny: ['shell(rm)'] } });

    await send(chat, 'go');
    const screen = await chat.waitFor(/Rules applied\.\n› *\n*$/);
    expect(screen).not.toContain(CHOICES);
    const last = harness.server.turnRequests().at(-1)!;
    expect(toolResult(last, 'call_1')).toContain('allowed');
    expect(toolResult(last, 'call_2')).toContain('shell(rm)');
    expect(existsSync(path.join(harness.sandbox.workspace, 'keep'))).toBe(true);
  });

  test('text sent while a tool runs reaches the model in the same turn, right after the tool result', async () => {
    harness.server.reply(shellCall('call_1', 'sleep 5'), textReply('Read your note.'));
    const chat = await startChat({ approval: { allow: ['shell(sleep 5)'] } });

    await send(chat, 'run it');
    await chat.waitFor('sleep 5');
    await chat.type('also look at the tests');
    await chat.keys('Enter');
    await chat.waitFor('Read your note.');
    const requests = harness.server.turnRequests();
    expect(requests).toHaveLength(2);
    const messages = messagesOf(requests[1]!);
    const last = messages.at(-1);
    expect(last && contentText(last)).toBe('also look at the tests');
    expect(toolResult(requests[1]!, 'call_1')).toBeDefined();
  });

  test('text typed while a turn runs is kept: Enter steers the turn with it, the rest stays at the prompt', async () => {
    harness.server.reply(hangingReply('working on it'), textReply('Queued one answered.'));
    const chat = await startChat();

    await send(chat, 'long task');
    await chat.waitFor('working on it');
    await chat.type('queued one');
    await chat.keys('Enter');
    await chat.waitFor('sent: the model reads it at its next step');
    await chat.type('half typed');
    await chat.keys('C-c');

    await chat.waitFor('Queued one answered.');
    await chat.waitFor(/› half typed *\n*$/);
    const sent = messagesOf(harness.server.turnRequests()[1]!).at(-1);
    expect(sent && contentText(sent)).toBe('queued one');
  });
});
