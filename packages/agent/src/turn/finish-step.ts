/**
 * How a turn ends (0006 §9.1 steps 6–8): the memory checkpoint, TurnEnd, and exactly one terminal event; and
 * what a turn that failed leaves behind it (every saved tool call paired with a result).
 */

import { logPayloadOf } from '../context/context.js';
import { toAgentError } from '../kernel/error.js';
import type { Message } from '../kernel/types.js';
import { copyUsageTotals } from '../usage/usage.js';
import type { TurnStatus } from './running-turn.js';
import type { NextStep, TurnRun } from './turn-run.js';
import { memoryCheckpoint, turnEnd } from './turn-steps.js';
import { foldSubagentUsage } from './turn-usage.js';

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
export async function checkpoint(turn: TurnRun, next: NextStep): Promise<NextStep> {
  if (next.type === 'cancelled' || next.type === 'interruption') return next;
  return (await memoryCheckpoint(turn.options)) === 'cancelled' ? { type: 'cancelled' } : next;
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
  await turnEnd(options, statusOf(next), turn.toolCallCount);
  // Sub-agents' usage joins the turn's totals (and the session's) before the turn reports them.
  foldSubagentUsage(options);
  // The turn's usage records are saved before it ends, like everything else it produced.
  const unsaved = await session.usage.written();
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
