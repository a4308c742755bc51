import type { AgentEvent } from './event.js';
import { keepShape } from './shapes.js';
import type { BatchCancellation, CancelWatcher } from './tool-dispatch.js';

/** How a turn ended. */
export type TurnStatus = 'completed' | 'cancelled' | 'failed';

/**
 * An unbounded single-reader queue of events: the producer never waits for the reader (SPEC §5.17),
 * and a reader that stops early or never reads changes nothing in the turn.
 */
export class EventChannel {
  private buffer: AgentEvent[] = [];
  private head = 0;
  private closed = false;
  private waiting: ((result: IteratorResult<AgentEvent>) => void) | undefined;

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
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
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
  readonly done: Promise<TurnStatus>;
  private readonly channel: EventChannel;
  private readonly cancellation: TurnCancellation;

  /** Made by `Session.sendMessage`; not meant to be constructed by callers. */
  constructor(options: {
    turnId: string;
    channel: EventChannel;
    cancellation: TurnCancellation;
    done: Promise<TurnStatus>;
  }) {
    this.turnId = options.turnId;
    this.channel = options.channel;
    this.cancellation = options.cancellation;
    this.done = options.done;
  }

  /** Asks the turn to stop; it ends with `turn_cancelled`. Harmless after the turn has ended. */
  cancel(): void {
    this.cancellation.cancel();
  }

  /** The event stream (the same one `for await (const e of turn)` reads). */
  events(): AsyncIterable<AgentEvent> {
    return this;
  }

  [Symbol.asyncIterator](): AsyncIterator<AgentEvent> {
    return new TurnEventIterator(this.channel);
  }
}

/**
 * The iterator of a RunningTurn's events. A class, not an object with a `next` closure: the reader's loop calls
 * `next` once per event, and a closure made per turn is a new call target for V8 every turn.
 */
class TurnEventIterator implements AsyncIterator<AgentEvent> {
  readonly #channel: EventChannel;

  constructor(channel: EventChannel) {
    this.#channel = channel;
  }

  next(): Promise<IteratorResult<AgentEvent>> {
    return this.#channel.next();
  }
}

/**
 * A turn's cancellation: the AbortSignal its provider calls and tools see, and the same fact as a plain field,
 * `aborted`, for the checks the turn loop makes between every streamed event and every tool call
 * (`AbortSignal.aborted` is a getter with a brand check, a measurable cost at that rate). Every cancel goes
 * through `cancel()`, which sets the field before the signal fires, so both say the same at every moment and
 * nothing needs to listen on the signal.
 */
export class TurnCancellation implements BatchCancellation {
  aborted = false;
  readonly #controller = new AbortController();
  /** The running tool batches, told of a cancel after the signal fired (see BatchCancellation). */
  readonly #watchers: CancelWatcher[] = [];

  /** The signal handed to providers, tools and hooks. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Cancels the turn; later calls change nothing. */
  cancel(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.#controller.abort();
    for (const watcher of this.#watchers.splice(0)) watcher.turnCancelled();
  }

  /** `watcher.turnCancelled()` runs once on cancel, unless unwatched before. */
  watch(watcher: CancelWatcher): void {
    this.#watchers.push(watcher);
  }

  /** Stops telling `watcher`; a watcher not watching is ignored. */
  unwatch(watcher: CancelWatcher): void {
    const index = this.#watchers.indexOf(watcher);
    if (index !== -1) this.#watchers.splice(index, 1);
  }
}

keepShape(new EventChannel());
keepShape(
  new RunningTurn({
    turnId: 'exemplar',
    channel: new EventChannel(),
    cancellation: new TurnCancellation(),
    done: Promise.resolve('completed'),
  }),
);
keepShape(new TurnEventIterator(new EventChannel()));
// Its signal too: Node makes an AbortController's signal on first read, and the signal's hidden classes
// (an EventTarget's) would otherwise go with the last turn's.
const idleCancellation = new TurnCancellation();
// With a listener on it, which keeps the hidden class of Node's listener records too (a tool batch listens on
// the turn's signal while its tools run).
idleCancellation.signal.addEventListener('abort', () => undefined);
keepShape(idleCancellation.signal);
keepShape(idleCancellation);
