import type { AgentEventPayload } from '../kernel/event.js';
import type { UsageTotals } from '../kernel/types.js';
import type { UsageSink } from '../model/usage-sink.js';
import { addTotals, emptyUsageTotals } from '../usage/usage.js';
import type { AgentRuntime, SessionState } from './session-state.js';
import type { TurnOptions } from './turn-options.js';

/** What a step that makes model calls knows: a turn's options, or those of a step run on its own. */
interface UsageSinkSource {
  runtime: AgentRuntime;
  session: SessionState;
  emit: (payload: AgentEventPayload) => void;
  /** The turn's sink (it also adds to the turn's totals); absent for a step run outside a turn. */
  recordUsage?: UsageSink | undefined;
}

/**
 * Where a step reports the usage of its model calls: the turn's sink, or else one that emits on the step's
 * `emit` and adds to the session's totals only (a compaction run by `Session.compact`, for instance).
 */
export function usageSink(source: UsageSinkSource): UsageSink {
  if (source.recordUsage !== undefined) return source.recordUsage;
  const { runtime, session, emit } = source;
  return session.usage.sink({
    log: session.log,
    priceOf: (modelId) => runtime.models.find(modelId)?.info.pricing,
    emit,
  });
}

/** A turn's options once its usage sink and totals are set. */
export type TurnUsageOptions = TurnOptions & { recordUsage: UsageSink; usageTotals: UsageTotals };

/**
 * The options with the turn's usage sink and totals: the ones given (Session's turns), or new ones that emit on
 * the turn's stream and add to its session's totals (a sub-agent's turn).
 */
export function withTurnUsage(options: TurnOptions): TurnUsageOptions {
  // A Session's turn comes with both: its options are used as they are, not copied.
  if (options.recordUsage !== undefined && options.usageTotals !== undefined) {
    return options as TurnUsageOptions;
  }
  const usageTotals = options.usageTotals ?? emptyUsageTotals();
  const recordUsage =
    options.recordUsage ??
    options.session.usage.sink({
      log: options.session.log,
      priceOf: (modelId) => options.runtime.models.find(modelId)?.info.pricing,
      emit: options.emit,
      turnTotals: usageTotals,
    });
  return { ...options, recordUsage, usageTotals };
}

/**
 * Adds what the turn's sub-agents used (summed in its TurnLink as each one ended) to the turn's totals and to
 * the session's, once; the session's log records it so a resumed session counts it too.
 */
export function foldSubagentUsage(options: TurnUsageOptions): void {
  const link = options.runtime.turns.get(options.turnId);
  if (link === undefined || link.subagentUsage.modelCalls === 0) return;
  const used = { ...link.subagentUsage };
  Object.assign(link.subagentUsage, emptyUsageTotals());
  addTotals(options.usageTotals, used);
  options.session.usage.addSubagents(used, options.session.log);
}
