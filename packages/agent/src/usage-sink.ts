import type { AgentEventPayload } from './event.js';
import type { AgentRuntime, SessionState } from './session-state.js';
import type { UsageSink } from './usage.js';

/** What a step that makes model calls knows: a turn's options, or those of a step run on its own. */
export interface UsageSinkSource {
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
