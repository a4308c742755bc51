/** The usage a sub-agent's model calls report, counted at its provider, and the sums of it. */

import type { ChatEvent, ModelProvider } from './ports/model.js';
import type { SubagentUsage } from './types.js';

export function emptyUsage(): SubagentUsage {
  return {
    inputTokens: 0,
    outputTokens: 0,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    modelCalls: 0,
  };
}

export function addUsage(into: SubagentUsage, added: SubagentUsage): void {
  into.inputTokens += added.inputTokens;
  into.outputTokens += added.outputTokens;
  into.cachedInputTokens += added.cachedInputTokens;
  into.cacheWriteTokens += added.cacheWriteTokens;
  into.reasoningTokens += added.reasoningTokens;
  into.modelCalls += added.modelCalls;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

/**
 * The provider as the child uses it: every model call and every `usage` event it reports is added to
 * `usage`. (When usage totals reach the turn itself, they replace this count.)
 */
export function countingProvider(provider: ModelProvider, usage: SubagentUsage): ModelProvider {
  const counted = (stream: AsyncIterable<ChatEvent>): AsyncIterable<ChatEvent> => ({
    [Symbol.asyncIterator]() {
      const iterator = stream[Symbol.asyncIterator]();
      const wrapped: AsyncIterator<ChatEvent> = {
        async next() {
          const result = await iterator.next();
          if (!result.done) countUsage(usage, result.value);
          return result;
        },
      };
      // The runtime's read calls return() to stop a stream it no longer wants: pass it on as it is.
      if (iterator.return !== undefined) wrapped.return = (value) => iterator.return!(value);
      return wrapped;
    },
  });
  return {
    id: provider.id,
    models: provider.models,
    chat(request, signal) {
      usage.modelCalls += 1;
      const stream = provider.chat(request, signal);
      return stream instanceof Promise ? stream.then(counted) : counted(stream);
    },
  };
}

function countUsage(usage: SubagentUsage, event: unknown): void {
  if (typeof event !== 'object' || event === null || (event as { type?: unknown }).type !== 'usage') return;
  const reported = (event as { usage?: unknown }).usage;
  if (typeof reported !== 'object' || reported === null) return;
  const fields = reported as Record<string, unknown>;
  usage.inputTokens += count(fields.inputTokens);
  usage.outputTokens += count(fields.outputTokens);
  usage.cachedInputTokens += count(fields.cachedInputTokens);
  usage.cacheWriteTokens += count(fields.cacheWriteTokens);
  usage.reasoningTokens += count(fields.reasoningTokens);
}
