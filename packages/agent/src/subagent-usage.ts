/** Sums of the usage a sub-agent's turns report. */

import type { SubagentUsage } from './types.js';

/** Usage of no call. */
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

/** Adds `added` to `into`, in place. */
export function addUsage(into: SubagentUsage, added: SubagentUsage): void {
  into.inputTokens += added.inputTokens;
  into.outputTokens += added.outputTokens;
  into.cachedInputTokens += added.cachedInputTokens;
  into.cacheWriteTokens += added.cacheWriteTokens;
  into.reasoningTokens += added.reasoningTokens;
  into.modelCalls += added.modelCalls;
  if (added.costUsd !== undefined) into.costUsd = (into.costUsd ?? 0) + added.costUsd;
}
