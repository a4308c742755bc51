/**
 * What `continue()` starts from — the suspended turn's held batch, or the turn a crash cut — and the decisions
 * on a held batch's calls, recorded in the log before the batch.
 */
import { checkContinuable, checkDecision } from '../approvals/checks.js';
import { decisionRecord } from '../approvals/held-batch.js';
import type { InterruptedTurnRecord } from '../approvals/interrupted-turn.js';
import type { HeldBatch, TurnRunOptions } from '../kernel/approval-types.js';
import type { Budget, ContentBlock } from '../kernel/types.js';
import type { StructuredOutputPlan } from '../output/structured-output.js';
import type { SessionState } from '../turn/session-state.js';

/** What the controller starts a turn with: `steered` messages enter before its model call, `output` asks for JSON. */
export interface TurnStart {
  content: ContentBlock[];
  steered?: ContentBlock[][];
  output?: StructuredOutputPlan | undefined;
  run?: TurnRunOptions;
  /** Set to continue a suspended turn (same turn id): its held batch runs first. */
  resume?: HeldBatch;
  /** The turn's own budget (the `sendMessage` option). */
  budget?: Budget | undefined;
  /** Set to continue a turn a crash cut: what it left unfinished is reconciled first. */
  interrupted?: InterruptedTurnRecord;
  turnId?: string;
}

/**
 * The turn `continue()` starts: with a batch held, the suspended turn (same turn id, the batch taken off the
 * session); otherwise the turn a crash cut, its context reset to before the interrupted results. Throws
 * INVALID_INPUT (from `checkContinuable`) when there is nothing to continue or a call is undecided.
 */
export function continuation(
  state: SessionState,
  run: TurnRunOptions,
  budget: Budget | undefined,
): TurnStart {
  const cut = state.interrupted;
  if (state.heldBatch === undefined && cut !== undefined) {
    // The context the cut turn continues from: its unfinished calls without the interrupted result.
    state.interrupted = undefined;
    state.context.reset(cut.messages, cut.chars);
    return { content: [], run, interrupted: cut.record, budget };
  }
  const batch = checkContinuable(state, run);
  state.heldBatch = undefined;
  return { turnId: batch.turnId, content: [], run, resume: batch, budget };
}

/** Records a decision on a pending call: in the log first, then in the batch, so a crash between loses nothing. */
export async function recordDecision(options: {
  session: SessionState;
  callId: unknown;
  approved: boolean;
  reason: unknown;
}): Promise<void> {
  const decided = checkDecision(options);
  const { approved } = options;
  await options.session.log.append(decisionRecord(decided.callId, approved, decided.reason));
  decided.batch.decisions.set(decided.callId, { approved, reason: decided.reason });
}
