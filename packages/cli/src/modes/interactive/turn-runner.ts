import type { AgentEventPayload, RunningTurn, Session } from '@youyou/agent';
import type { ElicitationAnswer, ElicitationRequest } from '@youyou/mcp';
import type { ApprovalAnswer, ApprovalRequest } from '../../approval/policy.js';
import type { ApprovalRule } from '../../approval/rules.js';
import { plainMessage, type Styles } from '../../chat/format.js';
import type { MarkdownStream } from '../../chat/markdown.js';
import { loadMarkdownStream } from '../../chat/markdown-load.js';
import { TurnView } from '../../chat/render.js';
import { isInterrupt, type Key, type Terminal } from '../../chat/terminal.js';
import type { CliSettings } from '../../config/config.js';
import type { CliRuntime } from '../../runtime/setup.js';
import { newWorkspaceSession } from '../../sessions/open-session.js';
import { ApprovalAsker } from './approval-asker.js';
import { ElicitationAsker } from './elicitation-asker.js';
import { TypeAhead } from './type-ahead.js';

/** How a turn (or a status line) ended for the chat: 'exit' when the user pressed Ctrl-C a second time. */
export type TurnOutcome = 'done' | 'exit';

/**
 * Runs the chat's turns: owns the current session, draws each turn with a TurnView, handles the keys while it
 * runs (Ctrl-C cancels, typing goes to the type-ahead) and asks the approval and MCP questions of its tools.
 */
export class TurnRunner {
  readonly #runtime: CliRuntime;
  readonly #terminal: Terminal;
  readonly #settings: CliSettings;
  readonly #styles: Styles;
  readonly #color: boolean;
  readonly #asker: ApprovalAsker;
  readonly #elicitations: ElicitationAsker;
  /** Text typed while a turn runs; the prompt takes it next. */
  readonly typeAhead: TypeAhead;
  /** The chat's current session; a turn starts a new one when there is none. */
  session: Session | undefined;
  /** The last thing the user did was Ctrl-C: one more exits. */
  interruptedOnce = false;
  #showReasoning = false;
  /** The key handler of the turn being shown; an MCP server's question hands the keys back to it. */
  #turnKeys: ((key: Key) => void) | undefined;
  #view: TurnView | undefined;
  /** The last turn's final answer, for /init. */
  #answer = { text: '', completed: false };
  /** The rules the user chose with "always" in this run. */
  readonly alwaysRules: ApprovalRule[] = [];

  constructor(options: {
    runtime: CliRuntime;
    terminal: Terminal;
    settings: CliSettings;
    styles: Styles;
    color: boolean;
  }) {
    this.#runtime = options.runtime;
    this.#terminal = options.terminal;
    this.#settings = options.settings;
    this.#styles = options.styles;
    this.#color = options.color;
    this.typeAhead = new TypeAhead(options.styles);
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
      styles: options.styles,
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

  /** Flips whether reasoning is shown; returns the new setting. */
  toggleReasoning(): boolean {
    this.#showReasoning = !this.#showReasoning;
    return this.#showReasoning;
  }

  /** Runs a turn for `text` and returns its final answer when it completed (what /init writes down). */
  async runForAnswer(text: string): Promise<{ outcome: TurnOutcome; answer: string | undefined }> {
    this.#answer = { text: '', completed: false };
    const outcome = await this.run(text);
    return { outcome, answer: this.#answer.completed ? this.#answer.text : undefined };
  }

  /** Closes the current session (SessionEnd, memory extraction) with a status line while it runs. */
  async closeSession(): Promise<void> {
    const session = this.session;
    if (session === undefined) return;
    this.session = undefined;
    await this.withStatus('saving the session', () => session.close());
  }

  /** Runs `work` under a status line; Ctrl-C meanwhile calls `onInterrupt`, or leaves the program at once. */
  async withStatus(status: string, work: () => Promise<void>, onInterrupt?: () => void): Promise<void> {
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
  async run(text: string, start?: (session: Session) => Promise<RunningTurn>): Promise<TurnOutcome> {
    let turn: RunningTurn;
    // A server that changed its tools during the last turn: the new list is what this turn offers.
    await this.#runtime.mcpToolsSettled();
    // Loaded before the turn starts: once it has, nothing may come between it and reading keys raw, or a
    // Ctrl-C typed early would reach the process group as SIGINT (the MCP servers among it) instead.
    let markdown = await this.#markdownStream();
    let session: Session;
    try {
      session = this.session ??= await newWorkspaceSession(this.#runtime, this.#settings.cwd);
      turn = await (start === undefined
        ? session.sendMessage(text, this.#runtime.turnOptions)
        : start(session));
    } catch (error) {
      this.#write(
        this.#styles.red(`${plainMessage(error instanceof Error ? error.message : String(error))}\n`),
      );
      return 'done';
    }
    // Text steered in during a turn that the turn did not take starts the next turn by itself: show it too.
    for (;;) {
      if ((await this.#show(turn, markdown)) === 'exit') return 'exit';
      const next = session.currentTurn;
      if (next === undefined || next.turnId === turn.turnId) return 'done';
      turn = next;
      markdown = await this.#markdownStream();
    }
  }

  /** Shows one turn's events and handles the keys while it runs. */
  async #show(turn: RunningTurn, markdown: MarkdownStream | undefined): Promise<TurnOutcome> {
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
        if (question === undefined) this.typeAhead.key(key, view, this.session);
        return;
      }
      if (question !== undefined) {
        question.key(key, () => {
          cancelled = true;
          this.interruptedOnce = true;
          turn.cancel();
        });
        return;
      }
      if (!isInterrupt(key)) {
        this.typeAhead.key(key, view, this.session);
        return;
      }
      if (cancelled) {
        exit = true;
        stop?.();
        return;
      }
      cancelled = true;
      this.interruptedOnce = true;
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
    if (!cancelled) this.interruptedOnce = false;
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
    if (answer.type === 'always') this.alwaysRules.push(answer.rule);
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

  #hardExit(): never {
    this.#terminal.restore();
    process.exit(130);
  }
}
