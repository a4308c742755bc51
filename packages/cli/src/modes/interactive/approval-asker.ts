import type { ApprovalAnswer, ApprovalRequest } from '../../approval/policy.js';
import type { ApprovalQuestion } from '../../chat/approval-prompt.js';
import type { Terminal } from '../../chat/terminal.js';

/** Where the questions are drawn and how. */
export interface AskerOptions {
  terminal: Terminal;
  workspace: string;
  color: boolean;
  quietMs: number | undefined;
  write: (text: string) => void;
  /** Called before a question is drawn (the turn's view pauses its status line). */
  beforeAsking: () => void;
}

/**
 * Asks the approval questions of the chat's turns. Calls of one batch may ask at once: one question at a
 * time, in order, each with the keys to itself while it is on screen.
 */
export class ApprovalAsker {
  #current: ApprovalQuestion | undefined;
  /** Settles when the last question asked so far is answered. */
  #questions: Promise<void> = Promise.resolve();
  readonly #options: AskerOptions;

  constructor(options: AskerOptions) {
    this.#options = options;
  }

  /** The question on screen, if any: the keys go to it. */
  get current(): ApprovalQuestion | undefined {
    return this.#current;
  }

  /** Asks about one call once the questions before it are answered; a call aborted meanwhile is denied. */
  ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    return this.inTurn(async () => {
      if (signal.aborted) return { type: 'deny' };
      return await this.#askNow(request, signal);
    });
  }

  /** Runs `ask` once the questions before it are answered, as one more question (an MCP server's, say). */
  async inTurn<T>(ask: () => Promise<T>): Promise<T> {
    const earlier = this.#questions;
    let done: (() => void) | undefined;
    this.#questions = new Promise<void>((resolve) => {
      done = resolve;
    });
    try {
      await earlier;
      return await ask();
    } finally {
      done?.();
    }
  }

  async #askNow(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    // Loaded on the first question: the diff library is not needed to start.
    const { ApprovalQuestion } = await import('../../chat/approval-prompt.js');
    const { terminal } = this.#options;
    this.#options.beforeAsking();
    return new Promise<ApprovalAnswer>((resolve) => {
      const onAbort = (): void => question.abandon();
      const question = new ApprovalQuestion({
        request,
        workspace: this.#options.workspace,
        columns: terminal.columns,
        rows: terminal.rows,
        color: this.#options.color,
        write: this.#options.write,
        flushInput: () => terminal.flushInput(),
        lastKeyAt: () => terminal.lastKeyAt,
        quietMs: this.#options.quietMs,
        resolve: (answer) => {
          if (this.#current === question) this.#current = undefined;
          signal.removeEventListener('abort', onAbort);
          resolve(answer);
        },
      });
      signal.addEventListener('abort', onAbort);
      this.#current = question;
      question.open();
      if (signal.aborted) question.abandon();
    });
  }
}
