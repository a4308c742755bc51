import { AgentError, describeError, isAgentError } from './error.js';
import type { ChatEvent, ChatPurpose, ChatRequest, ModelProvider } from './ports/model.js';
import { isThenable } from './settle.js';
import type { Message, TokenUsage } from './types.js';

/** Wraps whatever a provider threw as AgentError PROVIDER_ERROR (non-retryable unless it said otherwise). */
export function toProviderError(error: unknown, providerId: string): AgentError {
  if (isAgentError(error)) return error;
  return new AgentError({
    code: 'PROVIDER_ERROR',
    message: `provider '${providerId}' failed: ${describeError(error)}`,
    cause: error,
  });
}

/**
 * Reads one model answer: calls `provider.chat`, hands each event to `onEvent` until the stream ends or
 * `onEvent` returns false, and always closes the provider's iterator, so the provider can close its
 * connection when the reader stops early. Every failure comes out as a PROVIDER_ERROR. The iterator is read
 * directly, with no generator in between: this runs once per streamed delta.
 */
export async function readChatStream(options: {
  provider: ModelProvider;
  request: ChatRequest;
  signal: AbortSignal;
  onEvent: (event: ChatEvent) => boolean | undefined;
}): Promise<void> {
  const { provider } = options;
  let stream: AsyncIterable<ChatEvent>;
  try {
    const answered: unknown = provider.chat(options.request, options.signal);
    // A provider that answers with its stream at once costs no tick.
    stream = (isThenable(answered) ? await answered : answered) as AsyncIterable<ChatEvent>;
  } catch (error) {
    throw toProviderError(error, provider.id);
  }
  const iterator = stream[Symbol.asyncIterator]();
  // A stream that ended by itself needs no `return()`: that call is a round of promises per model answer.
  let ended = false;
  try {
    while (true) {
      let step: IteratorResult<ChatEvent>;
      try {
        step = await iterator.next();
      } catch (error) {
        throw toProviderError(error, provider.id);
      }
      if (step.done) {
        ended = true;
        return;
      }
      if (options.onEvent(step.value) === false) return;
    }
  } finally {
    if (!ended) await iterator.return?.()?.catch(() => undefined);
  }
}

/** A one-shot request of the runtime's own (compaction, memory): no tools, one user message. */
export function internalRequest(options: {
  modelId: string;
  purpose: Exclude<ChatPurpose, 'turn'>;
  systemPrompt: string;
  userText: string;
}): ChatRequest {
  const messages: Message[] = [{ type: 'user', content: [{ type: 'text', text: options.userText }] }];
  return {
    modelId: options.modelId,
    purpose: options.purpose,
    systemPrompt: options.systemPrompt,
    systemPromptParts: { stable: options.systemPrompt, dynamic: '' },
    messages,
    tools: [],
  };
}

/** Runs a request to its end and returns the answer's text (reasoning is dropped). */
export async function collectText(options: {
  provider: ModelProvider;
  request: ChatRequest;
  signal: AbortSignal;
}): Promise<{ text: string; usage: TokenUsage | undefined }> {
  let text = '';
  let usage: TokenUsage | undefined;
  await readChatStream({
    ...options,
    onEvent: (event) => {
      if (options.signal.aborted) return false;
      if (event.type === 'text_delta') text += event.text;
      else if (event.type === 'usage') usage = event.usage;
      return true;
    },
  });
  if (options.signal.aborted) throw cancelledError();
  return { text, usage };
}

/** The error of a request that was cancelled. */
export function cancelledError(reason = 'the request was cancelled'): AgentError {
  return new AgentError({ code: 'REQUEST_CANCELLED', message: reason });
}
