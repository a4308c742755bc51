import { randomUUID } from 'node:crypto';
import type { ChatEvent, TokenUsage } from '@youyou/agent';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import { closeQuietly, type ErrorContext, streamEndedEarly, toProviderError } from './errors.js';

type StopReason = Extract<ChatEvent, { type: 'done' }>['stopReason'];
type ToolCallFragment = NonNullable<ChatCompletionChunk.Choice.Delta['tool_calls']>[number];

/** A tool call being assembled from its fragments. */
interface PartialCall {
  id: string;
  name: string;
  arguments: string;
}

/** The delta fields compatible servers add: reasoning text as `reasoning_content` or `reasoning`. */
interface ReasoningDelta {
  reasoning_content?: unknown;
  reasoning?: unknown;
}

/**
 * Maps a Chat Completions usage report. `prompt_tokens` is the whole prompt and `cached_tokens` the part of it
 * read from the cache; `completion_tokens` includes `reasoning_tokens`. The parts are kept within their totals,
 * since the runtime refuses a report whose part exceeds its whole (a compatible server's quirk must not fail
 * the turn).
 */
export function chatUsage(usage: CompletionUsage): TokenUsage {
  const inputTokens = countOf(usage.prompt_tokens);
  const outputTokens = countOf(usage.completion_tokens);
  const cached = usage.prompt_tokens_details?.cached_tokens;
  const reasoning = usage.completion_tokens_details?.reasoning_tokens;
  return {
    inputTokens,
    outputTokens,
    ...(typeof cached === 'number' ? { cachedInputTokens: Math.min(countOf(cached), inputTokens) } : {}),
    ...(typeof reasoning === 'number' ? { reasoningTokens: Math.min(countOf(reasoning), outputTokens) } : {}),
  };
}

/** A token count as a whole number ≥ 0 (a server may send anything). */
export function countOf(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

function stopReasonOf(finishReason: string, hasToolCalls: boolean): StopReason {
  // Some servers (Ollama among them) finish a tool-calling answer with `stop`.
  if (hasToolCalls) return 'tool_use';
  switch (finishReason) {
    case 'stop':
      return 'end_turn';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'length':
      return 'max_tokens';
    default:
      return 'other';
  }
}

/** Keeps the tool calls of one answer, keyed by the chunk's `index`. */
class ToolCallAssembler {
  readonly calls: PartialCall[] = [];
  private readonly byIndex = new Map<number, PartialCall>();

  add(fragment: ToolCallFragment): void {
    const index = typeof fragment.index === 'number' ? fragment.index : undefined;
    // Without an index, a fragment continues the last call unless it names a new id.
    let call = index === undefined ? this.calls.at(-1) : this.byIndex.get(index);
    const id = fragment.id ?? '';
    // A new id at a used index is a new call: some servers number every call 0.
    if (call === undefined || (id !== '' && call.id !== '' && id !== call.id)) {
      call = { id, name: '', arguments: '' };
      this.calls.push(call);
      if (index !== undefined) this.byIndex.set(index, call);
    }
    if (call.id === '' && id !== '') call.id = id;
    const name = fragment.function?.name;
    if (typeof name === 'string' && name !== '' && call.name === '') call.name = name;
    const text = fragment.function?.arguments;
    if (typeof text === 'string') call.arguments += text;
  }
}

/**
 * Turns a Chat Completions chunk stream into ChatEvents: text and reasoning deltas as they come, then
 * the assembled tool calls, `usage` and `done`. A stream that ends without a finish reason was cut off
 * and throws a retryable PROVIDER_ERROR; an aborted one just ends.
 */
export async function* chatEvents(options: {
  chunks: AsyncIterable<ChatCompletionChunk>;
  signal: AbortSignal;
  errorContext: ErrorContext;
}): AsyncGenerator<ChatEvent, void, undefined> {
  const tools = new ToolCallAssembler();
  let finishReason: string | undefined;
  let usage: TokenUsage | undefined;
  let responseModel: string | undefined;
  const iterator = options.chunks[Symbol.asyncIterator]();
  try {
    while (true) {
      let step: IteratorResult<ChatCompletionChunk>;
      try {
        step = await iterator.next();
      } catch (error) {
        throw toProviderError(error, options.errorContext);
      }
      if (step.done) break;
      const chunk = step.value;
      if (chunk.usage) usage = chatUsage(chunk.usage);
      // Every chunk names the model that answered; a compatible server may leave it out or send junk.
      const model: unknown = chunk.model;
      if (typeof model === 'string' && model !== '') responseModel = model;
      const choice = chunk.choices?.find((candidate) => candidate.index === 0) ?? chunk.choices?.[0];
      if (choice === undefined) continue;
      const delta = (choice.delta ?? {}) as ChatCompletionChunk.Choice.Delta & ReasoningDelta;
      const reasoning =
        typeof delta.reasoning_content === 'string' ? delta.reasoning_content : delta.reasoning;
      if (typeof reasoning === 'string' && reasoning !== '')
        yield { type: 'reasoning_delta', text: reasoning };
      if (typeof delta.content === 'string' && delta.content !== '')
        yield { type: 'text_delta', text: delta.content };
      if (typeof delta.refusal === 'string' && delta.refusal !== '')
        yield { type: 'text_delta', text: delta.refusal };
      for (const fragment of delta.tool_calls ?? []) tools.add(fragment);
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
  } finally {
    // Closes the HTTP stream when the caller stops early; a failure to close hides nothing of the answer.
    await closeQuietly(iterator);
  }
  if (options.signal.aborted) return;
  if (finishReason === undefined) throw streamEndedEarly(options.errorContext);
  for (const call of tools.calls) {
    yield {
      type: 'tool_call',
      callId: call.id === '' ? `call_${randomUUID()}` : call.id,
      toolName: call.name,
      arguments: call.arguments,
    };
  }
  if (usage !== undefined) yield { type: 'usage', usage };
  const stopReason = stopReasonOf(finishReason, tools.calls.length > 0);
  yield responseModel === undefined
    ? { type: 'done', stopReason }
    : { type: 'done', stopReason, responseModel };
}
