import type { HeldBatch, TurnRunOptions } from './approval-types.js';
import type { AgentEventPayload } from './event.js';
import type { AgentRuntime, SessionState } from './session-state.js';
import type { UserInput } from './types.js';

/** Everything one turn touches; the turn loop has no state of its own (0006 D1). */
export interface TurnOptions {
  runtime: AgentRuntime;
  session: SessionState;
  input: UserInput;
  turnId: string;
  /** The turn's cancellation: handed to its provider calls and tools, and checked between its steps. */
  signal: AbortSignal;
  emit: (payload: AgentEventPayload) => void;
  /** The approver of calls that need approval, and its window. */
  approval?: TurnRunOptions;
  /** Set when the turn continues a suspended one: its held batch runs first, instead of steps 1–3. */
  resume?: HeldBatch;
}
