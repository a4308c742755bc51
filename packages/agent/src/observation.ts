/**
 * The observers of an agent (`PluginContext.observe`): they see every turn's start and end, every AgentEvent
 * and every model call, and can change nothing. Delivery is synchronous and guarded: an observer that throws
 * (or returns a promise that rejects) is reported to `onBackgroundError` as PLUGIN_ERROR and the turn goes on.
 * With no observer registered, each delivery point costs one property read.
 */

import { AgentError, describeError } from './error.js';
import { toProviderError } from './model-call.js';
import type { ChatEvent, ChatRequest, ModelProvider } from './ports/model.js';
import type { ModelCallOutcome, Observation, Observer } from './ports/plugin.js';
import { ChatEventChecker } from './provider-events.js';
import { isThenable } from './settle.js';
import type { TokenUsage } from './types.js';

/** One registered observer, with the plugin it belongs to. */
interface ObserverEntry {
  pluginId: string;
  observer: Observer;
}

/** Where a model call happens: its session, and its turn when it is part of one. */
export interface ModelCallScope {
  sessionId: string;
  turnId?: string;
}

/** The observers of one agent, and the wrapping of providers that tells them about model calls. */
export class ObserverRegistry {
  /** Replaced, never changed in place, so a delivery in progress keeps the list it started with. */
  #entries: readonly ObserverEntry[] = [];
  readonly #onBackgroundError: (error: AgentError) => void;
  #lastCallId = 0;

  constructor(onBackgroundError: (error: AgentError) => void) {
    this.#onBackgroundError = onBackgroundError;
  }

  /** True when at least one observer is registered; callers skip building observations otherwise. */
  get active(): boolean {
    return this.#entries.length > 0;
  }

  /** Adds an observer; the returned function removes it (a second call does nothing). */
  add(pluginId: string, observer: Observer): () => void {
    const own: ObserverEntry = { pluginId, observer };
    this.#entries = [...this.#entries, own];
    return () => {
      this.#entries = this.#entries.filter((entry) => entry !== own);
    };
  }

  /** Hands the observation to every observer in registration order; never throws. */
  notify(observation: Observation): void {
    for (const entry of this.#entries) {
      try {
        const returned: unknown = entry.observer(observation);
        if (isThenable(returned)) {
          returned.then(undefined, (error: unknown) => this.#reportFailure(entry, observation, error));
        }
      } catch (error) {
        this.#reportFailure(entry, observation, error);
      }
    }
  }

  /**
   * The provider to call for a model call in `scope`: the provider itself when nobody observes, else a
   * wrapper that tells the observers when each call starts and how it ended.
   */
  observedProvider(provider: ModelProvider, scope: ModelCallScope): ModelProvider {
    if (!this.active) return provider;
    return {
      id: provider.id,
      models: provider.models,
      chat: (request, signal) => {
        this.#lastCallId += 1;
        const call = new ObservedCall({
          registry: this,
          callId: `model-call-${this.#lastCallId}`,
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

  #reportFailure(entry: ObserverEntry, observation: Observation, error: unknown): void {
    const failure = new AgentError({
      code: 'PLUGIN_ERROR',
      message: `plugin '${entry.pluginId}' failed observing ${observation.type}: ${describeError(error)}`,
      sourceComponent: 'plugin',
      cause: error,
    });
    try {
      this.#onBackgroundError(failure);
    } catch {
      // The host's handler failed too; the turn must go on regardless.
    }
  }
}

/** One observed model call: announces its start at once and its end exactly once. */
class ObservedCall {
  readonly #registry: ObserverRegistry;
  readonly #callId: string;
  readonly #scope: ModelCallScope;
  readonly #providerId: string;
  readonly #request: ChatRequest;
  readonly #signal: AbortSignal;
  readonly #checker: ChatEventChecker;
  readonly #onAbort = (): void => this.#end('cancelled', undefined);
  #ended = false;
  #stopReason: Extract<ChatEvent, { type: 'done' }>['stopReason'] | undefined;
  #usage: TokenUsage | undefined;
  #outputText = '';
  #toolCalls: { callId: string; toolName: string; arguments: string }[] = [];

  constructor(options: {
    registry: ObserverRegistry;
    callId: string;
    scope: ModelCallScope;
    providerId: string;
    request: ChatRequest;
    signal: AbortSignal;
  }) {
    this.#registry = options.registry;
    this.#callId = options.callId;
    this.#scope = options.scope;
    this.#providerId = options.providerId;
    this.#request = options.request;
    this.#signal = options.signal;
    this.#checker = new ChatEventChecker(options.providerId);
    this.#registry.notify({
      type: 'model_call_start',
      callId: this.#callId,
      ...this.#where(),
      request: this.#request,
    });
    // A provider that never answers its stream still ends its call when the turn is cancelled.
    if (this.#signal.aborted) this.#end('cancelled', undefined);
    else this.#signal.addEventListener('abort', this.#onAbort, { once: true });
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
        return {
          next: () =>
            iterator.next().then(
              (step) => {
                if (step.done) this.#end('completed', undefined);
                else this.#see(step.value);
                return step as IteratorResult<ChatEvent>;
              },
              (error: unknown) => {
                this.fail(error);
                throw error;
              },
            ),
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
    this.#signal.removeEventListener('abort', this.#onAbort);
    this.#registry.notify({
      type: 'model_call_end',
      callId: this.#callId,
      ...this.#where(),
      outcome,
      ...(this.#stopReason === undefined ? {} : { stopReason: this.#stopReason }),
      ...(this.#usage === undefined ? {} : { usage: this.#usage }),
      ...(error === undefined ? {} : { error }),
      outputText: this.#outputText,
      toolCalls: this.#toolCalls,
    });
  }
}
