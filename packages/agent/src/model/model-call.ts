import { CancelScope } from '../kernel/cancel-scope.js';
import { AgentError, describeError, isAgentError } from '../kernel/error.js';
import { isThenable } from '../kernel/settle.js';
import type { Message, TokenUsage } from '../kernel/types.js';
import { describeKind } from '../kernel/value-kind.js';
import type { ChatEvent, ChatPurpose, ChatRequest, ModelProvider } from '../ports/model.js';
import { ChatEventChecker } from './provider-events.js';
import type { UsageSink } from './usage-sink.js';

/** Wraps whatever a provider threw as AgentError PROVIDER_ERROR (non-retryable unless it said otherwise). */
export function toProviderError(error: unknown, providerId: string): AgentError {
  if (isAgentError(error)) return error;
  return new AgentError({
    code: 'PROVIDER_ERROR',
    message: `provider '${providerId}' failed: ${describeError(error)}`,
    cause: error,
  });
}

/** What readChatStream takes. */
interface ChatStreamOptions {
  provider: ModelProvider;
  request: ChatRequest;
  signal: AbortSignal;
  /**
   * The scope of `signal` the caller keeps for longer than this call (a turn's): the read watches it instead of
   * adding a listener of its own to the signal. Without one, the read listens to the signal while it runs.
   */
  cancelScope?: CancelScope | undefined;
  /** Gets each checked event; returning false stops the reading. */
  onEvent: (event: ChatEvent) => boolean | undefined;
}

/**
 * Reads one model answer: calls `provider.chat`, checks each event at the port (provider-events.ts) and hands
 * it to `onEvent` until the stream ends or `onEvent` returns false, and closes the provider's iterator when the
 * reader stops early. Every failure comes out as a PROVIDER_ERROR. The read races the signal: once it fires
 * the promise resolves at once, whatever the provider does (one that ignores its signal cannot hang a turn, a
 * close or a shutdown), and the provider's iterator is told to close; the caller sees `signal.aborted`.
 * The race costs one watcher per model call (in the turn's cancel scope), not one per streamed delta.
 */
export function readChatStream(options: ChatStreamOptions): Promise<void> {
  const { signal } = options;
  const given = options.cancelScope;
  // Without the caller's scope the read has one of its own, closed (its listener removed) when the read ends.
  const shared = given !== undefined && given.signal === signal;
  if (shared ? given.cancelled : signal.aborted) return Promise.resolve();
  const read = new ChatStreamRead(options);
  const scope = shared ? given : new CancelScope(signal);
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      read.close();
      resolve();
    };
    scope.watch(onAbort);
    read.run().then(
      () => {
        if (shared) scope.unwatch(onAbort);
        else scope.close();
        resolve();
      },
      (error: unknown) => {
        if (shared) scope.unwatch(onAbort);
        else scope.close();
        // After an abort this changes nothing: the promise has resolved already.
        reject(error);
      },
    );
  });
}

/** One read of a provider's stream. The iterator is read directly, with no generator in between: this runs per delta. */
class ChatStreamRead {
  readonly #options: ChatStreamOptions;
  readonly #checker: ChatEventChecker;
  #iterator: AsyncIterator<unknown> | undefined;
  /** Set by close(): the reader has gone, whatever the provider still sends is dropped. */
  #stopped = false;
  /** Set once the iterator was told to close (or ended by itself), so it is told once. */
  #closed = false;

  constructor(options: ChatStreamOptions) {
    this.#options = options;
    this.#checker = new ChatEventChecker(options.provider.id);
  }

