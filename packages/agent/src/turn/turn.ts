import { gateApprovals } from '../approvals/gate.js';
import { continuedRecord, heldBatchRecord, pendingCallsOf } from '../approvals/held-batch.js';
import { interruptedNotice, logPayloadOf } from '../context/context.js';
import {
  capToolResult,
  cutBlocks,
  toolResultLimitChars,
  userMessageLimitChars,
} from '../context/context-limits.js';
import { hookRunner } from '../hooks/hook.js';
import type { PendingToolCall } from '../kernel/approval-types.js';
import { AgentError, toAgentError } from '../kernel/error.js';
import { fillTemplate, TOOL_LIMIT_NOTICE } from '../kernel/templates.js';
import type { Message } from '../kernel/types.js';
import {
  judgeAnswer,
  OutputInvalidError,
  outputPromptSection,
  repairNotice,
} from '../output/structured-output.js';
import type { ChatRequest } from '../ports/model.js';
import { buildDynamicPrompt, placeDynamicPrompt } from '../prompt/index.js';
import { parseToolArguments, type ToolCallOutcome, type ToolCallRequest } from '../tools/tool-dispatch.js';
import { copyUsageTotals } from '../usage/usage.js';
import { compact } from './compact-step.js';
import type { TurnResult, TurnStatus } from './running-turn.js';
import type { SessionState } from './session-state.js';
import { deliverSteering, hasSteering } from './steering.js';
import type { TurnOptions } from './turn-options.js';
import {
  cachedStablePrompt,
  memoryCheckpoint,
  readDynamicSections,
  streamAnswer,
  textOf,
  turnEnd,
} from './turn-steps.js';
import { foldSubagentUsage, type TurnUsageOptions, withTurnUsage } from './turn-usage.js';

/**
 * Runs one turn to its end (0006 §9.1): TurnStart → skills → user message → [prompt → compaction →
 * model → assistant message → tools]* → memory checkpoint → TurnEnd → terminal event. Every failure is
 * reported as an `error` event; the terminal event is emitted in `finally`, so it always comes, once. A batch
 * with calls that need approval and no approver ends the turn suspended; `options.resume` continues it.
 */
export async function runTurn(given: TurnOptions): Promise<TurnResult> {
  const options = withTurnUsage(given);
  const ended = await runTurnSteps(options);
  return { ...ended, usage: copyUsageTotals(options.usageTotals) };
}

