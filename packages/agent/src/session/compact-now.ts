/**
 * Compaction on demand (`Session.compact`) as the controller starts it: the check of its instructions, and the
 * compaction run in the background with the events it emits collected for the caller.
 */
import { AgentError } from '../kernel/error.js';
import type { AgentEvent, AgentEventPayload } from '../kernel/event.js';
import { describeKind } from '../kernel/value-kind.js';
import { compactOnDemand } from '../turn/compact-step.js';
import { sessionBudgetGate } from '../turn/model-gate.js';
import type { TurnStatus } from '../turn/running-turn.js';
import type { AgentRuntime, SessionState } from '../turn/session-state.js';

/** Throws INVALID_INPUT unless `instructions` is a string or undefined. */
export function checkCompactInstructions(instructions: unknown): asserts instructions is string | undefined {
  if (instructions !== undefined && typeof instructions !== 'string') {
    throw new AgentError({
      code: 'INVALID_INPUT',
      message: `compact(instructions) takes a string or nothing, got ${describeKind(instructions)}`,
    });
  }
}

/** A compaction started by `startCompaction`: its cancel switch, its end, and the events it emitted so far. */
interface RunningCompaction {
  controller: AbortController;
  /** Rejects with the compaction's failure. */
  run: Promise<unknown>;
  /** Settles (never rejects) when the compaction ended. */
  done: Promise<TurnStatus>;
  events: AgentEvent[];
}

/** Starts compacting the context now, in the turn `turnId`, as a turn would (prune, then summarise). */
export function startCompaction(options: {
  runtime: AgentRuntime;
  state: SessionState;
  turnId: string;
  instructions: string | undefined;
}): RunningCompaction {
  const { runtime, state, turnId } = options;
  const controller = new AbortController();
  const events: AgentEvent[] = [];
  const emit = (payload: AgentEventPayload): void => {
    events.push(state.nextEvent(turnId, payload));
  };
  const run = compactOnDemand({
    runtime,
    session: state,
    turnId,
    signal: controller.signal,
    emit,
    instructions: options.instructions,
    observers: runtime.observers.enabledNow(),
    budgetGate: sessionBudgetGate({ runtime, session: state, inTurn: false }),
  });
  const done = run.then(
    (): TurnStatus => 'completed',
    (): TurnStatus => 'failed',
  );
  return { controller, run, done, events };
}
