import type { AgentError, Message, RunningTurn, Session } from '@youyou/agent';
import type { ApprovalAnswer, ApprovalRequest } from '../../approval/policy.js';
import type { ApprovalQuestion } from '../../chat/approval-prompt.js';
import { createStyles, plainMessage, type Styles } from '../../chat/format.js';
import type { MarkdownStream } from '../../chat/markdown.js';
import { loadMarkdownStream } from '../../chat/markdown-load.js';
import { TurnView } from '../../chat/render.js';
import {
  isInterrupt,
  type Key,
  loadHistory,
  type PromptResult,
  saveHistory,
  Terminal,
} from '../../chat/terminal.js';
import type { CliSettings } from '../../config/config.js';
import type { CliIo } from '../../runtime/cli-io.js';
import { type CliRuntime, openHomeStorage, setUpRuntime } from '../../runtime/setup.js';
import { packageVersion } from '../../runtime/version.js';
import { newWorkspaceSession, openSession } from '../../sessions/open-session.js';
import { storedMessageCount } from '../../sessions/session-table.js';
import { shortId } from '../../sessions/workspace-sessions.js';
import { neutralize, neutralizeLine } from '../../text/terminal-text.js';
import { type ChatCommandContext, COMMAND, runSlashCommand } from './slash-commands.js';

/**
 * The interactive chat: a prompt with history, slash commands, streamed turns drawn by TurnView, approval
 * questions for mutating tools, Ctrl-C to cancel a turn and Ctrl-C twice or Ctrl-D to leave (closing the
 * session, so its memories are extracted).
 */
class Chat {
  readonly #runtime: CliRuntime;
  readonly #terminal: Terminal;
  readonly #settings: CliSettings;
  readonly #styles: Styles;
  readonly #color: boolean;
  #session: Session | undefined;
  #showReasoning = false;
  /** The last thing the user did was Ctrl-C: one more exits. */
  #interruptedOnce = false;
  #approval: ApprovalQuestion | undefined;
  /** Settles when the last question asked so far is answered. */
  #questions: Promise<void> = Promise.resolve();
  /** Commands typed and sent with Enter while a turn ran: each runs after it, in order. */
  readonly #queued: string[] = [];
  /** Text typed while a turn ran without Enter: it is put back at the next prompt. */
  #typed = '';
  #view: TurnView | undefined;
  /** Set by /exit: the loop ends after the command. */
  #leaving = false;

  constructor(options: { runtime: CliRuntime; terminal: Terminal; settings: CliSettings; color: boolean }) {
    this.#runtime = options.runtime;
    this.#terminal = options.terminal;
    this.#settings = options.settings;
    this.#color = options.color;
    this.#styles = createStyles(options.color);
  }

