import type { AgentEvent } from '../kernel/event.js';
import type { UsageTotals } from '../kernel/types.js';

/** How a turn ended. */
export type TurnStatus = 'completed' | 'cancelled' | 'failed' | 'suspended';

/**
 * What `RunningTurn.done` settles with: how the turn ended, the usage of its model calls and, for a completed
 * structured-output turn, its parsed answer.
 */
export interface TurnResult {
  status: TurnStatus;
  /** The sum of the turn's `usage` events (a cancelled turn's calls and its sub-agents' calls included). */
  usage: UsageTotals;
  /** The parsed answer; present only when the turn asked for structured output and completed with a valid one. */
  output?: unknown;
}

/**
 * An unbounded single-reader queue of events: the producer never waits for the reader (SPEC §5.17),
 * and a reader that stops early or never reads changes nothing in the turn.
 */
export class EventChannel {
  private buffer: AgentEvent[] = [];
  private head = 0;
  private closed = false;
  private waiting: ((result: IteratorResult<AgentEvent>) => void) | undefined;
  /** The executor of the promise a reader waits on: made once per channel, not once per wait. */
  private readonly wait = (resolve: (result: IteratorResult<AgentEvent>) => void): void => {
    this.waiting = resolve;
  };

  /** Adds an event; ignored after close. */
  push(event: AgentEvent): void {
    if (this.closed) return;
    const waiting = this.waiting;
    if (waiting !== undefined) {
      this.waiting = undefined;
      waiting({ value: event, done: false });
      return;
    }
    this.buffer.push(event);
  }

  /** Ends the stream once the buffered events are read. */
  close(): void {
    this.closed = true;
    const waiting = this.waiting;
    if (waiting !== undefined) {
      this.waiting = undefined;
      waiting({ value: undefined, done: true });
    }
  }

  /** The next event, or done once the channel is closed and drained. */
  next(): Promise<IteratorResult<AgentEvent>> {
    if (this.head < this.buffer.length) {
      const event = this.buffer[this.head] as AgentEvent;
      this.head += 1;
      if (this.head === this.buffer.length) {
        this.buffer = [];
        this.head = 0;
      } else if (this.head >= 1024 && this.head * 2 >= this.buffer.length) {
        // Drop the read part now and then, so a long stream read slowly does not keep it all.
        this.buffer = this.buffer.slice(this.head);
        this.head = 0;
      }
      return Promise.resolve({ value: event, done: false });
    }
    if (this.closed) return Promise.resolve({ value: undefined, done: true });
    return new Promise(this.wait);
  }
}

/**
 * The handle of one running turn: its events, in order, and `cancel()`. It holds no reference to the
 * Session, and dropping it does not stop the turn: the turn runs to its end and is persisted.
 * Iterating it twice continues where the first reader stopped; there is one stream of events.
 */
export class RunningTurn implements AsyncIterable<AgentEvent> {
  /** The id of this turn, as in its events' `turnId`. */
  readonly turnId: string;
  /** Settles when the turn has ended and everything it produced is persisted. Never rejects. */
  readonly done: Promise<TurnResult>;
  private readonly channel: EventChannel;
  private readonly controller: AbortController;

  /** Made by `Session.sendMessage`; not meant to be constructed by callers. */
  constructor(options: {
    turnId: string;
    channel: EventChannel;
    /** Aborted by `cancel()`: its signal is the turn's. */
    controller: AbortController;
    done: Promise<TurnResult>;
  }) {
    this.turnId = options.turnId;
    this.channel = options.channel;
    this.controller = options.controller;
    this.done = options.done;
  }

  /** Asks the turn to stop; it ends with `turn_cancelled`. Harmless after the turn has ended. */
  cancel(): void {
    this.controller.abort();
  }

  /** The event stream (the same one `for await (const e of turn)` reads). */
  events(): AsyncIterable<AgentEvent> {
    return this;
  }

  [Symbol.asyncIterator](): AsyncIterator<AgentEvent> {
    const channel = this.channel;
    return { next: () => channel.next() };
  }
}
