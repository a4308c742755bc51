import { AgentError, describeError, isAgentError } from './error.js';
import type { ChatEvent, ChatPurpose, ChatRequest, ModelProvider } from './ports/model.js';
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

/** Calls `provider.chat` and yields its events; every failure comes out as a PROVIDER_ERROR. */
export async function* streamChat(
  provider: ModelProvider,
  request: ChatRequest,
  signal: AbortSignal,
): AsyncGenerator<ChatEvent, void, undefined> {
  let stream: AsyncIterable<ChatEvent>;
  try {
    stream = await provider.chat(request, signal);
  } catch (error) {
    throw toProviderError(error, provider.id);
  }
  const iterator = stream[Symbol.asyncIterator]();
  try {
    while (true) {
      let step: IteratorResult<ChatEvent>;
      try {
        step = await iterator.next();
      } catch (error) {
        throw toProviderError(error, provider.id);
      }
      if (step.done) return;
      yield step.value;
    }
  } finally {
    // Lets the provider close its connection when the caller stops early.
    await iterator.return?.()?.catch(() => undefined);
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
  for await (const event of streamChat(options.provider, options.request, options.signal)) {
    if (options.signal.aborted) throw cancelledError();
    if (event.type === 'text_delta') text += event.text;
    else if (event.type === 'usage') usage = event.usage;
  }
  if (options.signal.aborted) throw cancelledError();
  return { text, usage };
}

/** The error of a request that was cancelled. */
export function cancelledError(reason = 'the request was cancelled'): AgentError {
  return new AgentError({ code: 'REQUEST_CANCELLED', message: reason });
}