  #write(text: string): void {
    this.#terminal.output.write(text);
  }

  /** Prints the banner and, for a resumed session (with its stored message count), where it stood. */
  start(resumed: { session: Session; messageCount: number } | undefined): void {
    const { provider } = this.#runtime;
    const where = provider.baseURL === undefined ? provider.name : provider.baseURL;
    this.#write(
      `${this.#styles.bold('youyou')} ${packageVersion()} ${this.#styles.dim(`· ${neutralizeLine(`${provider.modelId} via ${where} · ${this.#settings.cwd}`)}`)}\n`,
    );
    const { sandbox } = this.#runtime;
    this.#write(
      sandbox.mode === 'danger-full-access'
        ? this.#styles.yellow('sandbox: danger-full-access · shell commands run unconfined, with network\n')
        : this.#styles.dim(`sandbox: ${sandbox.mode} · network ${sandbox.network ? 'on' : 'off'}\n`),
    );
    this.#write(this.#styles.dim('/help for commands · Ctrl-C cancels a turn · Ctrl-D exits\n'));
    if (resumed !== undefined) this.#showResumed(resumed.session, resumed.messageCount);
  }

  /** `messageCount` is the stored count that `sessions` shows too (the context may hold more or fewer). */
  #showResumed(session: Session, messageCount: number): void {
    this.#session = session;
    const messages = session.messages();
    this.#write(this.#styles.dim(`Resumed session ${shortId(session.id)} · ${messageCount} messages\n`));
    const textOf = (message: Message): string =>
      'content' in message && Array.isArray(message.content)
        ? message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('')
        : '';
    const shown = messages.filter(
      (message) => (message.type === 'user' || message.type === 'assistant') && textOf(message).trim() !== '',
    );
    for (const message of shown.slice(-4)) {
      const lines = textOf(message).trim().split('\n');
      const text = neutralize(lines.length > 6 ? `${lines.slice(0, 6).join('\n')}\n…` : lines.join('\n'));
      const prefix = message.type === 'user' ? this.#styles.cyan('› ') : '';
      this.#write(`${prefix}${message.type === 'user' ? text : this.#styles.dim(text)}\n`);
    }
  }

  /** Runs until the user leaves; resolves with the exit code. */
  async loop(): Promise<number> {
    for (;;) {
      const prompt = this.#color ? '\x1b[36m›\x1b[39m ' : '› ';
      const queued = this.#queued.shift();
      if (queued !== undefined) this.#write(`${prompt}${neutralize(queued)}\n`);
      let result: PromptResult;
      if (queued !== undefined) result = { type: 'line', text: queued };
      else {
        // Text typed during the last turn without Enter is already on the new prompt line.
        const typed = this.#typed;
        this.#typed = '';
        result = await this.#terminal.readLine(prompt, typed);
      }
      if (result.type === 'eof') return this.#leave();
      if (result.type === 'interrupt') {
        if (result.hadText) continue;
        if (this.#interruptedOnce) return this.#leave();
        this.#interruptedOnce = true;
        this.#write(this.#styles.dim('(Ctrl-C again or Ctrl-D to exit)\n'));
        continue;
      }
      this.#interruptedOnce = false;
      const text = result.text.trim();
      if (text === '') continue;
      const command = COMMAND.exec(text);
      if (
        command !== null &&
        (await runSlashCommand(this.#commandContext(), {
          name: command[1] ?? '',
          argument: (command[2] ?? '').trim(),
        })) !== 'not_a_command'
      ) {
        if (this.#leaving) return this.#leave();
        continue;
      }
      const outcome = await this.#turn(result.text);
      if (outcome === 'exit') return this.#leave();
    }
  }

  /** Closes the current session (SessionEnd, memory extraction) with a status line while it runs. */
  async #closeSession(): Promise<void> {
    const session = this.#session;
    if (session === undefined) return;
    this.#session = undefined;
    await this.#withStatus('saving the session', () => session.close());
  }

  /** Runs `work` under a status line; Ctrl-C meanwhile leaves the program at once. */
  async #withStatus(status: string, work: () => Promise<void>): Promise<void> {
    const view = this.#newView();
    view.status(status);
    this.#terminal.startKeys((key) => {
      if (isInterrupt(key)) this.#hardExit();
    });
    try {
      await work();
    } finally {
      this.#terminal.stopKeys();
      view.close();
    }
  }

  /** What the slash commands see of this chat. */
  #commandContext(): ChatCommandContext {
    return {
      runtime: this.#runtime,
      color: this.#color,
      styles: this.#styles,
      columns: () => this.#terminal.columns,
      write: (text) => this.#write(text),
      session: () => this.#session,
      closeSession: () => this.#closeSession(),
      showResumed: (session, messageCount) => this.#showResumed(session, messageCount),
      withStatus: (status, work) => this.#withStatus(status, work),
      toggleReasoning: () => {
        this.#showReasoning = !this.#showReasoning;
        return this.#showReasoning;
      },
      leave: () => {
        this.#leaving = true;
      },
    };
  }

  #newView(markdown?: MarkdownStream): TurnView {
    return new TurnView({
      sinks: { answer: (text) => this.#write(text), activity: (text) => this.#write(text) },
      live: true,
      color: this.#color,
      columns: () => this.#terminal.columns,
      showReasoning: () => this.#showReasoning,
      baseURL: this.#runtime.provider.baseURL,
      markdown,
    });
  }

  /** A Markdown renderer for the next answer, when the terminal shows colour. */
  async #markdownStream(): Promise<MarkdownStream | undefined> {
    return this.#color ? await loadMarkdownStream(this.#terminal.output) : undefined;
  }

  /** Runs one turn; 'exit' when the user pressed Ctrl-C a second time while it was being cancelled. */
  async #turn(text: string): Promise<'done' | 'exit'> {
    let turn: RunningTurn;
    // Loaded before the turn starts: once it has, nothing may come between it and reading keys raw, or a
    // Ctrl-C typed early would reach the process group as SIGINT (the MCP servers among it) instead.
    let markdown = await this.#markdownStream();
    try {
      this.#session ??= await newWorkspaceSession(this.#runtime, this.#settings.cwd);
      turn = await this.#session.sendMessage(text, this.#runtime.turnOptions);
    } catch (error) {
      this.#write(
        this.#styles.red(`${plainMessage(error instanceof Error ? error.message : String(error))}\n`),
      );
      return 'done';
    }
    // Text steered in during a turn that the turn did not take starts the next turn by itself: show it too.
    for (;;) {
      if ((await this.#show(turn, markdown)) === 'exit') return 'exit';
      const next = this.#session.currentTurn;
      if (next === undefined || next.turnId === turn.turnId) return 'done';
      turn = next;
      markdown = await this.#markdownStream();
    }
  }

  /** Shows one turn's events and handles the keys while it runs. */
  async #show(turn: RunningTurn, markdown: MarkdownStream | undefined): Promise<'done' | 'exit'> {
    const view = this.#newView(markdown);
    this.#view = view;
    let cancelled = false;
    let exit = false;
    let stop: (() => void) | undefined;
    const stopped = new Promise<void>((resolve) => {
      stop = resolve;
    });
    this.#terminal.startKeys((key) => {
      const question = this.#approval;
      if (question !== undefined) {
        question.key(key, () => {
          cancelled = true;
          this.#interruptedOnce = true;
          turn.cancel();
        });
        return;
      }
      if (!isInterrupt(key)) {
        this.#typeAhead(key, view);
        return;
      }
      if (cancelled) {
        exit = true;
        stop?.();
        return;
      }
      cancelled = true;
      this.#interruptedOnce = true;
      view.status('cancelling');
      turn.cancel();
    });
    view.status('thinking');
    try {
      const iterator = turn[Symbol.asyncIterator]();
      for (;;) {
        const next = await Promise.race([iterator.next(), stopped.then(() => undefined)]);
        if (next === undefined || next.done === true) break;
        view.handle(next.value);
      }
    } finally {
      view.close();
      this.#view = undefined;
      this.#terminal.stopKeys();
    }
    if (!cancelled) this.#interruptedOnce = false;
    return exit ? 'exit' : 'done';
  }

  /**
   * Keeps what the user types while a turn runs. Enter steers the turn with it: the model reads it at the
   * turn's next step (after the running tool calls, or right after its answer). A /command is kept and run
   * when the turn ends.
   */
  #typeAhead(key: Key, view: TurnView): void {
    if (key.name === 'return' || key.name === 'enter') {
      const text = this.#typed;
      this.#typed = '';
      if (text.trim() === '') return;
      const session = this.#session;
      if (COMMAND.test(text.trim()) || session === undefined) {
        this.#queued.push(text);
        view.line(this.#styles.dim(`› ${neutralizeLine(text)}  (queued: runs when this turn ends)`));
        return;
      }
      view.line(this.#styles.dim(`› ${neutralizeLine(text)}  (sent: the model reads it at its next step)`));
      session.steer(text).catch((error: unknown) => {
        view.line(this.#styles.red(plainMessage(error instanceof Error ? error.message : String(error))));
      });
      return;
    }
    if (key.name === 'backspace') {
      this.#typed = Array.from(this.#typed).slice(0, -1).join('');
      return;
    }
    const text = key.sequence;
    if (text === undefined || key.ctrl === true || key.meta === true) return;
    // Only printable text is kept: arrows and function keys are not part of a message.
    if (neutralizeLine(text) === text) this.#typed += text;
  }

  /** The approval question for a mutating tool; called from the turn's approver. */
  async ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    // Calls of one batch may ask at once: one question at a time, in order, each with the keys to itself.
    const earlier = this.#questions;
    let done: (() => void) | undefined;
    this.#questions = new Promise<void>((resolve) => {
      done = resolve;
    });
    try {
      await earlier;
      if (signal.aborted) return { type: 'deny' };
      return await this.#askNow(request, signal);
    } finally {
      done?.();
    }
  }

  async #askNow(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    // Loaded on the first question: the diff library is not needed to start.
    const { ApprovalQuestion } = await import('../../chat/approval-prompt.js');
    this.#view?.pause();
    return new Promise<ApprovalAnswer>((resolve) => {
      const onAbort = (): void => question.abandon();
      const question = new ApprovalQuestion({
        request,
        workspace: this.#settings.cwd,
        columns: this.#terminal.columns,
        rows: this.#terminal.rows,
        color: this.#color,
        write: (text) => this.#write(text),
        flushInput: () => this.#terminal.flushInput(),
        lastKeyAt: () => this.#terminal.lastKeyAt,
        quietMs: this.#settings.approvalQuietMs,
        resolve: (answer) => {
          if (this.#approval === question) this.#approval = undefined;
          signal.removeEventListener('abort', onAbort);
          resolve(answer);
        },
      });
      signal.addEventListener('abort', onAbort);
      this.#approval = question;
      question.open();
      if (signal.aborted) question.abandon();
    });
  }

  /** Leaves: the session is closed (memories extracted), then everything else. */
  async #leave(): Promise<number> {
    await this.#closeSession();
    return 0;
  }

  #hardExit(): never {
    this.#terminal.restore();
    process.exit(130);
  }
}

