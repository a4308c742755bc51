/**
 * How a turn begins (0006 §9.1 steps 1–3): the TurnStart hook, the skills invoked with /name, the user message.
 * A turn that continues a suspended one begins instead with the batch it held (3c), and one that continues a turn
 * a crash cut with what that turn left unfinished (3d).
 */

import { continuedRecord } from '../approvals/held-batch.js';
import {
  type InterruptedTurnRecord,
  reconcileCalls,
  turnContinuedRecord,
} from '../approvals/interrupted-turn.js';
import { cutBlocks, userMessageLimitChars } from '../context/context-limits.js';
import type { HeldBatch } from '../kernel/approval-types.js';
import { AgentError } from '../kernel/error.js';
import type { ContentBlock } from '../kernel/types.js';
import { outputPromptSection } from '../output/structured-output.js';
import { buildDynamicPrompt } from '../prompt/index.js';
import { cachedStablePrompt } from './stable-prompt.js';
import { toolStep } from './tool-step.js';
import type { NextStep, TurnRun } from './turn-run.js';

/** Steps 1–3 of a new turn; answers `cancelled` when a TurnStart hook stopped it, else `run_again`. */
export async function begin(turn: TurnRun): Promise<NextStep> {
  const { runtime, session, input, turnId } = turn.options;
  const { config, hooks } = runtime;
  // 1. TurnStart: plugins may add dynamic prompt sections, or stop the turn before the model is called.
  const userText = textOf(input.content);
  if (hooks.has('TurnStart')) {
    const outcome = await hooks.dispatch({
      event: 'TurnStart',
      sessionId: session.id,
      turnId,
      data: { userInput: userText, dynamicSections: [] },
      timeoutMs: config.toolTimeoutMs,
    });
    for (const error of outcome.errors) turn.reportError(error);
    if (outcome.abortReason !== undefined) {
      turn.reportError(
        new AgentError({
          code: 'REQUEST_CANCELLED',
          message: `a TurnStart hook stopped the turn: ${outcome.abortReason}`,
          sourceComponent: 'plugin',
        }),
      );
      return { type: 'cancelled' };
    }
    turn.dynamicSections = readDynamicSections(outcome.data);
  }

  // 2. Skills invoked with /name are injected before the user message.
  for (const skill of runtime.skills.detectInvocations(userText)) {
    const injection = runtime.skills.renderInjection(skill);
    if (injection.type === 'system') {
      await session.commit({ type: 'system', content: injection.content }, turnId);
    }
  }

  // 3. The user message is saved before the model is called; one too large for the window is cut (head and
  // tail, with a notice) as it enters, so it can never fill every later request.
  const userLimit = userMessageLimitChars({
    contextWindow: session.model.info.contextWindow,
    promptChars: cachedStablePrompt(runtime, session).length,
    toolsChars: runtime.toolsChars,
  });
  await session.commit({ type: 'user', content: cutBlocks(input.content, userLimit).slice() }, turnId);
  turn.opened = true;
  session.countTurn('input');
  addOutputSection(turn);
  return { type: 'run_again' };
}

/**
 * 3c. A continued turn first runs the batch it held, once the log says it is no longer held (so a crash from
 * here on leaves a cut turn, whose mutating calls never run again unasked). Answers what its tool step answers.
 */
export async function continueHeld(turn: TurnRun, held: HeldBatch): Promise<NextStep> {
  const { session, turnId } = turn.options;
  addOutputSection(turn);
  turn.toolCallCount = held.toolCallCount;
  for (const call of held.calls) turn.openCalls.push(call.callId);
  await session.log.append(continuedRecord(turnId));
  turn.opened = true;
  turn.held = held;
  return toolStep(turn, held.calls, promptChars(turn));
}

/**
 * 3d. A turn that continues one a crash cut (docs/decisions.md): the log records the continuation first (a replay
 * drops the cut answer there), then its calls without a result are reconciled as a held batch and run (a call
 * that may have run waits for a decision); without such calls the model is asked again.
 */
export async function continueInterrupted(
  turn: TurnRun,
  interrupted: InterruptedTurnRecord,
): Promise<NextStep> {
  const { runtime, session, turnId, emit } = turn.options;
  addOutputSection(turn);
  turn.toolCallCount = interrupted.toolCallCount;
  await session.log.append(turnContinuedRecord(turnId));
  turn.opened = true;
  const held = await reconcileCalls({ tools: runtime.tools, config: runtime.config, turnId, interrupted });
  emit({
    type: 'turn_continued',
    calls: held.calls.map(({ callId, toolName, mayHaveRun }) => ({
      callId,
      toolName,
      mayHaveRun: mayHaveRun === true,
    })),
    askedAgain: held.calls.length === 0,
  });
  if (held.calls.length === 0) return { type: 'run_again' };
  for (const call of held.calls) turn.openCalls.push(call.callId);
  turn.held = held;
  return toolStep(turn, held.calls, promptChars(turn));
}

/** The size of the system prompt the model call that asked for a continued batch would have had. */
function promptChars(turn: TurnRun): number {
  const { runtime, session } = turn.options;
  return (
    cachedStablePrompt(runtime, session).length +
    buildDynamicPrompt({
      memories: session.memories,
      environmentContext: runtime.config.environmentContext,
      dynamicSections: turn.dynamicSections,
    }).length
  );
}

/** A structured-output turn tells the model the format of its answer in the dynamic part of the prompt. */
function addOutputSection(turn: TurnRun): void {
  const { output, session } = turn.options;
  const section = output === undefined ? '' : outputPromptSection(output, session.model.info);
  if (section !== '') turn.dynamicSections = [...turn.dynamicSections, section];
}

/** The text of the user's input, for skills and the TurnStart hook. */
function textOf(content: readonly ContentBlock[]): string {
  let text = '';
  for (const block of content) {
    if (block.type === 'text') text = text === '' ? block.text : `${text}\n${block.text}`;
  }
  return text;
}

const NO_SECTIONS: readonly string[] = Object.freeze([]);

/** The dynamic sections the TurnStart hooks' data ends with (strings only, none empty). */
function readDynamicSections(data: unknown): readonly string[] {
  if (typeof data !== 'object' || data === null) return NO_SECTIONS;
  const sections = (data as { dynamicSections?: unknown }).dynamicSections;
  if (!Array.isArray(sections) || sections.length === 0) return NO_SECTIONS;
  return sections.filter((section): section is string => typeof section === 'string' && section !== '');
}
