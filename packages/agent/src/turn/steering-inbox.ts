import type { ContentBlock } from '../kernel/types.js';

/** The steered messages of one turn, in the order they were given. */
export class SteeringInbox {
  #pending: ContentBlock[][] = [];

  /** Queues a message for the next step boundary. */
  push(content: ContentBlock[]): void {
    this.#pending.push(content);
  }

  /** True when a message waits. */
  get hasPending(): boolean {
    return this.#pending.length > 0;
  }

  /** Takes every waiting message, oldest first. */
  take(): ContentBlock[][] {
    const taken = this.#pending;
    this.#pending = [];
    return taken;
  }
}
