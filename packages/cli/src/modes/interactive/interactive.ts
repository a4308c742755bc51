import type { AgentError, Session } from '@youyou/agent';
import { createStyles, plainMessage, type Styles } from '../../chat/format.js';
import { loadHistory, type PromptResult, saveHistory, Terminal } from '../../chat/terminal.js';
import type { CliSettings } from '../../config/config.js';
import { checkpointStoreOf } from '../../runtime/checkpoints.js';
import type { CliIo } from '../../runtime/cli-io.js';
import { type CliRuntime, openHomeStorage, setUpRuntime } from '../../runtime/setup.js';
import { openSession } from '../../sessions/open-session.js';
import { storedMessageCount } from '../../sessions/session-table.js';
import { resolveSessionId } from '../../sessions/workspace-sessions.js';
import { neutralize } from '../../text/terminal-text.js';
import { bannerText, resumedText } from './banner.js';
import { chatCommandContext } from './chat-command-context.js';
import { type McpLogIn, offerMcpLogins } from './mcp-login-offer.js';
import { MCP_PROMPT_COMMAND } from './mcp-prompts.js';
import { PromptLineInput } from './prompt-line-input.js';
import { type ChatCommandContext, COMMAND, runSlashCommand } from './slash-commands.js';
import { TurnRunner } from './turn-runner.js';

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
  readonly #runner: TurnRunner;
  readonly #input: PromptLineInput;
  /** Set when the resumed session's last turn was cut by a crash: the next prompt offers to continue it. */
  #offerContinue = false;
  /** Set by /exit: the loop ends after the command. */
  #leaving = false;

  constructor(options: { runtime: CliRuntime; terminal: Terminal; settings: CliSettings; color: boolean }) {
    this.#runtime = options.runtime;
    this.#terminal = options.terminal;
    this.#settings = options.settings;
    this.#color = options.color;
    this.#styles = createStyles(options.color);
    this.#runner = new TurnRunner({ ...options, styles: this.#styles });
    this.#input = new PromptLineInput({
      runtime: options.runtime,
      settings: options.settings,
      styles: this.#styles,
      runner: this.#runner,
      write: (text) => this.#write(text),
    });
  }

  /** The turn runner, whose approval and MCP questions the runtime's callbacks reach. */
  get runner(): TurnRunner {
    return this.#runner;
  }

  #write(text: string): void {
    this.#terminal.output.write(text);
  }

  /**
   * Prints the banner and, for a resumed session (with its stored message count), where it stood; for a fork
   * (`resume ID --fork`), which session it was forked from.
   */
  start(resumed: { session: Session; messageCount: number; forkedFrom?: string } | undefined): void {
    this.#write(bannerText({ runtime: this.#runtime, cwd: this.#settings.cwd, styles: this.#styles }));
    if (resumed !== undefined) this.#showResumed(resumed.session, resumed.messageCount);
    if (resumed?.forkedFrom !== undefined) {
      this.#write(
        this.#styles.dim(
          `Forked: this is session ${resumed.session.id}; ${neutralize(resumed.forkedFrom)} stays as it was.\n`,
        ),
      );
    }
  }

  /** `messageCount` is the stored count that `sessions` shows too (the context may hold more or fewer). */
  #showResumed(session: Session, messageCount: number): void {
    this.#runner.session = session;
    this.#write(resumedText({ session, messageCount, styles: this.#styles }));
    const cut = session.interruptedTurn();
    this.#offerContinue = cut !== undefined;
    if (cut !== undefined) {
      const unsure = cut.unfinishedCalls.filter((call) => call.mayHaveRun).length;
      this.#write(
        this.#styles.yellow(
          `The last turn was cut before it ended (${cut.unfinishedCalls.length} tool call(s) without a result${unsure > 0 ? `, ${unsure} of which may have run: each asks before it runs again` : ''}).\n`,
        ),
      );
    }
  }
  /** Runs until the user leaves; resolves with the exit code. */
  async loop(): Promise<number> {
    if (this.#offerContinue) {
      this.#offerContinue = false;
      const answer = await this.#terminal.readLine('Continue the cut turn? [y/N] ', '');
      if (answer.type === 'eof') return this.#leave();
      if (answer.type === 'line' && /^\s*y(es)?\s*$/i.test(answer.text)) {
        // The CLI's approver decides the calls that may have run, as any mutating call: deny rules refuse,
        // allow rules and --yes let them run again, anything else is asked.
        const outcome = await this.#runner.run('', (session) => session.continue(this.#runtime.turnOptions));
        if (outcome === 'exit') return this.#leave();
      }
    }
    for (;;) {
      const prompt = this.#color ? '\x1b[36m›\x1b[39m ' : '› ';
      const queued = this.#runner.typeAhead.queued.shift();
      if (queued !== undefined) this.#write(`${prompt}${neutralize(queued)}\n`);
      let result: PromptResult;
      if (queued !== undefined) result = { type: 'line', text: queued };
      else {
        // Text typed during the last turn without Enter is already on the new prompt line.
        result = await this.#terminal.readLine(prompt, this.#runner.typeAhead.takeTyped(), {
          completer: (word) => this.#input.complete(word),
        });
      }
      if (result.type === 'eof') return this.#leave();
      if (result.type === 'interrupt') {
        if (result.hadText) continue;
        if (this.#runner.interruptedOnce) return this.#leave();
        this.#runner.interruptedOnce = true;
        this.#write(this.#styles.dim('(Ctrl-C again or Ctrl-D to exit)\n'));
        continue;
      }
      this.#runner.interruptedOnce = false;
      const text = result.text.trim();
      if (text === '') continue;
      if (text.startsWith('!') && text.length > 1) {
        await this.#input.bang(text.slice(1).trim());
        continue;
      }
      const promptCommand = MCP_PROMPT_COMMAND.exec(text);
      if (promptCommand !== null) {
        if ((await this.#input.promptTurn(promptCommand)) === 'exit') return this.#leave();
        continue;
      }
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
      const outcome = await this.#runner.run(await this.#input.messageOf(result.text));
      if (outcome === 'exit') return this.#leave();
    }
  }

  /** What the slash commands see of this chat. */
  #commandContext(): ChatCommandContext {
    return chatCommandContext({
      runtime: this.#runtime,
      settings: this.#settings,
      terminal: this.#terminal,
      styles: this.#styles,
      color: this.#color,
      runner: this.#runner,
      showResumed: (session, messageCount) => this.#showResumed(session, messageCount),
      leave: () => {
        this.#leaving = true;
      },
    });
  }

  /** Leaves: the session is closed (memories extracted), then everything else. */
  async #leave(): Promise<number> {
    await this.#runner.closeSession();
    return 0;
  }
}

