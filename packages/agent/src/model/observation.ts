/**
 * The observers of an agent (`PluginContext.observe`): they see every turn's start and end, every AgentEvent
 * and every model call, and can change nothing. Delivery is synchronous and guarded: an observer that throws
 * (or returns a promise that rejects) is reported to `onBackgroundError` as PLUGIN_ERROR and the turn goes on.
 * With no observer registered, each delivery point costs one property read.
 */

import { AgentError, describeError } from '../kernel/error.js';
import { isThenable } from '../kernel/settle.js';
import type { TokenUsage } from '../kernel/types.js';
import type { ChatEvent, ChatRequest, ModelProvider } from '../ports/model.js';
import type { ModelCallOutcome, Observation, Observer } from '../ports/plugin.js';
import { toProviderError } from './model-call.js';
import { ChatEventChecker } from './provider-events.js';

/** One registered observer, with the plugin it belongs to. */
interface ObserverEntry {
  pluginId: string;
  observer: Observer;
  enabled: (() => boolean) | undefined;
}

/** Where a model call happens: its session, and its turn when it is part of one. */
interface ModelCallScope {
  sessionId: string;
  turnId?: string;
}

/** Hands a failure of a plugin's observer to the host; never throws. */
function reportFailure(options: {
  onBackgroundError: (error: AgentError) => void;
  pluginId: string;
  what: string;
  error: unknown;
}): void {
  const failure = new AgentError({
    code: 'PLUGIN_ERROR',
    message: `plugin '${options.pluginId}' failed ${options.what}: ${describeError(options.error)}`,
    sourceComponent: 'plugin',
    cause: options.error,
  });
  try {
    options.onBackgroundError(failure);
  } catch {
    // The host's handler failed too; the turn must go on regardless.
  }
}

/** Every observer registered on an agent (`PluginContext.observe`). */
export class ObserverRegistry {
  /** Replaced, never changed in place, so a set taken from it keeps the list it was taken with. */
  #entries: readonly ObserverEntry[] = [];
  readonly #onBackgroundError: (error: AgentError) => void;
  /** Shared by every set taken from this registry, so call ids are unique within the agent. */
  readonly #callIds = { last: 0 };

  constructor(onBackgroundError: (error: AgentError) => void) {
    this.#onBackgroundError = onBackgroundError;
  }

  /** True when at least one observer is registered. */
  get active(): boolean {
    return this.#entries.length > 0;
  }

  /** Adds an observer; the returned function removes it (a second call does nothing). */
  add(options: { pluginId: string; observer: Observer; enabled?: (() => boolean) | undefined }): () => void {
    const own: ObserverEntry = {
      pluginId: options.pluginId,
      observer: options.observer,
      enabled: options.enabled,
    };
    this.#entries = [...this.#entries, own];
    return () => {
      this.#entries = this.#entries.filter((entry) => entry !== own);
    };
  }

  /**
   * The observers that want what starts now (a turn, or a model call outside a turn), each asked through its
   * `enabled`; undefined when none does, so the caller does nothing more.
   */
  enabledNow(): Observers | undefined {
    const entries = this.#entries;
    if (entries.length === 0) return undefined;
    let wanted: ObserverEntry[] | undefined;
    for (const entry of entries) {
      if (entry.enabled !== undefined && !this.#asks(entry)) continue;
      wanted ??= [];
      wanted.push(entry);
    }
    return wanted === undefined ? undefined : new Observers(wanted, this.#onBackgroundError, this.#callIds);
  }

  #asks(entry: ObserverEntry): boolean {
    try {
      return entry.enabled?.() === true;
    } catch (error) {
      reportFailure({
        onBackgroundError: this.#onBackgroundError,
        pluginId: entry.pluginId,
        what: 'in enabled()',
        error,
      });
      return false;
    }
  }
}

/** The provider to call: wrapped for the observers when there are any, else the provider itself. */
export function observedProvider(
  observers: Observers | undefined,
  provider: ModelProvider,
  scope: ModelCallScope,
): ModelProvider {
  return observers === undefined ? provider : observers.observedProvider(provider, scope);
}

/** The observers of one turn (or of one model call outside a turn). */
export class Observers {
  readonly #entries: readonly ObserverEntry[];
  readonly #onBackgroundError: (error: AgentError) => void;
  readonly #callIds: { last: number };

  constructor(
    entries: readonly ObserverEntry[],
    onBackgroundError: (error: AgentError) => void,
    callIds: { last: number },
  ) {
    this.#entries = entries;
    this.#onBackgroundError = onBackgroundError;
    this.#callIds = callIds;
  }

  /** Hands the observation to every observer in registration order; never throws. */
  notify(observation: Observation): void {
    for (const entry of this.#entries) {
      try {
        const returned: unknown = entry.observer(observation);
        if (isThenable(returned)) {
          returned.then(undefined, (error: unknown) => this.#report(entry, observation, error));
        }
      } catch (error) {
        this.#report(entry, observation, error);
      }
    }
  }

  /** A wrapper of the provider that tells the observers when each call starts and how it ended. */
  observedProvider(provider: ModelProvider, scope: ModelCallScope): ModelProvider {
    return {
      id: provider.id,
      models: provider.models,
      chat: (request, signal) => {
        this.#callIds.last += 1;
        const call = new ObservedCall({
          observers: this,
          callId: `model-call-${this.#callIds.last}`,
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

  #report(entry: ObserverEntry, observation: Observation, error: unknown): void {
    reportFailure({
      onBackgroundError: this.#onBackgroundError,
      pluginId: entry.pluginId,
      what: `observing ${observation.type}`,
      error,
    });
  }
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
