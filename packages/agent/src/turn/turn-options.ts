import type { InterruptedTurnRecord } from '../approvals/interrupted-turn.js';
import type { HeldBatch, TurnRunOptions } from '../kernel/approval-types.js';
import type { CancelScope } from '../kernel/cancel-scope.js';
import type { AgentEventPayload } from '../kernel/event.js';
import type { UsageTotals, UserInput } from '../kernel/types.js';
import type { Observers } from '../model/observation.js';
import type { UsageSink } from '../model/usage-sink.js';
import type { StructuredOutputPlan } from '../output/structured-output.js';
import type { BudgetGate } from '../usage/budget.js';
import type { TurnResult } from './running-turn.js';
import type { AgentRuntime, SessionState } from './session-state.js';
import type { SteeringInbox } from './steering-inbox.js';

/** Everything one turn touches; the turn loop has no state of its own (0006 D1). */
export interface TurnOptions {
  runtime: AgentRuntime;
  session: SessionState;
  input: UserInput;
  turnId: string;
  /** The turn's cancellation: handed to its provider calls and tools, and checked between its steps. */
  signal: AbortSignal;
  /** The cancel scope of `signal` when its controller tells the scope itself (a TurnAbortController's); else one is made. */
  cancelScope?: CancelScope;
  emit: (payload: AgentEventPayload) => void;
  /**
   * Takes the usage of each model call the turn makes (its own, compaction, memory). Absent, `runTurn` makes
   * one that emits on `emit` and adds to `usageTotals` and the session's totals.
   */
  recordUsage?: UsageSink | undefined;
  /** The turn's usage so far, added to by `recordUsage`; `turn_complete` carries it. */
  usageTotals?: UsageTotals | undefined;
  /** Set when the turn's final answer must be structured output. */
  output?: StructuredOutputPlan;
  /** The observers that watch this turn (asked once at its start); unset when none does. */
  observers?: Observers;
  /** Messages steered into this turn while it runs; taken at its step boundaries. */
  steering?: SteeringInbox;
  /** The approver of calls that need approval, and its window. */
  approval?: TurnRunOptions;
  /** The limits this turn's model calls must pass (its sub-agents' and compaction's included); none when unset. */
  budgetGate?: BudgetGate | undefined;
  /** Set when the turn continues a suspended one: its held batch runs first, instead of steps 1–3. */
  resume?: HeldBatch;
  /** Set when the turn continues one cut by a crash: what it left unfinished is reconciled, instead of steps 1–3. */
  interrupted?: InterruptedTurnRecord;
}

/** The turn loop (`runTurn`), as the builder hands it to the sub-agent tools, which run turns of their own. */
export type RunTurn = (options: TurnOptions) => Promise<TurnResult>;
