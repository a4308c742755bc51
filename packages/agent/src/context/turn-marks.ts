/**
 * Where each turn of a context begins, kept beside the messages so that a rewind can cut the context there. The
 * live context and a replay of the log keep them by the same rule (`note`), so both agree on every turn's place:
 * the first message saved with a turn id opens that turn (its injected system messages come before its input),
 * and the turn is listed once its user message has entered.
 */

import type { ContentBlock, Message } from '../kernel/types.js';

/** One turn of the context: its id, its input, and the index of its first message. */
export interface TurnMark {
  turnId: string;
  input: ContentBlock[];
  start: number;
}

/** The turns of one context, oldest first; indices follow the context through compactions and rewinds. */
export class TurnMarks {
  #marks: TurnMark[] = [];
  /** A turn whose first message entered but whose user message has not yet. */
  #opening: { turnId: string; start: number } | undefined;

  /** The listed turns, oldest first (read-only for callers). */
  get list(): readonly TurnMark[] {
    return this.#marks;
  }

  /** Notes a message entering the context at `index`, with the turn id it was saved with, if any. */
  note(message: Message, index: number, turnId: string | undefined): void {
    if (turnId === undefined) return;
    if (this.#opening?.turnId !== turnId) {
      if (this.#marks.some((mark) => mark.turnId === turnId)) return;
      this.#opening = { turnId, start: index };
    }
    if (message.type !== 'user') return;
    this.#marks.push({ turnId, input: message.content, start: this.#opening.start });
    this.#opening = undefined;
  }

  /**
   * Follows a compaction of `length` messages to a summary and the last `keptCount` of them: a turn whose first
   * message was summarised leaves the list (its start is gone), the others move to their place after the summary.
   */
  compact(length: number, keptCount: number): void {
    const keptStart = Math.max(0, length - Math.max(0, keptCount));
    const moved = (start: number): number => 1 + start - keptStart;
    this.#marks = this.#marks
      .filter((mark) => mark.start >= keptStart)
      .map((mark) => ({ ...mark, start: moved(mark.start) }));
    const opening = this.#opening;
    this.#opening =
      opening === undefined || opening.start < keptStart
        ? undefined
        : { turnId: opening.turnId, start: moved(opening.start) };
  }

  /** Keeps the turns that begin within the first `length` messages (the context was cut to them). */
  truncate(length: number): void {
    this.#marks = this.#marks.filter((mark) => mark.start < length);
    if (this.#opening !== undefined && this.#opening.start >= length) this.#opening = undefined;
  }

  /**
   * Drops the turn `turnId` and every later one; answers the index its first message had (where the context is
   * cut), or undefined when the turn is not in the list.
   */
  rewind(turnId: string): number | undefined {
    const index = this.#marks.findIndex((mark) => mark.turnId === turnId);
    const mark = this.#marks[index];
    if (mark === undefined) return undefined;
    this.#marks = this.#marks.slice(0, index);
    this.#opening = undefined;
    return mark.start;
  }

  /** Replaces the list by another's (a resumed context takes its replay's). */
  replaceWith(other: TurnMarks): void {
    this.#marks = [...other.#marks];
    this.#opening = other.#opening;
  }
}