  async run(): Promise<void> {
    const { provider, request, signal, onEvent } = this.#options;
    let iterator: AsyncIterator<unknown>;
    try {
      const answered: unknown = provider.chat(request, signal);
      // A provider that answers with its stream at once costs no tick.
      const stream = isThenable(answered) ? await answered : answered;
      const open = (stream as Partial<AsyncIterable<unknown>> | null | undefined)?.[Symbol.asyncIterator];
      if (typeof open !== 'function') {
        throw new AgentError({
          code: 'PROVIDER_ERROR',
          message: `provider '${provider.id}' answered chat() with ${describeKind(stream)}, not an async iterable of events`,
        });
      }
      iterator = open.call(stream) as AsyncIterator<unknown>;
    } catch (error) {
      throw toProviderError(error, provider.id);
    }
    this.#iterator = iterator;
    if (this.#stopped) {
      // Aborted while chat() was answering.
      this.close();
      return;
    }
    try {
      while (true) {
        let step: IteratorResult<unknown>;
        try {
          step = await iterator.next();
          // A stream that ended by itself needs no `return()`: that call is a round of promises per model answer.
          if (step.done) {
            this.#closed = true;
            return;
          }
        } catch (error) {
          this.#closed = true;
          throw toProviderError(error, provider.id);
        }
        if (this.#stopped) return;
        if (onEvent(this.#checker.check(step.value)) === false) return;
      }
    } finally {
      if (!this.#closed) {
        this.#closed = true;
        try {
          await iterator.return?.();
        } catch {
          // The reader has stopped already; a provider that cannot close its stream changes nothing.
        }
      }
    }
  }

  /** Tells the provider's iterator to close, without waiting for it (it may never answer). */
  close(): void {
    this.#stopped = true;
    const iterator = this.#iterator;
    if (iterator === undefined || this.#closed) return;
    this.#closed = true;
    try {
      const closing: unknown = iterator.return?.();
      if (isThenable(closing)) closing.then(undefined, ignore);
    } catch {
      // As in run(): nothing is left to do for a stream that refuses to close.
    }
  }
}

function ignore(): void {}

/** A one-shot request of the runtime's own (compaction, memory): no tools, one user message. */
export function internalRequest(options: {
  modelId: string;
  purpose: Exclude<ChatPurpose, 'turn'>;
  systemPrompt: string;
  userText: string;
  /** The session the call is made for, handed to the provider for its cache routing. */
  sessionId: string;
}): ChatRequest {
  const messages: Message[] = [{ type: 'user', content: [{ type: 'text', text: options.userText }] }];
  return {
    modelId: options.modelId,
    purpose: options.purpose,
    systemPrompt: options.systemPrompt,
    systemPromptParts: { stable: options.systemPrompt, dynamic: '' },
    messages,
    tools: [],
    sessionId: options.sessionId,
  };
}

/**
 * Runs a request to its end and returns the answer's text (reasoning is dropped). The call's usage (the last
 * `usage` event, as providers report cumulative counts) goes to `onUsage` once the stream ends, also when it
 * failed or was cancelled after the provider reported it: those tokens were spent.
 */
export async function collectText(options: {
  provider: ModelProvider;
  request: ChatRequest;
  signal: AbortSignal;
  onUsage?: UsageSink | undefined;
}): Promise<{ text: string; usage: TokenUsage | undefined }> {
  let text = '';
  let usage: TokenUsage | undefined;
  try {
    await readChatStream({
      provider: options.provider,
      request: options.request,
      signal: options.signal,
      onEvent: (event) => {
        if (options.signal.aborted) return false;
        if (event.type === 'text_delta') text += event.text;
        else if (event.type === 'usage') usage = event.usage;
        return true;
      },
    });
  } finally {
    if (usage !== undefined) {
      options.onUsage?.({
        purpose: options.request.purpose,
        providerId: options.provider.id,
        modelId: options.request.modelId,
        usage,
      });
    }
  }
  if (options.signal.aborted) throw cancelledError();
  return { text, usage };
}

/** The error of a request that was cancelled. */
export function cancelledError(reason = 'the request was cancelled'): AgentError {
  return new AgentError({ code: 'REQUEST_CANCELLED', message: reason });
}
