import {
  AgentError,
  type ChatEvent,
  type ChatRequest,
  type ModelInfo,
  type ModelProvider,
} from '@youyou/agent';
import type { ChosenProvider } from './provider.js';

/**
 * The provider the CLI registers with the agent, in front of the adapter the settings chose. It does two
 * things the runtime leaves to its host:
 * - `/model NAME` switches the model of the running session: every later request goes to the provider
 *   built for NAME with NAME as its model, while the agent keeps routing to the model it was built with.
 * - After a turn whose model request failed, the memory requests that closing the session would make
 *   are refused at once with `skippedMemoryError` (the CLI does not report it): the same model would fail
 *   the same way, and the user would see the failure a second time. A turn that succeeds lifts this.
 */
export class SwitchableProvider implements ModelProvider {
  readonly id: string;
  readonly models: readonly ModelInfo[];
  /** The error a refused memory request rejects with; recognise it by identity. */
  readonly skippedMemoryError = new AgentError({
    code: 'MEMORY_ERROR',
    message: 'memory extraction skipped: the last request to the model failed',
  });
  #current: ChosenProvider;
  #lastTurnFailed = false;

  constructor(initial: ChosenProvider) {
    this.#current = initial;
    this.id = initial.provider.id;
    this.models = initial.provider.models;
  }

  /** The provider and model requests go to now. */
  get current(): ChosenProvider {
    return this.#current;
  }

  /** Sends every later request to `next` (built for the new model). */
  switchTo(next: ChosenProvider): void {
    this.#current = next;
  }

  chat(request: ChatRequest, signal: AbortSignal): AsyncIterable<ChatEvent> {
    const memory = request.purpose === 'memory_extraction' || request.purpose === 'memory_consolidation';
    if (memory && this.#lastTurnFailed) {
      // An iterable that throws when read: readChatStream hands the error through as it is.
      const error = this.skippedMemoryError;
      return {
        [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }),
      };
    }
    const { provider, modelId } = this.#current;
    return this.#stream(provider, { ...request, modelId }, signal, request.purpose === 'turn');
  }

  async *#stream(
    provider: ModelProvider,
    request: ChatRequest,
    signal: AbortSignal,
    turn: boolean,
  ): AsyncGenerator<ChatEvent> {
    try {
      yield* await provider.chat(request, signal);
    } catch (error) {
      if (turn && !signal.aborted) this.#lastTurnFailed = true;
      throw error;
    }
    if (turn) this.#lastTurnFailed = false;
  }
}
