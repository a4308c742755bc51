import type { AgentError, Message, RunningTurn, Session } from '@youyou/agent';
import type { ApprovalAnswer, ApprovalRequest } from './approval.js';
import {
  formatSessionTable,
  formatSkills,
  interactiveHelp,
  packageVersion,
  resolveSessionId,
  shortId,
} from './commands.js';
import type { CliSettings } from './config.js';
import { createStyles, plainMessage, type Styles, summarizeArguments, truncate } from './format.js';
import { type CliIo, openSession } from './print-mode.js';
import { TurnView } from './render.js';
import { type CliRuntime, setUpRuntime } from './setup.js';
import { isInterrupt, type Key, loadHistory, saveHistory, Terminal } from './terminal.js';

/** A question waiting for one key. */
interface PendingApproval {
  answer: (value: ApprovalAnswer) => void;
}

const COMMAND = /^\/([a-zA-Z0-9_-]+)(?:\s+(.*))?$/s;

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
  #approval: PendingApproval | undefined;
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

  /** Prints the banner and, for a resumed session, where the conversation stood. */
  start(session: Session | undefined): void {
    const { provider } = this.#runtime;
    const where = provider.baseURL === undefined ? provider.name : provider.baseURL;
    this.#write(
      `${this.#styles.bold('youyou')} ${packageVersion()} ${this.#styles.dim(`· ${provider.modelId} via ${where} · ${this.#settings.cwd}`)}\n`,
    );
    const { sandbox } = this.#runtime;
    this.#write(
      sandbox.mode === 'danger-full-access'
        ? this.#styles.yellow('sandbox: danger-full-access · shell commands run unconfined, with network\n')
        : this.#styles.dim(`sandbox: ${sandbox.mode} · network ${sandbox.network ? 'on' : 'off'}\n`),
    );
    this.#write(this.#styles.dim('/help for commands · Ctrl-C cancels a turn · Ctrl-D exits\n'));
    if (session !== undefined) this.#showResumed(session);
  }

  #showResumed(session: Session): void {
    this.#session = session;
    const messages = session.messages();
    this.#write(this.#styles.dim(`Resumed session ${shortId(session.id)} · ${messages.length} messages\n`));
    const textOf = (message: Message): string =>
      'content' in message && Array.isArray(message.content)
        ? message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('')
        : '';
    const shown = messages.filter(
      (message) => (message.type === 'user' || message.type === 'assistant') && textOf(message).trim() !== '',
    );
    for (const message of shown.slice(-4)) {
      const lines = textOf(message).trim().split('\n');
      const text = lines.length > 6 ? `${lines.slice(0, 6).join('\n')}\n…` : lines.join('\n');
      const prefix = message.type === 'user' ? this.#styles.cyan('› ') : '';
      this.#write(`${prefix}${message.type === 'user' ? text : this.#styles.dim(text)}\n`);
    }
  }

  /** Runs until the user leaves; resolves with the exit code. */
  async loop(): Promise<number> {
    for (;;) {
      const result = await this.#terminal.readLine(this.#color ? '\x1b[36m›\x1b[39m ' : '› ');
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
        (await this.#command(command[1] ?? '', (command[2] ?? '').trim())) !== 'not_a_command'
      ) {
        if (this.#leaving) return this.#leave();
        continue;
      }
      const outcome = await this.#turn(result.text);
      if (outcome === 'exit') return this.#leave();
    }
  }

  /** Handles a slash command; 'not_a_command' for `/name` of a skill, which goes to the model. */
  async #command(name: string, argument: string): Promise<'done' | 'not_a_command'> {
    const runtime = this.#runtime;
    switch (name) {
      case 'help':
        this.#write(interactiveHelp(this.#color));
        return 'done';
      case 'skills':
        this.#write(formatSkills(runtime.skills, this.#color));
        return 'done';
      case 'sessions': {
        const page = await runtime.sessions.listSessions(undefined, 10);
        if (page.sessions.length === 0) this.#write('No saved sessions yet.\n');
        else {
          this.#write(
            formatSessionTable({
              sessions: page.sessions,
              columns: this.#terminal.columns,
              color: this.#color,
              currentId: this.#session?.id,
            }),
          );
        }
        return 'done';
      }
      case 'resume': {
        if (argument === '') {
          this.#write(this.#styles.red('usage: /resume ID (see /sessions)\n'));
          return 'done';
        }
        try {
          const id = await resolveSessionId(runtime.sessions, argument);
          await this.#closeSession();
          this.#showResumed(await runtime.agent.resumeSession(id));
        } catch (error) {
          this.#write(
            this.#styles.red(`${plainMessage(error instanceof Error ? error.message : String(error))}\n`),
          );
        }
        return 'done';
      }
      case 'compact':
        await this.#compact(argument);
        return 'done';
      case 'new':
        await this.#closeSession();
        this.#write(this.#styles.dim('New session.\n'));
        return 'done';
      case 'reasoning':
        this.#showReasoning = !this.#showReasoning;
        this.#write(
          this.#styles.dim(
            this.#showReasoning ? 'Reasoning is shown in full.\n' : 'Reasoning is collapsed to one line.\n',
          ),
        );
        return 'done';
      case 'exit':
      case 'quit':
        this.#leaving = true;
        return 'done';
      default:
        if (runtime.skills.some((skill) => skill.name === name)) return 'not_a_command';
        this.#write(
          this.#styles.red(`unknown command /${name} — /help lists the commands, /skills the skills\n`),
        );
        return 'done';
    }
  }

  /** `/compact [instructions]`: summarises the session's context now, with a status line while it runs. */
  async #compact(instructions: string): Promise<void> {
    const session = this.#session;
    if (session === undefined) {
      this.#write(this.#styles.dim('Nothing to compact yet: no message was sent in this session.\n'));
      return;
    }
    const view = this.#newView();
    view.status('compacting the context');
    this.#terminal.startKeys((key) => {
      if (isInterrupt(key)) this.#hardExit();
    });
    let outcome: string;
    try {
      await session.compact(instructions === '' ? undefined : instructions);
      outcome = this.#styles.dim('Context compacted: the earlier conversation is now a summary.\n');
    } catch (error) {
      outcome = this.#styles.red(`${plainMessage(error instanceof Error ? error.message : String(error))}\n`);
    } finally {
      this.#terminal.stopKeys();
      view.close();
    }
    this.#write(outcome);
  }

  /** Closes the current session (SessionEnd, memory extraction) with a status line while it runs. */
  async #closeSession(): Promise<void> {
    const session = this.#session;
    if (session === undefined) return;
    this.#session = undefined;
    const view = this.#newView();
    view.status('saving the session');
    this.#terminal.startKeys((key) => {
      if (isInterrupt(key)) this.#hardExit();
    });
    try {
      await session.close();
    } finally {
      this.#terminal.stopKeys();
      view.close();
    }
  }

  #newView(): TurnView {
    return new TurnView({
      sinks: { answer: (text) => this.#write(text), activity: (text) => this.#write(text) },
      live: true,
      color: this.#color,
      columns: () => this.#terminal.columns,
      showReasoning: () => this.#showReasoning,
      baseURL: this.#runtime.provider.baseURL,
    });
  }

  /** Runs one turn; 'exit' when the user pressed Ctrl-C a second time while it was being cancelled. */
  async #turn(text: string): Promise<'done' | 'exit'> {
    let turn: RunningTurn;
    try {
      this.#session ??= await this.#runtime.agent.newSession();
      turn = await this.#session.sendMessage(text);
    } catch (error) {
      this.#write(
        this.#styles.red(`${plainMessage(error instanceof Error ? error.message : String(error))}\n`),
      );
      return 'done';
    }
    const view = this.#newView();
    this.#view = view;
    let cancelled = false;
    let exit = false;
    let stop: (() => void) | undefined;
    const stopped = new Promise<void>((resolve) => {
      stop = resolve;
    });
    this.#terminal.startKeys((key) => {
      if (this.#approval !== undefined) {
        this.#answerApproval(key, () => {
          cancelled = true;
          this.#interruptedOnce = true;
          turn.cancel();
        });
        return;
      }
      if (!isInterrupt(key)) return;
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

  /** The approval question for a mutating tool; called from the approval plugin during a turn. */
  ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    const view = this.#view;
    view?.pause();
    const summary = truncate(
      summarizeArguments(request.arguments),
      Math.max(20, this.#terminal.columns - 60),
    );
    this.#write(
      `${this.#styles.yellow('?')} Allow ${this.#styles.bold(request.toolName)} ${summary}?  ${this.#styles.dim('y = yes · a = always for this tool · n = no ›')} `,
    );
    return new Promise<ApprovalAnswer>((resolve) => {
      const answer = (value: ApprovalAnswer): void => {
        if (this.#approval !== pending) return;
        this.#approval = undefined;
        signal.removeEventListener('abort', onAbort);
        const label = value === 'once' ? 'yes' : value === 'always' ? `always ${request.toolName}` : 'no';
        this.#write(`${value === 'deny' ? this.#styles.red(label) : this.#styles.green(label)}\n`);
        resolve(value);
      };
      const pending: PendingApproval = { answer };
      const onAbort = (): void => answer('deny');
      signal.addEventListener('abort', onAbort);
      this.#approval = pending;
    });
  }

  #answerApproval(key: Key, cancelTurn: () => void): void {
    const pending = this.#approval;
    if (pending === undefined) return;
    if (isInterrupt(key)) {
      pending.answer('deny');
      cancelTurn();
      return;
    }
    const name = key.name?.toLowerCase();
    if (name === 'y') pending.answer('once');
    else if (name === 'a') pending.answer('always');
    else if (name === 'n' || name === 'escape') pending.answer('deny');
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
  const runtime = await setUpRuntime({
    settings,
    env: io.env,
    approval: settings.yes
      ? { type: 'allow_all' }
      : {
          type: 'ask',
          ask: (request, signal) =>
            chat === undefined ? Promise.resolve('deny') : chat.ask(request, signal),
        },
    warn: io.warn,
    onBackgroundError: (error: AgentError) => io.warn(plainMessage(error.message)),
  });
  try {
    chat = new Chat({ runtime, terminal, settings, color: options.color });
    const session =
      options.resume !== undefined || options.latest
        ? await openSession({ runtime, resume: options.resume, latest: options.latest })
        : undefined;
    chat.start(session);
    return await chat.loop();
  } finally {
    saveHistory(settings.historyPath, terminal.history);
    terminal.restore();
    await runtime.close();
  }
}
