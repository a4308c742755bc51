import { randomUUID } from 'node:crypto';

/** What a value of an accepted question may be. */
export type ElicitationValue = string | number | boolean;

/** A client's answer to a held question: accept with values by field name, decline, or cancel. */
export type HeldElicitationAnswer =
  | { action: 'accept'; content: Record<string, ElicitationValue> }
  | { action: 'decline' }
  | { action: 'cancel' };

/** A held question as `GET /sessions/:id/elicitations` shows it. */
export interface HeldElicitationView {
  id: string;
  /** Who asks: the MCP server's name. */
  server: string;
  /** The server's question (its own text: a client escapes it before showing it). */
  message: string;
  /** The form's fields, as @youyou/mcp describes them (`name`, `title`, `type`, `required`, …). */
  fields: readonly unknown[];
  /** When the question is declined unanswered (ms since the epoch). */
  expiresAt: number;
}

/** What `HeldElicitations.hold` takes. */
export interface HoldElicitationOptions {
  sessionId: string;
  server: string;
  message: string;
  fields: readonly unknown[];
  /** Aborts when the asker withdraws the question (the server cancelled it, the call ended): it is cancelled. */
  signal: AbortSignal;
  /** Why accepted values do not fit the form (the answer is then refused with 400), or undefined. */
  problemWith?: (content: Record<string, ElicitationValue>) => string | undefined;
  /** The turn whose tool call asks, when the asker knows it (else the session's running turn is assumed). */
  turnId?: string;
}

/** Why a held question stopped waiting: a client answered, its window passed, its asker withdrew it, or the server stopped. */
export type ElicitationSettledReason = 'answered' | 'expired' | 'withdrawn' | 'closed';

/** A question that began or stopped waiting, as `HeldElicitations.onChange` listeners get it. */
export type HeldElicitationChange =
  | { kind: 'held'; sessionId: string; turnId: string | undefined; view: HeldElicitationView }
  | {
      kind: 'settled';
      sessionId: string;
      turnId: string | undefined;
      id: string;
      reason: ElicitationSettledReason;
      /** What the asking MCP server was answered. */
      action: HeldElicitationAnswer['action'];
    };

type ChangeListener = (change: HeldElicitationChange) => void;

interface Held {
  view: HeldElicitationView;
  sessionId: string;
  problemWith: HoldElicitationOptions['problemWith'];
  settle: (answer: HeldElicitationAnswer, reason: ElicitationSettledReason) => void;
}

/** What answering a held question came to. */
export type AnswerOutcome = 'answered' | 'not_found' | { problem: string };

/**
 * Questions of MCP servers (elicitation) held for a session's client, as approvals are: the tool call that
 * asked waits while a client lists them (`GET /sessions/:id/elicitations`) and answers one (`POST
 * /sessions/:id/elicitations/:elicitationId`). A question nobody answers within `windowMs` is declined.
 */
export class HeldElicitations {
  readonly #windowMs: number;
  readonly #held = new Map<string, Held>();
  readonly #listeners = new Set<ChangeListener>();

  constructor(options: { windowMs: number }) {
    this.#windowMs = options.windowMs;
  }

  /** Holds one question until a client answers it, the window passes (decline) or its signal aborts (cancel). */
  hold(options: HoldElicitationOptions): Promise<HeldElicitationAnswer> {
    if (options.signal.aborted) return Promise.resolve({ action: 'cancel' });
    const id = randomUUID();
    const { sessionId, turnId } = options;
    return new Promise<HeldElicitationAnswer>((resolve) => {
      const settle = (answer: HeldElicitationAnswer, reason: ElicitationSettledReason): void => {
        if (!this.#held.delete(id)) return;
        clearTimeout(timer);
        options.signal.removeEventListener('abort', onAbort);
        this.#announce({ kind: 'settled', sessionId, turnId, id, reason, action: answer.action });
        resolve(answer);
      };
      const onAbort = (): void => settle({ action: 'cancel' }, 'withdrawn');
      const timer = setTimeout(() => settle({ action: 'decline' }, 'expired'), this.#windowMs);
      timer.unref();
      options.signal.addEventListener('abort', onAbort);
      const view: HeldElicitationView = {
        id,
        server: options.server,
        message: options.message,
        fields: options.fields,
        expiresAt: Date.now() + this.#windowMs,
      };
      this.#held.set(id, { sessionId, problemWith: options.problemWith, settle, view });
      this.#announce({ kind: 'held', sessionId, turnId, view });
    });
  }

  /**
   * Calls `listener` whenever a question begins waiting (`held`) or stops (`settled`), in that order per
   * question; answers how to stop. The server announces both on the session's event stream this way.
   */
  onChange(listener: ChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #announce(change: HeldElicitationChange): void {
    for (const listener of this.#listeners) {
      try {
        listener(change);
      } catch {
        // A listener's failure must not keep the question from being held or its asker from its answer.
      }
    }
  }

  /** The questions a session's calls wait on, oldest first. */
  pending(sessionId: string): HeldElicitationView[] {
    return [...this.#held.values()].filter((held) => held.sessionId === sessionId).map((held) => held.view);
  }

  /** Answers one question of the session; values that do not fit its form are refused and it stays held. */
  answer(sessionId: string, id: string, answer: HeldElicitationAnswer): AnswerOutcome {
    const held = this.#held.get(id);
    if (held === undefined || held.sessionId !== sessionId) return 'not_found';
    if (answer.action === 'accept') {
      const problem = held.problemWith?.(answer.content);
      if (problem !== undefined) return { problem };
    }
    held.settle(answer, 'answered');
    return 'answered';
  }

  /** Declines every held question (the server is stopping). */
  close(): void {
    for (const held of [...this.#held.values()]) held.settle({ action: 'decline' }, 'closed');
  }
}
