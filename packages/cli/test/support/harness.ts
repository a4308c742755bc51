import { afterEach, beforeAll, beforeEach } from 'vitest';
import { type ChatServer, startChatServer } from '../../../../test-support/cli-wire.js';
import { BIN, ensureBuilt } from './build.js';
import { childEnv, createSandbox, type Sandbox } from './cli.js';
import { requireTmux, startTmux, type TmuxSession } from './tmux.js';

/** The prompt is back: the last non-empty line of the screen is the bare prompt. */
export const PROMPT_BACK = /\n› *\n*$/;

/** What each test of a CLI test file gets afresh: a scripted model server and a sandboxed home and workspace. */
export interface CliHarness {
  /** The running test's scripted chat server. */
  readonly server: ChatServer;
  /** The running test's sandbox (home, workspace). */
  readonly sandbox: Sandbox;
}

/** A CLI harness that also drives youyou on a terminal (tmux); sessions it starts are killed after each test. */
export interface TmuxHarness extends CliHarness {
  /** Starts youyou in tmux against the test's server with `args`; resolves once its prompt shows. */
  startChat(...args: string[]): Promise<TmuxSession>;
  /** Starts `command` in tmux in the sandbox's workspace, with the sandbox's environment. */
  startInTmux(command: readonly string[]): Promise<TmuxSession>;
}

/** The per-test state behind a harness; its getters fail outside a test rather than hand out a stale one. */
class Fixtures {
  #server: ChatServer | undefined;
  #sandbox: Sandbox | undefined;

  get server(): ChatServer {
    if (this.#server === undefined) throw new Error('the chat server exists only while a test runs');
    return this.#server;
  }

  get sandbox(): Sandbox {
    if (this.#sandbox === undefined) throw new Error('the sandbox exists only while a test runs');
    return this.#sandbox;
  }

  async open(): Promise<void> {
    this.#server = await startChatServer();
    this.#sandbox = await createSandbox();
  }

  async close(): Promise<void> {
    await this.#server?.close();
    await this.#sandbox?.remove();
    this.#server = undefined;
    this.#sandbox = undefined;
  }
}

/**
 * Registers the hooks of a CLI test file: the CLI is built once, and each test gets a new chat server and
 * sandbox, closed and removed after it. Call once at the top of the file.
 */
export function useCliHarness(): CliHarness {
  const fixtures = new Fixtures();
  beforeAll(ensureBuilt, 180_000);
  beforeEach(() => fixtures.open());
  afterEach(() => fixtures.close());
  return fixtures;
}

/**
 * Registers the hooks of an interactive test file: as `useCliHarness`, and tmux must be installed; the tmux
 * session a test started is killed before its server closes. Call once at the top of the file.
 */
export function useTmuxHarness(): TmuxHarness {
  const fixtures = new Fixtures();
  let tmux: TmuxSession | undefined;
  beforeAll(async () => {
    await requireTmux();
    await ensureBuilt();
  }, 180_000);
  beforeEach(() => fixtures.open());
  afterEach(async () => {
    await tmux?.kill();
    tmux = undefined;
    await fixtures.close();
  });
  const startInTmux = async (command: readonly string[]): Promise<TmuxSession> => {
    tmux = await startTmux({
      command,
      cwd: fixtures.sandbox.workspace,
      env: childEnv(fixtures.sandbox),
    });
    return tmux;
  };
  return {
    get server() {
      return fixtures.server;
    },
    get sandbox() {
      return fixtures.sandbox;
    },
    startInTmux,
    async startChat(...args: string[]): Promise<TmuxSession> {
      const session = await startInTmux([
        process.execPath,
        BIN,
        '--base-url',
        fixtures.server.baseURL,
        ...args,
      ]);
      await session.waitFor(PROMPT_BACK);
      return session;
    },
  };
}

/** Types `text` into the session and presses Enter. */
export async function send(session: TmuxSession, text: string): Promise<void> {
  await session.type(text);
  await session.keys('Enter');
}
