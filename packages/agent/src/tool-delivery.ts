import { isThenable } from './settle.js';
import { keepShape } from './shapes.js';
import type { ToolCallOutcome } from './tool-dispatch.js';

const RESOLVED = Promise.resolve();

/**
 * The outcomes of one tool batch on their way to `onResult` (SPEC §5.3, write-ahead in call order): each is
 * handed over in call order, one at a time, after the previous `onResult` settled. The first failure of
 * `onResult` is kept (the batch throws it at its end) and no outcome is handed over after it.
 */
export class OutcomeDelivery {
  readonly #onResult: (outcome: ToolCallOutcome) => unknown;
  readonly #outcomes: (ToolCallOutcome | undefined)[];
  #delivered = 0;
  #failure: { error: unknown } | undefined;
  /** Whether a delivery pass is scheduled or under way (`arrive`). */
  #pumping = false;
  #allDelivered: (() => void) | undefined;
  // Thin arrows over methods, for the reason given in tool-batch.ts.
  readonly #failed = (error: unknown): void => this.#keepFailure(error);
  readonly #pump = (): void => this.#deliverInOrder();

  constructor(onResult: (outcome: ToolCallOutcome) => unknown, count: number) {
    this.#onResult = onResult;
    this.#outcomes = new Array<ToolCallOutcome | undefined>(count);
  }

  /** The first error `onResult` threw or rejected with, if any. */
  get failure(): { error: unknown } | undefined {
    return this.#failure;
  }

  /** Every outcome, in call order; complete once the batch is over. */
  get outcomes(): ToolCallOutcome[] {
    return this.#outcomes as ToolCallOutcome[];
  }

  /** True once every outcome has been handed over (or skipped after a failure). */
  get complete(): boolean {
    return this.#delivered === this.#outcomes.length;
  }

  /**
   * A serial batch's outcome: handed over now (every earlier one already was); a promise only when `onResult`
   * answered with one. Never throws.
   */
  deliverNow(index: number, outcome: ToolCallOutcome): Promise<void> | undefined {
    this.#outcomes[index] = outcome;
    return this.#deliver(outcome);
  }

  /**
   * A concurrent batch's outcome is in: it is handed over a tick later, once every earlier one is. The passes run
   * one at a time, each going on after the previous `onResult` settled.
   */
  arrive(index: number, outcome: ToolCallOutcome): void {
    this.#outcomes[index] = outcome;
    if (this.#pumping) return;
    this.#pumping = true;
    // One reaction for every batch waiting to deliver, through a static method: a per-batch callback run this
    // often is compiled anew after every full collection. A resolved promise's reaction, not queueMicrotask:
    // Node wraps each of those in an async resource.
    if (OutcomeDelivery.#waiting.push(this) === 1) RESOLVED.then(OutcomeDelivery.#deliverWaiting);
  }

  /** Settles once every outcome has been handed over (see `complete`). */
  allDelivered(): Promise<void> {
    if (this.complete) return RESOLVED;
    return new Promise<void>((resolve) => {
      this.#allDelivered = resolve;
    });
  }

  /** The deliveries waiting for the reaction scheduled by `arrive`, in the order they asked. */
  static readonly #waiting: OutcomeDelivery[] = [];

  static #deliverWaiting(this: void): void {
    const waiting = OutcomeDelivery.#waiting.splice(0);
    for (const delivery of waiting) delivery.#deliverInOrder();
  }

  /** Hands over the outcomes that are next in order; goes on after an `onResult` that answered with a promise. */
  #deliverInOrder(): void {
    const outcomes = this.#outcomes;
    for (
      let outcome = outcomes[this.#delivered];
      outcome !== undefined;
      outcome = outcomes[this.#delivered]
    ) {
      const delivered = this.#deliver(outcome);
      if (delivered !== undefined) {
        delivered.then(this.#pump);
        return;
      }
    }
    this.#pumping = false;
    if (this.complete) this.#allDelivered?.();
  }

  /** Hands an outcome to `onResult`; a promise only when `onResult` answered with one. */
  #deliver(outcome: ToolCallOutcome): Promise<void> | undefined {
    this.#delivered++;
    if (this.#failure !== undefined) return undefined;
    try {
      const result: unknown = this.#onResult(outcome);
      if (!isThenable(result)) return undefined;
      return Promise.resolve(result).then(ignore, this.#failed);
    } catch (error) {
      this.#keepFailure(error);
      return undefined;
    }
  }

  #keepFailure(error: unknown): void {
    this.#failure ??= { error };
  }
}

function ignore(): void {}

keepShape(new OutcomeDelivery(ignore, 0));
