/**
 * The model step of a turn (0006 §9.1 steps 4a–4f): steered messages enter, the prompt is built, the context
 * compacted when it must be, the model called, and its answer saved and judged: the turn's final answer, one
 * more model step, or tool calls for the tool step.
 */

import { interruptedNotice } from '../context/context.js';
import { judgeAnswer, OutputInvalidError, repairNotice } from '../output/structured-output.js';
import type { ChatRequest } from '../ports/model.js';
import { buildDynamicPrompt, placeDynamicPrompt } from '../prompt/index.js';
import { parseToolArguments, type ToolCallRequest } from '../tools/tool-dispatch.js';
import { compact } from './compact-step.js';
import { type ModelAnswer, streamAnswer } from './model-answer.js';
import { cachedStablePrompt } from './stable-prompt.js';
import { deliverSteering, hasSteering } from './steering.js';
import type { NextStep, TurnRun } from './turn-run.js';

/** What a model step answers: what happens next, or the tool calls to run (saved already). */
type ModelStepOutcome = NextStep | { type: 'run_tools'; calls: ToolCallRequest[]; promptChars: number };

/** One model step, from the steered messages to the saved tool calls of the answer. */
export async function modelStep(turn: TurnRun): Promise<ModelStepOutcome> {
  const { options } = turn;
  const { runtime, session, output } = options;
  const { config } = runtime;
  // Steered messages enter at each step boundary: here, and again after a compaction (see steering.ts).
  if (hasSteering(options)) await deliverSteering(options);
  // 4a. The stable part is cached until the next compaction; the dynamic part is rebuilt every call.
  let stable = cachedStablePrompt(runtime, session);
  const dynamic = buildDynamicPrompt({
    memories: session.memories,
    environmentContext: config.environmentContext,
    dynamicSections: turn.dynamicSections,
  });

  // 4b. Compaction, checked before every model call.
  const promptChars = stable.length + dynamic.length;
  const estimated = session.context.estimateTokens({ promptChars, toolsChars: runtime.toolsChars });
  if (config.autoCompact && estimated > session.model.info.contextWindow * config.compactThreshold) {
    const compacted = await compact(options, { estimatedTokens: estimated, promptChars, force: false });
    if (compacted === 'cancelled') return { type: 'cancelled' };
    if (compacted === 'compacted') stable = cachedStablePrompt(runtime, session);
    await deliverSteering(options);
  }
  if (turn.cancelScope.cancelled) return { type: 'cancelled' };

  // 4c–4d. One streamed model call. The dynamic part goes before the latest user message, not into the
  // system prompt, so that a change of it does not void the provider's prefix cache (docs/decisions.md).
  const request: ChatRequest = {
    modelId: session.model.info.id,
    purpose: 'turn',
    systemPrompt: stable,
    systemPromptParts: { stable, dynamic },
    messages: placeDynamicPrompt(session.context.messages, dynamic),
    sessionId: session.id,
    // A model without tool use is offered no tools.
    tools: session.model.info.capabilities.toolUse ? runtime.tools.specs.slice() : [],
  };
  if (output !== undefined) request.responseFormat = output.format;
  const answer = await streamAnswer(turn, request);
  const tooLarge = answer.error?.contextLengthExceeded === true && !answer.receivedAny;
  if (tooLarge && config.autoCompact && !turn.contextRetryUsed) {
    // The provider says the request is too large: compact now (a summary, not pruning alone) and send it once more.
    turn.contextRetryUsed = true;
    const compacted = await compact(options, { estimatedTokens: estimated, promptChars, force: true });
    if (compacted === 'cancelled') return { type: 'cancelled' };
    if (compacted === 'compacted') return { type: 'run_again' };
  }

  // 4e. The assistant message enters the context whatever came back; a partial one is incomplete.
  // An answer of tool calls alone has no message of its own to save.
  if (answer.content.length > 0) await saveAnswer(turn, answer);
  if (answer.cancelled) return { type: 'cancelled' };
  if (answer.error !== undefined) {
    turn.reportError(answer.error);
    return { type: 'failed' };
  }

  // 4f. No tool call: the turn's answer is complete (unless a message was steered in meanwhile); a structured
  // one must pass its schema, with one repair. Otherwise the calls are saved, for the tool step to run.
  if (answer.toolCalls.length === 0) {
    // Awaited only when there is something to wait for: awaiting the plain answer costs a tick and a promise.
    const judged = judgeFinalAnswer(turn, answer);
    return judged instanceof Promise ? await judged : judged;
  }
  // The tools start once the calls are saved; awaited here, not in a function of its own: a tick less per step.
  const saved = saveToolCalls(turn, answer);
  if (saved.written !== undefined) await saved.written;
  return { type: 'run_tools', calls: saved.calls, promptChars };
}

