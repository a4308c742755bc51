import type { AgentEventPayload } from './event.js';
import type { AgentRuntime, SessionState } from './session-state.js';
import type { UsageTotals, UserInput } from './types.js';
import type { UsageSink } from './usage.js';

/** Everything one turn touches; the turn loop has no state of its own (0006 D1). */
export interface TurnOptions {
  runtime: AgentRuntime;
  session: SessionState;
  input: UserInput;
  turnId: string;
  /** The turn's cancellation: handed to its provider calls and tools, and checked between its steps. */
  signal: AbortSignal;
  emit: (payload: AgentEventPayload) => void;
  /**
   * Takes the usage of each model call the turn makes (its own, compaction, memory). Absent (a step run
   * outside a turn), the steps make a sink that emits on `emit` and adds to the session's totals only.
   */
  recordUsage?: UsageSink;
  /** The turn's usage so far, added to by `recordUsage`; `turn_complete` carries it. */
  usageTotals?: UsageTotals;
}
