import { execFile } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';

const exec = promisify(execFile);

/** A program running in a detached tmux session of its own tmux server, 120×40, driven by keys. */
export interface TmuxSession {
  /** Types keys (tmux send-keys syntax: 'Enter', 'C-c', 'C-d'; text is sent literally with `literal`). */
  keys(...keys: string[]): Promise<void>;
  /** Types text literally. */
  type(text: string): Promise<void>;
  /** Pastes `text` as a terminal does: bracketed (ESC[200~ … ESC[201~) when the program turned that mode on. */
  paste(text: string): Promise<void>;
  /** Sends `bytes` to the program as they are (escape sequences of keys tmux has no name for). */
  raw(bytes: string): Promise<void>;
  /** The visible screen as text. */
  screen(): Promise<string>;
  /** The process id of the program running in the pane. */
  panePid(): Promise<number>;
  /** The pane's title: what an OSC 0/2 sequence written by the program would have set. */
  paneTitle(): Promise<string>;
  /** The visible screen with its colours and attributes as SGR sequences (as tmux redraws them). */
  styledScreen(): Promise<string>;
  /** Polls the screen until `expected` matches, at most `timeoutMs`; resolves with that screen. */
  waitFor(expected: string | RegExp, timeoutMs?: number): Promise<string>;
  /** Polls until the program has exited (the tmux session is gone), at most `timeoutMs`. */
  waitForExit(timeoutMs?: number): Promise<void>;
  /** Kills the tmux server. */
  kill(): Promise<void>;
}

let counter = 0;

/** Fails with the fix when tmux is missing, rather than with an ENOENT from the first test. */
export async function requireTmux(): Promise<void> {
  try {
    await exec('tmux', ['-V']);
  } catch {
    throw new Error(
      'the interactive tests drive youyou in tmux, which is not installed: apt-get install -y tmux',
    );
  }
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Starts `command` (argv) in a new tmux server with its own socket, in `cwd`, with exactly `env`. */
export async function startTmux(options: {
  command: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}): Promise<TmuxSession> {
  counter += 1;
  const socket = `youyou-test-${process.pid}-${counter}`;
  const tmux = (...args: string[]) =>
    exec('tmux', ['-L', socket, ...args], { env: { ...process.env, ...options.env } });
  const assignments = Object.entries(options.env)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => `${name}=${shellQuote(value)}`);
  const commandLine = [
    'env',
    '-i',
    ...assignments,
    'TERM=xterm-256color',
    'LANG=C.UTF-8',
    ...options.command.map(shellQuote),
  ].join(' ');
  await tmux(
    '-u',
    '-f',
    '/dev/null',
    'new-session',
    '-d',
    '-s',
    'main',
    '-x',
    '120',
    '-y',
    '40',
    '-c',
    options.cwd,
    commandLine,
  );
  const screen = async (): Promise<string> => (await tmux('capture-pane', '-p', '-t', 'main')).stdout;
  const alive = async (): Promise<boolean> => {
    try {
      await tmux('has-session', '-t', 'main');
      return true;
    } catch {
      return false;
    }
  };
  return {
    keys: async (...keys) => {
      await tmux('send-keys', '-t', 'main', ...keys);
    },
    type: async (text) => {
      await tmux('send-keys', '-t', 'main', '-l', text);
    },
    paste: async (text) => {
      await tmux('set-buffer', '-b', 'paste', '--', text);
      await tmux('paste-buffer', '-p', '-d', '-b', 'paste', '-t', 'main');
    },
    raw: async (bytes) => {
      const hex = Array.from(Buffer.from(bytes, 'utf8'), (byte) => byte.toString(16).padStart(2, '0'));
      await tmux('send-keys', '-t', 'main', '-H', ...hex);
    },
    screen,
    panePid: async () =>
      Number.parseInt((await tmux('display-message', '-p', '-t', 'main', '#{pane_pid}')).stdout, 10),
    paneTitle: async () => (await tmux('display-message', '-p', '-t', 'main', '#{pane_title}')).stdout.trim(),
    styledScreen: async () => (await tmux('capture-pane', '-p', '-e', '-t', 'main')).stdout,
    waitFor: async (expected, timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs;
      let last = '';
      for (;;) {
        last = await screen().catch(() => last);
        if (typeof expected === 'string' ? last.includes(expected) : expected.test(last)) return last;
        if (Date.now() > deadline) {
          throw new Error(
            `the screen did not show ${String(expected)} within ${timeoutMs}ms; it shows:\n${last}`,
          );
        }
        await delay(50);
      }
    },
    waitForExit: async (timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs;
      while (await alive()) {
        if (Date.now() > deadline)
          throw new Error(`the program did not exit within ${timeoutMs}ms:\n${await screen()}`);
        await delay(50);
      }
    },
    kill: async () => {
      await tmux('kill-server').catch(() => undefined);
    },
  };
}
