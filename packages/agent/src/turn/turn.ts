import { isThenable } from '../kernel/settle.js';
import { copyUsageTotals } from '../usage/usage.js';
import { begin, continueHeld, continueInterrupted } from './begin-step.js';
import { checkpoint, finish, recordFailure, statusOf } from './finish-step.js';
import { modelStep } from './model-step.js';
import type { TurnResult } from './running-turn.js';
import { toolStep } from './tool-step.js';
import type { TurnOptions } from './turn-options.js';
import { type NextStep, startTurnRun } from './turn-run.js';
import { withTurnUsage } from './turn-usage.js';

/**
 * Runs one turn to its end (0006 §9.1): begin (1–3: TurnStart, skills, the user message) → [model step (4a–4f)
 * → tool step (4g–4i)]* → memory checkpoint (6) → TurnEnd and the terminal event (7–8). Each step answers what
 * happens next (a NextStep); this loop only follows the answers. Every failure is reported as an `error` event;
 * the terminal event is emitted in `finally`, so it always comes, once. A batch with calls that need approval
 * and no approver ends the turn suspended; `options.resume` continues it (3c instead of 1–3), and
 * `options.interrupted` continues a turn a crash cut (3d).
 */
export async function runTurn(given: TurnOptions): Promise<TurnResult> {
  const turn = startTurnRun(withTurnUsage(given));
  const { resume, interrupted, usageTotals } = turn.options;
  let next: NextStep = { type: 'failed' };
  try {
    if (resume !== undefined) next = await continueHeld(turn, resume);
    else if (interrupted !== undefined) next = await continueInterrupted(turn, interrupted);
    else next = await begin(turn);
    while (next.type === 'run_again') {
      const step = await modelStep(turn);
      next = step.type === 'run_tools' ? await toolStep(turn, step.calls, step.promptChars) : step;
    }
    const checked = checkpoint(turn, next);
    next = isThenable(checked) ? await checked : checked;
  } catch (error) {
    next = { type: 'failed' };
    await recordFailure(turn, error);
  } finally {
    try {
      await finish(turn, next);
    } finally {
      turn.cancelScope.close();
    }
  }
  const status = statusOf(next);
  const usage = copyUsageTotals(usageTotals);
  return next.type === 'final_output' && next.output !== undefined
    ? { status, output: next.output.value, usage }
    : { status, usage };
}
