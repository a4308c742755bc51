/**
 * A model provider for the tests of the port's checks: it answers each request with values the test gives, as
 * they are (not ChatEvents: anything a broken provider could yield), or hangs, ignoring its signal.
 */
import type { ChatPurpose, ChatRequest, ModelProvider } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';

/** One answer: the values yielded in order, then the end of the stream, or a hang that ignores the signal. */
export interface RawAnswer {
  values: readonly unknown[];
  /** After the values, never answer `next()` again (and never look at the signal). */
  hang?: boolean;
}

/** Answers requests from queues (by purpose first, then the general one); a plain text answer once they are empty. */
export class RawProvider implements ModelProvider {
  readonly id: string;
  readonly models = [scriptedModel()];
  readonly requests: ChatRequest[] = [];
  /** How many times a stream's `return()` was called, by answer index. */
  readonly returnCalls: number[] = [];
  private readonly answers: RawAnswer[];
  private readonly byPurpose: Partial<Record<ChatPurpose, RawAnswer[]>>;

  constructor(options: {
    id?: string;
    answers?: RawAnswer[];
    byPurpose?: Partial<Record<ChatPurpose, RawAnswer[]>>;
  }) {
    this.id = options.id ?? 'raw-provider';
    this.answers = [...(options.answers ?? [])];
    this.byPurpose = options.byPurpose ?? {};
  }

  /** Adds answers for later requests of any purpose. */
  enqueue(...answers: RawAnswer[]): void {
    this.answers.push(...answers);
  }

  chat(request: ChatRequest): AsyncIterable<never> {
    this.requests.push(request);
    const index = this.requests.length - 1;
    this.returnCalls[index] = 0;
    const answer = this.byPurpose[request.purpose]?.shift() ??
      this.answers.shift() ?? { values: [{ type: 'text_delta', text: 'plain answer' }] };
    let position = 0;
    const returnCalls = this.returnCalls;
    const iterator = {
      next: (): Promise<IteratorResult<never>> => {
        if (position < answer.values.length) {
          const value = answer.values[position] as never;
          position += 1;
          return Promise.resolve({ value, done: false });
        }
        if (answer.hang) return new Promise<never>(() => undefined);
        return Promise.resolve({ value: undefined as never, done: true });
      },
      return: (): Promise<IteratorResult<never>> => {
        returnCalls[index] = (returnCalls[index] ?? 0) + 1;
        position = answer.values.length;
        return Promise.resolve({ value: undefined as never, done: true });
      },
    };
    return { [Symbol.asyncIterator]: () => iterator };
  }
}