/**
 * 4e. The assistant message, saved; an interrupted one is followed by a notice derived from it, not saved. A
 * complete one hands back the commit's own promise (no async wrapper: one promise and a tick less per answer).
 */
function saveAnswer(turn: TurnRun, answer: ModelAnswer): Promise<void> {
  const { session } = turn.options;
  const interrupted = answer.cancelled || answer.error !== undefined;
  if (!interrupted) return session.commit({ type: 'assistant', content: answer.content, status: 'complete' });
  return session.commit({ type: 'assistant', content: answer.content, status: 'incomplete' }).then(() => {
    // Replaying the log adds the notice at the same place.
    session.addDerived(interruptedNotice());
  });
}

/**
 * 4f. An answer without tool calls: the final one, or one more step (a steered message, the repair round). Only
 * a structured answer that fails its schema has something to wait for (its repair notice is saved).
 */
function judgeFinalAnswer(turn: TurnRun, answer: ModelAnswer): NextStep | Promise<NextStep> {
  const { output } = turn.options;
  if (hasSteering(turn.options)) return { type: 'run_again' };
  if (output === undefined) return { type: 'final_output' };
  const verdict = judgeAnswer(output, answer.content);
  if (verdict.ok) return { type: 'final_output', output: { value: verdict.value } };
  return repairOrFail(turn, verdict);
}

/** A structured answer that failed its schema: one repair round, then the turn fails. */
async function repairOrFail(
  turn: TurnRun,
  verdict: Extract<ReturnType<typeof judgeAnswer>, { ok: false }>,
): Promise<NextStep> {
  const { session, emit } = turn.options;
  if (!turn.repairUsed) {
    turn.repairUsed = true;
    await session.commit({ type: 'system', content: repairNotice(verdict.errors) });
    emit({ type: 'output_repair', errors: verdict.errors });
    return { type: 'run_again' };
  }
  turn.reportError(new OutputInvalidError(verdict));
  return { type: 'failed' };
}

/**
 * 4f. Tool calls enter the context before they run, then their results in call order. The calls are queued for
 * writing together (appends made without waiting share one write pass); the tools start once `written` settled.
 */
function saveToolCalls(
  turn: TurnRun,
  answer: ModelAnswer,
): { calls: ToolCallRequest[]; written: Promise<unknown> | undefined } {
  const { session } = turn.options;
  const calls: ToolCallRequest[] = [];
  let written: Promise<unknown> | undefined;
  for (const call of answer.toolCalls) {
    const parsed = parseToolArguments(call.arguments);
    const request: ToolCallRequest = parsed.ok
      ? { callId: call.callId, toolName: call.toolName, arguments: parsed.value }
      : { callId: call.callId, toolName: call.toolName, arguments: call.arguments, parseError: parsed.error };
    calls.push(request);
    turn.openCalls.push(call.callId);
    const { callId, toolName, arguments: args } = request;
    const saved = session.commit({ type: 'tool_call', callId, toolName, arguments: args });
    // The calls' appends share the log's write pass, and so its promise; another one is joined, not dropped.
    written = written === undefined || written === saved ? saved : Promise.all([written, saved]);
  }
  return { calls, written };
}