/** `youyou` (and `youyou resume ID`, `youyou --continue`) on a terminal. */
export async function runInteractive(options: {
  settings: CliSettings;
  resume: string | undefined;
  latest: boolean;
  /** With `resume`: continue in a fork of that session. */
  fork?: boolean;
  io: CliIo;
  color: boolean;
  /** Runs the login of `youyou mcp login NAME`; `signal` abandons it. */
  logInToMcpServer: McpLogIn;
}): Promise<number> {
  const { settings, io } = options;
  const terminal = new Terminal({
    input: io.stdin,
    output: io.stdout,
    history: loadHistory(settings.historyPath),
  });
  terminal.enableBracketedPaste();
  // A crash must not leave the shell with bracketed paste on (its pastes would show ESC[200~).
  const onExit = (): void => terminal.restore();
  process.once('exit', onExit);
  // SIGTERM ends youyou as before (no 'exit' event comes without this), and gives the terminal back first.
  const onTerminate = (): void => {
    terminal.restore();
    process.exit(143);
  };
  process.once('SIGTERM', onTerminate);
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
            chat === undefined ? Promise.resolve({ type: 'deny' }) : chat.runner.ask(request, signal),
        },
    onElicitation: (request) =>
      chat === undefined ? Promise.resolve({ action: 'decline' }) : chat.runner.elicit(request),
    warn: io.warn,
    notice: (text) => io.stderr.write(`${text}\n`),
    onBackgroundError,
    openStorage: () => openHomeStorage({ settings, onBackgroundError }),
    checkpoints: checkpointStoreOf(settings),
  });
  try {
    chat = new Chat({ runtime, terminal, settings, color: options.color });
    let resumed: { session: Session; messageCount: number; forkedFrom?: string } | undefined;
    if (options.resume !== undefined || options.latest) {
      const session = await openSession({
        runtime,
        resume: options.resume,
        latest: options.latest,
        workspace: settings.cwd,
        fork: options.fork === true,
      });
      resumed = { session, messageCount: await storedMessageCount(runtime.sessions, session.id) };
      if (options.fork === true && options.resume !== undefined) {
        resumed.forkedFrom = await resolveSessionId(runtime.sessions, options.resume);
      }
    }
    chat.start(resumed);
    await offerMcpLogins({ runtime, terminal, io, logIn: options.logInToMcpServer });
    return await chat.loop();
  } finally {
    saveHistory(settings.historyPath, terminal.history);
    terminal.restore();
    process.off('exit', onExit);
    process.off('SIGTERM', onTerminate);
    await runtime.close();
  }
}