/** `youyou` (and `youyou resume ID`, `youyou --continue`) on a terminal. */
export async function runInteractive(options: {
  settings: CliSettings;
  resume: string | undefined;
  latest: boolean;
  io: CliIo;
  color: boolean;
}): Promise<number> {
  const { settings, io } = options;
  const terminal = new Terminal({
    input: io.stdin,
    output: io.stdout,
    history: loadHistory(settings.historyPath),
  });
  let chat: Chat | undefined;
  // A claim on the session that could not be renewed is said on stderr, not on the console of a library.
  const onBackgroundError = (error: AgentError) => io.warn(plainMessage(error.message));
  const runtime = await setUpRuntime({
    settings,
    env: io.env,
    approval: settings.yes
      ? { type: 'allow_all' }
      : {
          type: 'ask',
          ask: (request, signal) =>
            chat === undefined ? Promise.resolve({ type: 'deny' }) : chat.ask(request, signal),
        },
    warn: io.warn,
    notice: (text) => io.stderr.write(`${text}\n`),
    onBackgroundError,
    openStorage: () => openHomeStorage({ settings, onBackgroundError }),
  });
  try {
    chat = new Chat({ runtime, terminal, settings, color: options.color });
    let resumed: { session: Session; messageCount: number } | undefined;
    if (options.resume !== undefined || options.latest) {
      const session = await openSession({
        runtime,
        resume: options.resume,
        latest: options.latest,
        workspace: settings.cwd,
      });
      resumed = { session, messageCount: await storedMessageCount(runtime.sessions, session.id) };
    }
    chat.start(resumed);
    return await chat.loop();
  } finally {
    saveHistory(settings.historyPath, terminal.history);
    terminal.restore();
    await runtime.close();
  }
}
