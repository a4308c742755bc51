/**
 * A model call as the observers see it: the provider wrapped so that each call's start is announced at once and
 * its end (with what it answered, or how it failed) exactly once, its stream checked as the runtime checks it.
 */

import type { AgentError } from '../kernel/error.js';
import { isThenable } from '../kernel/settle.js';
import type { TokenUsage } from '../kernel/types.js';
import type { ChatEvent, ChatRequest, ModelProvider } from '../ports/model.js';
import type { ModelCallOutcome } from '../ports/plugin.js';
import { toProviderError } from './model-call.js';
import type { ModelCallScope, Observers } from './observation.js';
import { ChatEventChecker } from './provider-events.js';

/** The provider to call: wrapped for the observers when there are any, else the provider itself. */
export function observedProvider(
  observers: Observers | undefined,
  provider: ModelProvider,
  scope: ModelCallScope,
): ModelProvider {
  return observers === undefined ? provider : wrapProvider(observers, provider, scope);
}

/** A wrapper of the provider that tells the observers when each call starts and how it ended. */
function wrapProvider(observers: Observers, provider: ModelProvider, scope: ModelCallScope): ModelProvider {
  return {
    id: provider.id,
    models: provider.models,
    chat: (request, signal) => {
      const call = new ObservedCall({
        observers,
        callId: observers.nextCallId(),
        scope,
        providerId: provider.id,
        request,
        signal,
      });
      let answered: ReturnType<ModelProvider['chat']>;
      try {
        answered = provider.chat(request, signal);
      } catch (error) {
        call.fail(error);
        throw error;
      }
      if (!isThenable(answered)) return call.wrap(answered);
      // Only a stream still to come can be left waiting by a cancel: the signal ends the call then.
      call.endOnAbort();
      return Promise.resolve(answered).then(
        (stream) => call.wrap(stream),
        (error: unknown) => {
          call.fail(error);
          throw error;
        },
      );
    },
  };
}

/** One observed model call: announces its start at once and its end exactly once. */
class ObservedCall {
  readonly #observers: Observers;
  readonly #callId: string;
  readonly #scope: ModelCallScope;
  readonly #providerId: string;
  readonly #request: ChatRequest;
  readonly #signal: AbortSignal;
  readonly #checker: ChatEventChecker;
  readonly #onAbort = (): void => this.#end('cancelled', undefined);
  #ended = false;
  #listening = false;
  #stopReason: Extract<ChatEvent, { type: 'done' }>['stopReason'] | undefined;
  #usage: TokenUsage | undefined;
  #responseModel: string | undefined;
  #outputText = '';
  #toolCalls: { callId: string; toolName: string; arguments: string }[] = [];

  constructor(options: {
    observers: Observers;
    callId: string;
    scope: ModelCallScope;
    providerId: string;
    request: ChatRequest;
    signal: AbortSignal;
  }) {
    this.#observers = options.observers;
    this.#callId = options.callId;
    this.#scope = options.scope;
    this.#providerId = options.providerId;
    this.#request = options.request;
    this.#signal = options.signal;
    this.#checker = new ChatEventChecker(options.providerId);
    this.#observers.notify({
      type: 'model_call_start',
      callId: this.#callId,
      ...this.#where(),
      request: this.#request,
    });
  }

  /**
   * Ends the call as cancelled when the signal fires: for a provider whose stream is still to come, which may
   * never come. A stream in hand needs no listener: the reader closes it (or reads it to its end) in any case.
   */
  endOnAbort(): void {
    if (this.#ended) return;
    if (this.#signal.aborted) this.#end('cancelled', undefined);
    else {
      this.#listening = true;
      this.#signal.addEventListener('abort', this.#onAbort, { once: true });
    }
  }

  /** The stream as the reader sees it: the same events, noted on their way through. */
  wrap(stream: AsyncIterable<ChatEvent>): AsyncIterable<ChatEvent> {
    const open = (stream as Partial<AsyncIterable<unknown>> | null | undefined)?.[Symbol.asyncIterator];
    if (typeof open !== 'function') {
      // The reader rejects this answer with its own PROVIDER_ERROR; the call ends as failed here.
      this.fail(new Error('chat() did not answer with an async iterable of events'));
      return stream;
    }
    return {
      [Symbol.asyncIterator]: () => {
        const iterator = open.call(stream) as AsyncIterator<unknown>;
        const onStep = (step: unknown): IteratorResult<ChatEvent> => {
          if (typeof step !== 'object' || step === null) {
            // The reader fails on it too, with its own PROVIDER_ERROR.
            this.fail(new Error(`the stream's next() answered ${typeof step}, not an iterator result`));
          } else if ((step as IteratorResult<unknown>).done) this.#end('completed', undefined);
          else this.#see((step as IteratorResult<unknown>).value);
          return step as IteratorResult<ChatEvent>;
        };
        const onError = (error: unknown): never => {
          this.fail(error);
          throw error;
        };
        return {
          next: () => {
            let step: unknown;
            try {
              step = iterator.next();
            } catch (error) {
              return onError(error);
            }
            // The reader awaits what next() answers, promise or not; so does this.
            return isThenable(step)
              ? Promise.resolve(step).then(onStep, onError)
              : Promise.resolve(onStep(step));
          },
          return: (value?: unknown) => {
            // The reader stopped before the end: only a cancellation makes it do so.
            this.#end('cancelled', undefined);
            return iterator.return === undefined
              ? Promise.resolve({ done: true, value: undefined } as IteratorResult<ChatEvent>)
              : (iterator.return(value) as Promise<IteratorResult<ChatEvent>>);
          },
        };
      },
    };
  }

  /** Ends the call as failed with the error as the reader will see it. */
  fail(error: unknown): void {
    this.#end(this.#signal.aborted ? 'cancelled' : 'failed', toProviderError(error, this.#providerId));
  }

  /** Notes what the observers are told at the end; a malformed event fails the call as the reader will. */
  #see(value: unknown): void {
    let event: ChatEvent;
    try {
      event = this.#checker.check(value);
    } catch (error) {
      this.fail(error);
      return;
    }
    switch (event.type) {
      case 'text_delta':
        this.#outputText += event.text;
        break;
      case 'tool_call':
        this.#toolCalls.push({ callId: event.callId, toolName: event.toolName, arguments: event.arguments });
        break;
      case 'usage':
        this.#usage = event.usage;
        break;
      case 'done':
        this.#stopReason = event.stopReason;
        this.#responseModel = event.responseModel;
        break;
      default:
        break;
    }
  }

  #where() {
    const { sessionId, turnId } = this.#scope;
    const base = {
      sessionId,
      purpose: this.#request.purpose,
      providerId: this.#providerId,
      modelId: this.#request.modelId,
    };
    return turnId === undefined ? base : { ...base, turnId };
  }

  #end(outcome: ModelCallOutcome, error: AgentError | undefined): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#listening) this.#signal.removeEventListener('abort', this.#onAbort);
    this.#observers.notify({
      type: 'model_call_end',
      callId: this.#callId,
      ...this.#where(),
      outcome,
      ...(this.#stopReason === undefined ? {} : { stopReason: this.#stopReason }),
      ...(this.#usage === undefined ? {} : { usage: this.#usage }),
      ...(this.#responseModel === undefined ? {} : { responseModel: this.#responseModel }),
      ...(error === undefined ? {} : { error }),
      outputText: this.#outputText,
      toolCalls: this.#toolCalls,
    });
  }
}
