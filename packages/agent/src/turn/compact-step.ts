/**
 * The compaction step (SPEC §4 Compaction): BeforeCompact, then pruning of old tool results, then — when the
 * context is still over the threshold, or always when asked — a summary. Run before a model call of a turn
 * (automatic) and by `Session.compact` (manual). Whatever changes the context is saved as metadata, so a
 * resume rebuilds the same view.
 */

import { summariseHistory } from '../context/compaction.js';
import { prunableCallIds } from '../context/pruning.js';
import { AgentError, describeError, isAgentError, toAgentError } from '../kernel/error.js';
import type { AgentEventPayload } from '../kernel/event.js';
import { MetadataKey } from '../log/metadata-keys.js';
import type { Observers } from '../model/observation.js';
import type { UsageSink } from '../model/usage-sink.js';
import type { BudgetGate } from '../usage/budget.js';
import { turnGatedModel } from './model-answer.js';
import { turnStopper } from './model-gate.js';
import type { AgentRuntime, SessionState } from './session-state.js';
import { usageSink } from './turn-usage.js';

/** What the compaction step touches: a turn's options without its input. */
interface CompactStepOptions {
  runtime: AgentRuntime;
  session: SessionState;
  turnId: string;
  signal: AbortSignal;
  emit: (payload: AgentEventPayload) => void;
  /** The observers that watch this compaction's model call; unset when none does. */
  observers?: Observers | undefined;
  /** The turn's usage sink; absent (Session.compact), the compaction's usage goes to the session's totals. */
  recordUsage?: UsageSink | undefined;
  /** The limits of the turn (or, on demand, of the session) the compaction's model call must pass. */
  budgetGate?: BudgetGate | undefined;
}

/** Why and how a compaction runs. */
interface CompactRequest {
  /** The estimate that triggered it, for the BeforeCompact hook. */
  estimatedTokens: number;
  /** Characters of the system prompt of the next request, to estimate again after pruning. */
  promptChars: number;
  /** Summarise even when pruning alone brought the context under the threshold. */
  force: boolean;
  /** Extra instructions for the summary (manual compaction). */
  instructions?: string | undefined;
}

/**
 * Compacts the context; throws what went wrong (COMPACT_ERROR, STORAGE_ERROR), 'skipped' when a BeforeCompact
 * hook stopped it, 'cancelled' when the signal fired. Emits `context_compacted` once the context changed.
 */
async function compactContext(
  options: CompactStepOptions,
  request: CompactRequest,
): Promise<'compacted' | 'skipped' | 'cancelled'> {
  const { runtime, session, turnId, signal, emit } = options;
  const context = session.context;
  const contextWindow = session.model.info.contextWindow;
  if (signal.aborted) return 'cancelled';
  if (runtime.hooks.has('BeforeCompact')) {
    const outcome = await runtime.hooks.dispatch({
      event: 'BeforeCompact',
      sessionId: session.id,
      turnId,
      data: {
        messageCount: context.messages.length,
        estimatedTokens: request.estimatedTokens,
        contextWindow,
      },
      timeoutMs: runtime.config.toolTimeoutMs,
    });
    for (const error of outcome.errors) emit({ type: 'error', error });
    if (outcome.abortReason !== undefined) return 'skipped';
  }
  // Pruning first: old tool results are the cheapest thing to give up, and need no model call.
  const pruned = prunableCallIds(context.messages);
  if (pruned.length > 0 && context.applyPruning(new Set(pruned))) {
    await session.log.append({
      type: 'metadata',
      key: MetadataKey.contextPruned,
      value: { callIds: pruned },
    });
    const estimate = context.estimateTokens({
      promptChars: request.promptChars,
      toolsChars: runtime.toolsChars,
    });
    if (!request.force && estimate <= contextWindow * runtime.config.compactThreshold) {
      emit({ type: 'context_compacted' });
      return 'compacted';
    }
  }
  // Yield point: before the compaction request.
  if (signal.aborted) return 'cancelled';
  const compactModel = runtime.config.compactModel;
  const route = compactModel === undefined ? session.model : runtime.models.resolve(compactModel);
  const gated = turnGatedModel(options, route.provider);
  const result = await summariseHistory({
    context,
    contextWindow,
    provider: gated.provider,
    model: route.info,
    prompt: runtime.config.compactPrompt,
    instructions: request.instructions,
    sessionId: session.id,
    signal,
    onUsage: gated.attribute(usageSink(options)),
  });
  context.applyCompaction(result);
  await session.log.append({
    type: 'metadata',
    key: MetadataKey.compaction,
    value:
      result.messageLimitChars === undefined
        ? { summary: result.summary, keptMessages: result.keptCount }
        : {
            summary: result.summary,
            keptMessages: result.keptCount,
            messageLimitChars: result.messageLimitChars,
          },
  });
  emit({ type: 'context_compacted' });
  return 'compacted';
}

/** The automatic compaction of a turn: a failure is reported as COMPACT_ERROR and the turn goes on. */
export async function compact(
  options: CompactStepOptions,
  request: CompactRequest,
): Promise<'compacted' | 'skipped' | 'cancelled'> {
  try {
    return await compactContext(options, request);
  } catch (error) {
    if (options.signal.aborted) return 'cancelled';
    if (isAgentError(error) && error.code === 'STORAGE_ERROR') throw error;
    // A refused or blocked summary request ends the turn: the turn's own call would be refused or blocked too.
    const stopper = turnStopper(error);
    if (stopper !== undefined) throw stopper;
    options.emit({ type: 'error', error: toAgentError(error, 'COMPACT_ERROR') });
    return 'skipped';
  }
}

/** `Session.compact`: prunes and summarises now; rejects with COMPACT_ERROR (or STORAGE_ERROR) when it cannot. */
export async function compactOnDemand(options: CompactStepOptions & { instructions: string | undefined }) {
  const { runtime, session } = options;
  const promptChars = session.context.stablePrompt?.length ?? 0;
  const estimatedTokens = session.context.estimateTokens({ promptChars, toolsChars: runtime.toolsChars });
  let outcome: 'compacted' | 'skipped' | 'cancelled';
  try {
    outcome = await compactContext(options, {
      estimatedTokens,
      promptChars,
      force: true,
      instructions: options.instructions,
    });
  } catch (error) {
    // A budget's refusal or a guardrail's stop is said as such, not as a failed compaction.
    const stopper = turnStopper(error);
    if (stopper !== undefined) throw stopper;
    if (isAgentError(error) && (error.code === 'STORAGE_ERROR' || error.code === 'COMPACT_ERROR'))
      throw error;
    throw new AgentError({
      code: 'COMPACT_ERROR',
      message: `compaction failed: ${describeError(error)}`,
      cause: error,
    });
  }
  if (outcome === 'skipped') {
    throw new AgentError({
      code: 'COMPACT_ERROR',
      message: 'a BeforeCompact hook stopped the compaction',
      sourceComponent: 'plugin',
    });
  }
  if (outcome === 'cancelled') {
    throw new AgentError({ code: 'REQUEST_CANCELLED', message: 'the compaction was cancelled' });
  }
}
