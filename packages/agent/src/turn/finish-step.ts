/**
 * How a turn ends (0006 §9.1 steps 6–8): the memory checkpoint, TurnEnd, and exactly one terminal event; and
 * what a turn that failed leaves behind it (every saved tool call paired with a result).
 */

import { turnEndedRecord } from '../approvals/interrupted-turn.js';
import { logPayloadOf } from '../context/context.js';
import { toAgentError } from '../kernel/error.js';
import type { Message } from '../kernel/types.js';
import { copyUsageTotals } from '../usage/usage.js';
import { turnGatedModel } from './model-answer.js';
import { turnStopper } from './model-gate.js';
import type { TurnStatus } from './running-turn.js';
import type { TurnOptions } from './turn-options.js';
import type { NextStep, TurnRun } from './turn-run.js';
import { foldSubagentUsage, usageSink } from './turn-usage.js';

/** How the turn ends, by the step that ended it. */
export function statusOf(next: NextStep): TurnStatus {
  switch (next.type) {
    case 'interruption':
      return 'suspended';
    case 'cancelled':
      return 'cancelled';
    case 'failed':
      return 'failed';
    default:
      return 'completed';
  }
}

/**
 * 6. The memory checkpoint every N turns, inside the turn, before it ends (SPEC §5.14). A suspended turn is not
 * over (its checkpoint comes when it is continued and ends), and a cancelled one makes none.
 */
export function checkpoint(turn: TurnRun, next: NextStep): NextStep | Promise<NextStep> {
  if (next.type === 'cancelled' || next.type === 'interruption') return next;
  const { runtime, session } = turn.options;
  // Most turns have no checkpoint due: they go on at once, without a promise.
  if (session.memory === undefined || !session.checkpointDue(runtime.config.memoryCheckpointInterval)) {
    return next;
  }
  return memoryCheckpoint(turn.options).then((done) => (done === 'cancelled' ? { type: 'cancelled' } : next));
}

/**
 * A failure no step answered for: reported (storage failures arrive as STORAGE_ERROR already, since the session
 * log wraps them; anything else is unexpected), and every tool call without a result gets one, in the context
 * the next turn sees.
 */
export async function recordFailure(turn: TurnRun, error: unknown): Promise<void> {
  const { session } = turn.options;
  turn.reportError(toAgentError(error, 'INTERNAL_ERROR', 'the turn failed unexpectedly'));
  for (const callId of turn.openCalls) {
    const content = 'The tool call did not complete: the turn failed before its result was recorded.';
    const result: Message = { type: 'tool_result', callId, content, isError: true };
    session.context.push(result);
    await session.log.append(logPayloadOf(result)).catch(() => {});
  }
}

/** 7–8. TurnEnd, the turn's usage saved, then exactly one terminal event. */
export async function finish(turn: TurnRun, next: NextStep): Promise<void> {
  const { options } = turn;
  const { session, emit } = options;
  if (options.runtime.hooks.has('TurnEnd')) await turnEnd(options, statusOf(next), turn.toolCallCount);
  if (needsEndRecord(turn, next)) await recordEnd(turn, next);
  // Sub-agents' usage joins the turn's totals (and the session's) before the turn reports them.
  foldSubagentUsage(options);
  // The turn's usage records are saved before it ends, like everything else it produced.
  const saving = session.usage.written();
  const unsaved = saving === undefined ? undefined : await saving;
  if (unsaved !== undefined) {
    turn.reportError(toAgentError(unsaved, 'STORAGE_ERROR', 'saving the usage of a model call failed'));
  }
  const usage = copyUsageTotals(options.usageTotals);
  if (next.type === 'interruption') emit({ type: 'turn_suspended', pendingCalls: next.pendingCalls });
  else if (next.type === 'cancelled') emit({ type: 'turn_cancelled' });
  else if (next.type === 'final_output' && next.output !== undefined) {
    emit({ type: 'turn_complete', usage, output: next.output.value });
  } else emit({ type: 'turn_complete', usage });
}

/**
 * Extracts memories when the checkpoint interval is reached, then reloads the memories the prompt shows.
 * The messages are given up only once an extraction succeeded, so a failed or cancelled one leaves them
 * for the next extraction (at the next checkpoint or at close).
 */
async function memoryCheckpoint(options: TurnOptions): Promise<'done' | 'cancelled'> {
  const { runtime, session, signal, emit } = options;
  const memory = session.memory;
  const interval = runtime.config.memoryCheckpointInterval;
  if (memory === undefined || !session.checkpointDue(interval)) return 'done';
  if (signal.aborted) return 'cancelled';
  const messages = session.takeSinceCheckpoint();
  const memoryModel = runtime.config.memoryModel;
  const route = memoryModel === undefined ? session.model : runtime.models.resolve(memoryModel);
  const gated = turnGatedModel(options, route.provider);
  try {
    await memory.extract({
      messages,
      provider: gated.provider,
      modelId: route.info.id,
      sessionId: session.id,
      signal,
      onUsage: gated.attribute(usageSink(options)),
    });
  } catch (error) {
    session.returnSinceCheckpoint(messages);
    if (signal.aborted) return 'cancelled';
    emit({
      type: 'error',
      error: turnStopper(error) ?? toAgentError(error, 'MEMORY_ERROR', 'memory checkpoint failed'),
    });
    return 'done';
  }
  try {
    session.memories = await memory.load();
  } catch (error) {
    emit({ type: 'error', error: toAgentError(error, 'STORAGE_ERROR', 'reloading memories failed') });
  }
  return 'done';
}

/**
 * Runs TurnEnd (the caller checks that it has a handler); its failures are reported, never thrown. The dispatch's
 * own promise is handed back (no async wrapper): the turn's end waits one microtask less for it.
 */
function turnEnd(options: TurnOptions, status: TurnStatus, toolCallCount: number): Promise<void> {
  const { runtime, session, turnId, emit } = options;
  const failed = (error: unknown): void => {
    emit({ type: 'error', error: toAgentError(error, 'PLUGIN_ERROR', 'TurnEnd failed') });
  };
  try {
    return runtime.hooks
      .dispatch({
        event: 'TurnEnd',
        sessionId: session.id,
        turnId,
        data: { status, toolCallCount },
        timeoutMs: runtime.config.toolTimeoutMs,
      })
      .then((outcome) => {
        for (const error of outcome.errors) emit({ type: 'error', error });
      }, failed);
  } catch (error) {
    failed(error);
    return Promise.resolve();
  }
}

/** True when the turn must record that it ended (see `recordEnd`). */
function needsEndRecord(turn: TurnRun, next: NextStep): boolean {
  if (!turn.opened || next.type === 'interruption') return false;
  const last = turn.options.session.context.messages.at(-1);
  return last?.type !== 'assistant' || last.status !== 'complete';
}

/**
 * A turn whose last message is not its final answer says in the log that it ended, so that a resume can tell it
 * from a turn a crash cut (approvals/interrupted-turn.ts). A suspended turn's held batch says so already.
 */
async function recordEnd(turn: TurnRun, next: NextStep): Promise<void> {
  const { session, turnId } = turn.options;
  // A storage that fails here failed the turn already, and said so: this record is best effort.
  await session.log.append(turnEndedRecord(turnId, statusOf(next))).catch(() => {});
}