async function runTurnSteps(options: TurnUsageOptions): Promise<Omit<TurnResult, 'usage'>> {
  const { runtime, session, input, turnId, signal, emit, output } = options;
  const { config, hooks } = runtime;
  const context = session.context;
  const reportError = (error: AgentError): void => emit({ type: 'error', error });
  const hookScope = { sessionId: session.id, turnId, timeoutMs: runtime.tools.timeoutMs, reportError };
  // Widened: toolRound, a closure, sets it too, which narrowing cannot see.
  let status = 'completed' as TurnStatus;
  let toolCallCount = 0;
  let pendingCalls: PendingToolCall[] = [];
  // Structured output: the parsed answer once valid, and whether the one repair round was used.
  let outputValue: { value: unknown } | undefined;
  let repairUsed = false;
  const openCalls = new Set<string>();
  const commitSystem = (content: string): Promise<void> =>
    commitMessage(session, { type: 'system', content });

  try {
    let dynamicSections: readonly string[] = [];
    // 1–3 are skipped when the turn continues a suspended one: its held batch runs first (see approvals.ts).
    const resume = options.resume;
    if (resume === undefined) {
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
        for (const error of outcome.errors) reportError(error);
        if (outcome.abortReason !== undefined) {
          reportError(
            new AgentError({
              code: 'REQUEST_CANCELLED',
              message: `a TurnStart hook stopped the turn: ${outcome.abortReason}`,
              sourceComponent: 'plugin',
            }),
          );
          status = 'cancelled';
          return { status };
        }
        dynamicSections = readDynamicSections(outcome.data);
      }

      // 2. Skills invoked with /name are injected before the user message.
      for (const skill of runtime.skills.detectInvocations(userText)) {
        const injection = runtime.skills.renderInjection(skill);
        if (injection.type === 'system') await commitSystem(injection.content);
      }

      // 3. The user message is saved before the model is called; one too large for the window is cut (head and
      // tail, with a notice) as it enters, so it can never fill every later request.
      const userLimit = userMessageLimitChars({
        contextWindow: session.model.info.contextWindow,
        promptChars: cachedStablePrompt(runtime, session).length,
        toolsChars: runtime.toolsChars,
      });
      await commitMessage(session, { type: 'user', content: cutBlocks(input.content, userLimit).slice() });
      session.turnCount += 1;
      session.turnsSinceCheckpoint += 1;
    }
    const outputSection = output === undefined ? '' : outputPromptSection(output, session.model.info);
    if (outputSection !== '') dynamicSections = [...dynamicSections, outputSection];

    /**
     * One batch: calls that need approval are decided (or the batch is held and the turn suspends), then the
     * batch runs; its results are saved as they arrive, in call order, and waited for once at its end. Each
     * enters the context cut to its share of the window (the tool_call_end event had it whole). 'end' when the
     * turn ends here (suspended, cancelled, or the tool-call limit, which ends it with a notice to the model).
     */
    const toolRound = async (calls: ToolCallRequest[], promptChars: number): Promise<'next' | 'end'> => {
      const gate = await gateApprovals({
        tools: runtime.tools,
        config,
        sessionId: session.id,
        turnId,
        calls,
        held: resume,
        toolCallCount,
        run: options.approval ?? {},
        signal,
      });
      if (gate.hold !== undefined) {
        // Held: saved as metadata in the log (after the batch's tool_call messages); the turn suspends.
        await session.log.append(heldBatchRecord(gate.hold));
        session.heldBatch = gate.hold;
        status = 'suspended';
        // The event is the caller's to keep: it must not share objects with the held batch.
        pendingCalls = structuredClone(pendingCallsOf(gate.hold));
        return 'end';
      }
      const resultLimit = toolResultLimitChars({
        contextWindow: session.model.info.contextWindow,
        promptChars,
        toolsChars: runtime.toolsChars,
        share: config.maxToolResultShare,
      });
      const results = batchResults(session, openCalls, resultLimit);
      await runtime.tools.executeBatch({
        calls,
        sessionId: session.id,
        turnId,
        signal,
        beforeToolUse: hookRunner(hooks, 'BeforeToolUse', hookScope),
        afterToolUse: hookRunner(hooks, 'AfterToolUse', hookScope),
        runnable: config.maxToolCallsPerTurn - toolCallCount,
        emit,
        refused: gate.refused,
        onResult: results.add,
      });
      await results.written();
      toolCallCount += calls.length;
      if (signal.aborted) {
        status = 'cancelled';
        return 'end';
      }
      if (toolCallCount >= config.maxToolCallsPerTurn) {
        await commitSystem(fillTemplate(TOOL_LIMIT_NOTICE, { limit: config.maxToolCallsPerTurn }));
        reportError(
          new AgentError({
            code: 'MAX_TOOL_CALLS_EXCEEDED',
            message: `the turn ran ${toolCallCount} tool calls and its limit is ${config.maxToolCallsPerTurn}`,
          }),
        );
        return 'end';
      }
      return 'next';
    };

    // 3b. A continued turn first runs the batch it held, once the log says it is no longer held (so a crash
    // from here on gives its calls the interrupted result, never a second run).
    let proceed = true;
    if (resume !== undefined) {
      toolCallCount = resume.toolCallCount;
      for (const call of resume.calls) openCalls.add(call.callId);
      await session.log.append(continuedRecord(turnId));
      const promptChars =
        cachedStablePrompt(runtime, session).length +
        buildDynamicPrompt({
          memories: session.memories,
          environmentContext: config.environmentContext,
          dynamicSections,
        }).length;
      proceed = (await toolRound(resume.calls, promptChars)) === 'next';
    }

    // 4. Model calls and tool rounds until the model answers without tool calls.
    let contextRetryUsed = false;
    while (proceed) {
      // Steered messages enter at each step boundary: here, and again after a compaction (see steering.ts).
      await deliverSteering(options);
      // 4a. The stable part is cached until the next compaction; the dynamic part is rebuilt every call.
      let stable = cachedStablePrompt(runtime, session);
      const dynamic = buildDynamicPrompt({
        memories: session.memories,
        environmentContext: config.environmentContext,
        dynamicSections,
      });

      // 4b. Compaction, checked before every model call.
      const promptChars = stable.length + dynamic.length;
      const estimated = context.estimateTokens({ promptChars, toolsChars: runtime.toolsChars });
      if (config.autoCompact && estimated > session.model.info.contextWindow * config.compactThreshold) {
        const compacted = await compact(options, { estimatedTokens: estimated, promptChars, force: false });
        if (compacted === 'cancelled') {
          status = 'cancelled';
          break;
        }
        if (compacted === 'compacted') stable = cachedStablePrompt(runtime, session);
        await deliverSteering(options);
      }
      if (signal.aborted) {
        status = 'cancelled';
        break;
      }

      // 4c–4d. One streamed model call. The dynamic part goes before the latest user message, not into the
      // system prompt, so that a change of it does not void the provider's prefix cache (docs/decisions.md).
      const request: ChatRequest = {
        modelId: session.model.info.id,
        purpose: 'turn',
        systemPrompt: stable,
        systemPromptParts: { stable, dynamic },
        messages: placeDynamicPrompt(context.messages, dynamic),
        sessionId: session.id,
        // A model without tool use is offered no tools.
        tools: session.model.info.capabilities.toolUse ? runtime.tools.specs.slice() : [],
      };
      if (output !== undefined) request.responseFormat = output.format;
      const answer = await streamAnswer(options, request);
      const tooLarge = answer.error?.contextLengthExceeded === true && !answer.receivedAny;
      if (tooLarge && config.autoCompact && !contextRetryUsed) {
        // The provider says the request is too large: compact now (a summary, not pruning alone) and send it once more.
        contextRetryUsed = true;
        const compacted = await compact(options, { estimatedTokens: estimated, promptChars, force: true });
        if (compacted === 'cancelled') {
          status = 'cancelled';
          break;
        }
        if (compacted === 'compacted') continue;
      }

      // 4e. The assistant message enters the context whatever came back; a partial one is incomplete.
      const interrupted = answer.cancelled || answer.error !== undefined;
      if (answer.content.length > 0) {
        const statusOfMessage = interrupted ? 'incomplete' : 'complete';
        await commitMessage(session, { type: 'assistant', content: answer.content, status: statusOfMessage });
        if (interrupted) {
          // The notice is derived, not saved: replaying the log adds it at the same place.
          const notice = interruptedNotice();
          context.push(notice);
          session.sinceCheckpoint.push(notice);
        }
      }
      if (answer.cancelled) {
        status = 'cancelled';
        break;
      }
      if (answer.error !== undefined) {
        reportError(answer.error);
        status = 'failed';
        break;
      }

      // 4f. No tool call: the turn's answer is complete (unless a message was steered in meanwhile); a
      // structured one must pass its schema, with one repair.
      if (answer.toolCalls.length === 0) {
        if (hasSteering(options)) continue;
        if (output === undefined) break;
        const verdict = judgeAnswer(output, answer.content);
        if (verdict.ok) {
          outputValue = { value: verdict.value };
          break;
        }
        if (!repairUsed) {
          repairUsed = true;
          await commitSystem(repairNotice(verdict.errors));
          emit({ type: 'output_repair', errors: verdict.errors });
          continue;
        }
        reportError(new OutputInvalidError(verdict));
        status = 'failed';
        break;
      }

      // 4g. Tool calls enter the context before they run, then their results in call order. The calls are
      // queued for writing together (appends made without waiting share one write pass) and the tools start
      // once all of them are saved.
      const calls: ToolCallRequest[] = [];
      const callsWritten: Promise<void>[] = [];
      for (const call of answer.toolCalls) {
        const parsed = parseToolArguments(call.arguments);
        const request: ToolCallRequest = parsed.ok
          ? { callId: call.callId, toolName: call.toolName, arguments: parsed.value }
          : {
              callId: call.callId,
              toolName: call.toolName,
              arguments: call.arguments,
              parseError: parsed.error,
            };
        calls.push(request);
        openCalls.add(call.callId);
        const { callId, toolName, arguments: args } = request;
        callsWritten.push(commitMessage(session, { type: 'tool_call', callId, toolName, arguments: args }));
      }
      await Promise.all(callsWritten);

      // 4h–4i. Approvals, then the batch.
      if ((await toolRound(calls, promptChars)) === 'end') break;
    }

    // 6. Memory checkpoint every N turns, inside the turn, before it ends (SPEC §5.14).
    // A suspended turn is not over: its checkpoint comes when it is continued and ends.
    if (
      status !== 'cancelled' &&
      status !== 'suspended' &&
      (await memoryCheckpoint(options)) === 'cancelled'
    ) {
      status = 'cancelled';
    }
  } catch (error) {
    status = 'failed';
    // Storage failures arrive as STORAGE_ERROR already (the session log wraps them); anything else is unexpected.
    reportError(toAgentError(error, 'INTERNAL_ERROR', 'the turn failed unexpectedly'));
    // Keep every tool call paired with a result, in the context the next turn sees.
    for (const callId of openCalls) {
      const content = 'The tool call did not complete: the turn failed before its result was recorded.';
      const result: Message = { type: 'tool_result', callId, content, isError: true };
      context.push(result);
      await session.log.append(logPayloadOf(result)).catch(ignore);
    }
  } finally {
    // 7–8. TurnEnd, then exactly one terminal event.
    await turnEnd(options, status, toolCallCount);
    // Sub-agents' usage joins the turn's totals (and the session's) before the turn reports them.
    foldSubagentUsage(options);
    // The turn's usage records are saved before it ends, like everything else it produced.
    const unsaved = await session.usage.written();
    if (unsaved !== undefined) {
      reportError(toAgentError(unsaved, 'STORAGE_ERROR', 'saving the usage of a model call failed'));
    }
    const usage = copyUsageTotals(options.usageTotals);
    if (status === 'suspended') emit({ type: 'turn_suspended', pendingCalls });
    else if (status === 'cancelled') emit({ type: 'turn_cancelled' });
    else if (status === 'completed' && outputValue !== undefined) {
      emit({ type: 'turn_complete', usage, output: outputValue.value });
    } else emit({ type: 'turn_complete', usage });
  }
  return status === 'completed' && outputValue !== undefined
    ? { status, output: outputValue.value }
    : { status };
}

/**
 * The write-ahead of one batch's results: each enters the context and is queued for writing as it arrives (the
 * log keeps their order); `written` waits for the writes once, at the batch's end, and rejects with the first
 * storage failure among them.
 */
function batchResults(session: SessionState, openCalls: Set<string>, resultLimit: number) {
  let last: Promise<void> = Promise.resolve();
  let failure: { error: unknown } | undefined;
  return {
    add(outcome: ToolCallOutcome): void {
      openCalls.delete(outcome.callId);
      const { isError } = outcome.output;
      const content = capToolResult(outcome.output.content, resultLimit);
      last = commitMessage(session, { type: 'tool_result', callId: outcome.callId, content, isError });
      last.catch((error: unknown) => {
        failure ??= { error };
      });
    },
    async written(): Promise<void> {
      // Earlier writes settle before the last one: their failures are known once it settled.
      await last.catch(ignore);
      if (failure !== undefined) throw failure.error;
    },
  };
}

/** Adds a message to the context and saves it as it enters (write-ahead, SPEC §4). */
function commitMessage(session: SessionState, message: Message): Promise<void> {
  session.context.push(message);
  session.sinceCheckpoint.push(message);
  return session.log.append(logPayloadOf(message));
}

function ignore(): void {}
