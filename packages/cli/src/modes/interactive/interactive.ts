import type { AgentError, AgentEventPayload, RunningTurn, Session, ToolOutput } from '@youyou/agent';
import type { ElicitationAnswer, ElicitationRequest } from '@youyou/mcp';
import type { ApprovalAnswer, ApprovalRequest } from '../../approval/policy.js';
import type { ApprovalRule } from '../../approval/rules.js';
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
import { checkpointStoreOf } from '../../runtime/checkpoints.js';
import type { CliIo } from '../../runtime/cli-io.js';
import { type CliRuntime, openHomeStorage, setUpRuntime } from '../../runtime/setup.js';
import { newWorkspaceSession, openSession } from '../../sessions/open-session.js';
import { storedMessageCount } from '../../sessions/session-table.js';
import { resolveSessionId } from '../../sessions/workspace-sessions.js';
import { neutralize } from '../../text/terminal-text.js';
import { ApprovalAsker } from './approval-asker.js';
import { bangContextBlock, bangScreenText, runBangCommand } from './bang-command.js';
import { bannerText, resumedText } from './banner.js';
import { ElicitationAsker } from './elicitation-asker.js';
import { MCP_PROMPT_COMMAND, promptMessage } from './mcp-prompts.js';
import { attachMentions, completeMention, type MentionScope, mentionNotesText } from './mentions.js';
import { type ChatCommandContext, COMMAND, runSlashCommand } from './slash-commands.js';
import { TypeAhead } from './type-ahead.js';

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
  readonly #asker: ApprovalAsker;
  readonly #elicitations: ElicitationAsker;
  /** The key handler of the turn being shown; an MCP server's question hands the keys back to it. */
  #turnKeys: ((key: Key) => void) | undefined;
  readonly #typeAhead: TypeAhead;
  #view: TurnView | undefined;
  /** Set when the resumed session's last turn was cut by a crash: the next prompt offers to continue it. */
  #offerContinue = false;
  /** The last turn's final answer, for /init. */
  #answer = { text: '', completed: false };
  /** The rules the user chose with "always" in this run. */
  readonly #alwaysRules: ApprovalRule[] = [];
  /** `!command` blocks waiting for the next message. */
  readonly #commandOutputs: string[] = [];
  /** Set by /exit: the loop ends after the command. */
  #leaving = false;

  constructor(options: { runtime: CliRuntime; terminal: Terminal; settings: CliSettings; color: boolean }) {
    this.#runtime = options.runtime;
    this.#terminal = options.terminal;
    this.#settings = options.settings;
    this.#color = options.color;
    this.#styles = createStyles(options.color);
    this.#typeAhead = new TypeAhead(this.#styles);
    this.#asker = new ApprovalAsker({
      terminal: options.terminal,
      workspace: options.settings.cwd,
      color: options.color,
      quietMs: options.settings.approvalQuietMs,
      write: (text) => this.#write(text),
      beforeAsking: () => this.#view?.pause(),
    });
    this.#elicitations = new ElicitationAsker({
      terminal: options.terminal,
      styles: this.#styles,
      write: (text) => this.#write(text),
      inTurn: (ask) => this.#asker.inTurn(ask),
      beforeAsking: () => this.#view?.holdForQuestion(),
      afterAsking: () => {
        if (this.#turnKeys !== undefined) this.#terminal.startKeys(this.#turnKeys);
      },
    });
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
    this.#session = session;
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
        const outcome = await this.#turn('', (session) => session.continue(this.#runtime.turnOptions));
        if (outcome === 'exit') return this.#leave();
      }
    }
    for (;;) {
      const prompt = this.#color ? '\x1b[36m›\x1b[39m ' : '› ';
      const queued = this.#typeAhead.queued.shift();
      if (queued !== undefined) this.#write(`${prompt}${neutralize(queued)}\n`);
      let result: PromptResult;
      if (queued !== undefined) result = { type: 'line', text: queued };
      else {
        // Text typed during the last turn without Enter is already on the new prompt line.
        result = await this.#terminal.readLine(prompt, this.#typeAhead.takeTyped(), {
          completer: (word) => completeMention(this.#mentionScope(), word),
        });
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
      if (text.startsWith('!') && text.length > 1) {
        await this.#bang(text.slice(1).trim());
        continue;
      }
      const promptCommand = MCP_PROMPT_COMMAND.exec(text);
      if (promptCommand !== null) {
        if ((await this.#promptTurn(promptCommand)) === 'exit') return this.#leave();
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
      const outcome = await this.#turn(await this.#messageOf(result.text));
      if (outcome === 'exit') return this.#leave();
    }
  }

  /** What the model gets for a typed message: the `!command` outputs kept for it, then the text, then @files. */
  async #messageOf(text: string): Promise<string> {
    const attached = await attachMentions(this.#mentionScope(), text);
    this.#write(mentionNotesText(attached.notes, this.#styles));
    const commands = this.#commandOutputs.splice(0);
    return commands.length === 0 ? attached.text : `${commands.join('\n\n')}\n\n${attached.text}`;
  }

  #mentionScope(): MentionScope {
    return {
      root: this.#settings.cwd,
      hiddenPaths: this.#settings.sandbox.hiddenPaths,
      rules: this.#settings.approvalRules,
      tools: this.#runtime.tools,
    };
  }

  /** `!command`: runs it in the shell's sandbox, shows its output and keeps it for the next message. */
  async #bang(command: string): Promise<void> {
    const controller = new AbortController();
    let output: ToolOutput = { content: '', isError: false };
    await this.#withStatus(
      `running ${command}`,
      async () => {
        output = await runBangCommand({
          tools: this.#runtime.tools,
          command,
          sessionId: this.#session?.id,
          signal: controller.signal,
        });
      },
      () => controller.abort(),
    );
    this.#write(bangScreenText(output, this.#styles));
    this.#commandOutputs.push(bangContextBlock(command, output));
  }

  /** `/server:prompt …`: a turn whose user message is the prompt as its server fills it in. */
  async #promptTurn(command: RegExpExecArray): Promise<'done' | 'exit'> {
    const message = await promptMessage({
      servers: this.#runtime.mcpServers,
      server: command[1] ?? '',
      prompt: command[2] ?? '',
      argumentLine: command[3] ?? '',
    });
    if ('problem' in message) {
      this.#write(this.#styles.red(`${message.problem}\n`));
      return 'done';
    }
    return this.#turn('', (session) => session.sendMessage(message, this.#runtime.turnOptions));
  }

  /** Closes the current session (SessionEnd, memory extraction) with a status line while it runs. */
  async #closeSession(): Promise<void> {
    const session = this.#session;
    if (session === undefined) return;
    this.#session = undefined;
    await this.#withStatus('saving the session', () => session.close());
  }

  /** Runs `work` under a status line; Ctrl-C meanwhile calls `onInterrupt`, or leaves the program at once. */
  async #withStatus(status: string, work: () => Promise<void>, onInterrupt?: () => void): Promise<void> {
    const view = this.#newView();
    view.status(status);
    this.#terminal.startKeys((key) => {
      if (!isInterrupt(key)) return;
      if (onInterrupt === undefined) this.#hardExit();
      onInterrupt();
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
      workspace: this.#settings.cwd,
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
      settings: this.#settings,
      confirm: async (question) => {
        const answer = await this.#terminal.readLine(question);
        return answer.type === 'line' && /^\s*y(es)?\s*$/i.test(answer.text);
      },
      runTurn: async (text) => {
        this.#answer = { text: '', completed: false };
        if ((await this.#turn(text)) === 'exit') this.#leaving = true;
        return this.#answer.completed ? this.#answer.text : undefined;
      },
      alwaysRules: () => this.#alwaysRules,
      ask: async (prompt) => {
        const answer = await this.#terminal.readLine(prompt, '');
        return answer.type === 'line' ? answer.text : undefined;
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

  /**
   * Runs one turn (a message's, or what `start` begins instead); 'exit' when the user pressed Ctrl-C a second
   * time while it was being cancelled.
   */
  async #turn(text: string, start?: (session: Session) => Promise<RunningTurn>): Promise<'done' | 'exit'> {
    let turn: RunningTurn;
    // A server that changed its tools during the last turn: the new list is what this turn offers.
    await this.#runtime.mcpToolsSettled();
    // Loaded before the turn starts: once it has, nothing may come between it and reading keys raw, or a
    // Ctrl-C typed early would reach the process group as SIGINT (the MCP servers among it) instead.
    let markdown = await this.#markdownStream();
    try {
      this.#session ??= await newWorkspaceSession(this.#runtime, this.#settings.cwd);
      turn = await (start === undefined
        ? this.#session.sendMessage(text, this.#runtime.turnOptions)
        : start(this.#session));
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
    this.#turnKeys = (key) => {
      const question = this.#asker.current;
      // A paste is text for the next message: it never answers a question nor cancels the turn.
      if (key.pasted === true) {
        if (question === undefined) this.#typeAhead.key(key, view, this.#session);
        return;
      }
      if (question !== undefined) {
        question.key(key, () => {
          cancelled = true;
          this.#interruptedOnce = true;
          turn.cancel();
        });
        return;
      }
      if (!isInterrupt(key)) {
        this.#typeAhead.key(key, view, this.#session);
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
    };
    this.#terminal.startKeys(this.#turnKeys);
    view.status('thinking');
    try {
      const iterator = turn[Symbol.asyncIterator]();
      for (;;) {
        const next = await Promise.race([iterator.next(), stopped.then(() => undefined)]);
        if (next === undefined || next.done === true) break;
        // An MCP server's question is on screen: the event is drawn once it is answered.
        const question = this.#elicitations.onScreen;
        if (question !== undefined) await question;
        view.handle(next.value);
        this.#noteAnswer(next.value.payload);
      }
    } finally {
      view.close();
      this.#view = undefined;
      this.#turnKeys = undefined;
      this.#terminal.stopKeys();
    }
    if (!cancelled) this.#interruptedOnce = false;
    return exit ? 'exit' : 'done';
  }

  /** Keeps the text of the turn's final answer (what follows its last tool call) and whether it completed. */
  #noteAnswer(payload: AgentEventPayload): void {
    if (payload.type === 'text_delta') this.#answer.text += payload.text;
    else if (payload.type === 'tool_call_start' || payload.type === 'output_repair') this.#answer.text = '';
    else if (payload.type === 'turn_complete') this.#answer.completed = true;
  }

  /** The approval question for a mutating tool; called from the turn's approver. */
  async ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    const answer = await this.#asker.ask(request, signal);
    // The gate adds the rule for the rest of the run; /permissions shows it.
    if (answer.type === 'always') this.#alwaysRules.push(answer.rule);
    return answer;
  }

  /**
   * An MCP server's question (elicitation). It is asked only while a turn runs (a tool of the server asks
   * it); at the prompt, where the line being typed has the keys, it is declined.
   */
  elicit(request: ElicitationRequest): Promise<ElicitationAnswer> {
    if (this.#turnKeys === undefined) return Promise.resolve({ action: 'decline' });
    return this.#elicitations.ask(request);
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
  /** With `resume`: continue in a fork of that session. */
  fork?: boolean;
  io: CliIo;
  color: boolean;
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
            chat === undefined ? Promise.resolve({ type: 'deny' }) : chat.ask(request, signal),
        },
    onElicitation: (request) =>
      chat === undefined ? Promise.resolve({ action: 'decline' }) : chat.elicit(request),
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
    return await chat.loop();
  } finally {
    saveHistory(settings.historyPath, terminal.history);
    terminal.restore();
    process.off('exit', onExit);
    process.off('SIGTERM', onTerminate);
    await runtime.close();
  }
}
