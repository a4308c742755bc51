/**
 * The tool step of a turn (0006 §9.1 steps 4g–4i): the approval gate decides the batch's calls (or holds the
 * batch, and the turn suspends), the batch runs, its results enter the context in call order, and the
 * tool-call limit is checked.
 */

import { gateApprovals } from '../approvals/gate.js';
import { heldBatchRecord, pendingCallsOf } from '../approvals/held-batch.js';
import { capToolResult, toolResultLimitChars } from '../context/context-limits.js';
import { AgentError } from '../kernel/error.js';
import { isThenable } from '../kernel/settle.js';
import { fillTemplate, TOOL_LIMIT_NOTICE } from '../kernel/templates.js';
import type { ToolCallRequest } from '../kernel/types.js';
import type { ToolCallOutcome } from '../tools/tool-dispatch.js';
import type { SessionState } from './session-state.js';
import { closeCall, type NextStep, type TurnRun, toolHooksOf } from './turn-run.js';

/**
 * One batch: calls that need approval are decided (or the batch is held and the turn suspends), then the batch
 * runs; its results are saved as they arrive, in call order, and waited for once at its end. Each enters the
 * context cut to its share of the window (the tool_call_end event had it whole). `promptChars` is the size of
 * the system prompt of the model call that asked for the calls.
 */
export async function toolStep(
  turn: TurnRun,
  calls: readonly ToolCallRequest[],
  promptChars: number,
): Promise<NextStep> {
  const { runtime, session, turnId, signal, emit } = turn.options;
  const { config } = runtime;
  // 4g. The approval gate: the turn writes what it decided; a held batch is saved after its tool_call messages.
  const gating = gateApprovals({
    tools: runtime.tools,
    config,
    sessionId: session.id,
    turnId,
    calls,
    held: turn.held,
    toolCallCount: turn.toolCallCount,
    run: turn.options.approval ?? {},
    signal,
  });
  const gate = isThenable(gating) ? await gating : gating;
  // Only the batch the turn was continued with is held: the turn's later batches are decided afresh.
  turn.held = undefined;
  if (gate.hold !== undefined) {
    await session.log.append(heldBatchRecord(gate.hold));
    session.heldBatch = gate.hold;
    // The event is the caller's to keep: it must not share objects with the held batch.
    return { type: 'interruption', pendingCalls: structuredClone(pendingCallsOf(gate.hold)) };
  }

  // 4g–4h. The batch, with the hooks it runs; each result is saved as it arrives.
  const resultLimit = toolResultLimitChars({
    contextWindow: session.model.info.contextWindow,
    promptChars,
    toolsChars: runtime.toolsChars,
    share: config.maxToolResultShare,
  });
  const results = new BatchResults(session, turn.openCalls, resultLimit);
  const { beforeToolUse, afterToolUse } = toolHooksOf(turn);
  await runtime.tools.executeBatch({
    calls,
    sessionId: session.id,
    turnId,
    signal,
    cancelScope: turn.cancelScope,
    beforeToolUse,
    afterToolUse,
    runnable: config.maxToolCallsPerTurn - turn.toolCallCount,
    emit,
    refused: gate.refused,
    onResult: results.add,
  });
  // Earlier writes settle before the last one: their failures are known once it settled. Awaited here, not in
  // a function of its own: a tick less per step.
  try {
    await results.last;
  } catch {
    // Recorded in `failure` by `add`, with the first failure before it.
  }
  if (results.failure !== undefined) throw results.failure.error;

  // 4i. The count, and the limit: reaching it ends the turn with a notice to the model.
  turn.toolCallCount += calls.length;
  if (turn.cancelScope.cancelled) return { type: 'cancelled' };
  if (turn.toolCallCount >= config.maxToolCallsPerTurn) {
    const limit = config.maxToolCallsPerTurn;
    await session.commit({ type: 'system', content: fillTemplate(TOOL_LIMIT_NOTICE, { limit }) });
    turn.reportError(
      new AgentError({
        code: 'MAX_TOOL_CALLS_EXCEEDED',
        message: `the turn ran ${turn.toolCallCount} tool calls and its limit is ${limit}`,
      }),
    );
    return { type: 'final_output' };
  }
  return { type: 'run_again' };
}

/**
 * The write-ahead of one batch's results: each enters the context and is queued for writing as it arrives (the
 * log keeps their order); the step waits for `last` once, at the batch's end, then throws the first storage
 * failure among them (`failure`).
 */
class BatchResults {
  readonly #session: SessionState;
  readonly #openCalls: string[];
  readonly #resultLimit: number;
  /** The latest result's write: the log writes in order, so it settles after every earlier one. */
  last: Promise<void> | undefined;
  /** The first write that failed. */
  failure: { error: unknown } | undefined;

  constructor(session: SessionState, openCalls: string[], resultLimit: number) {
    this.#session = session;
    this.#openCalls = openCalls;
    this.#resultLimit = resultLimit;
  }

  /** The batch's `onResult`: the result enters the context and is queued for writing. */
  readonly add = (outcome: ToolCallOutcome): void => {
    closeCall(this.#openCalls, outcome.callId);
    const { isError } = outcome.output;
    const content = capToolResult(outcome.output.content, this.#resultLimit);
    const write = this.#session.commit({ type: 'tool_result', callId: outcome.callId, content, isError });
    // Results written in one pass share its promise: one handler is enough for them.
    if (write !== this.last) write.catch(this.#recordFailure);
    this.last = write;
  };

  readonly #recordFailure = (error: unknown): void => {
    this.failure ??= { error };
  };
}
