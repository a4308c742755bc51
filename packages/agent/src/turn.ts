import { interruptedNotice } from './context.js';
import { AgentError, toAgentError } from './error.js';
import type { AgentEventPayload } from './event.js';
import type { ChatRequest } from './ports/model.js';
import type { SessionEventPayload } from './ports/storage.js';
import { buildDynamicPrompt, combinePrompt } from './prompt/index.js';
import { fillTemplate, TOOL_LIMIT_NOTICE } from './prompt/templates.js';
import type { TurnStatus } from './running-turn.js';
import type { AgentRuntime, SessionState } from './session-state.js';
import { parseToolArguments, type ToolCallOutcome, type ToolCallRequest } from './tool-dispatch.js';
import {
  cachedStablePrompt,
  compact,
  memoryCheckpoint,
  readDynamicSections,
  streamAnswer,
  textOf,
  turnEnd,
} from './turn-steps.js';
import type { Message, UserInput } from './types.js';

/** Everything one turn touches; the turn loop has no state of its own (0006 D1). */
export interface TurnOptions {
  runtime: AgentRuntime;
  session: SessionState;
  input: UserInput;
  turnId: string;
  signal: AbortSignal;
  /** The same cancellation as `signal`, as a plain field for the checks made at every step. */
  cancellation: { readonly aborted: boolean };
  emit: (payload: AgentEventPayload) => void;
}

/**
 * Runs one turn to its end (0006 §9.1): TurnStart → skills → user message → [prompt → compaction →
 * model → assistant message → tools]* → memory checkpoint → TurnEnd → terminal event. Every failure is
 * reported as an `error` event; the terminal event is emitted in `finally`, so it always comes, once.
 */
export async function runTurn(options: TurnOptions): Promise<TurnStatus> {
  const { runtime, session, input, turnId, signal, cancellation, emit } = options;
  const { config, hooks } = runtime;
  const context = session.context;
  const reportError = (error: AgentError): void => emit({ type: 'error', error });
  let status: TurnStatus = 'completed';
  let toolCallCount = 0;
  const openCalls = new Set<string>();

  // Each message is saved as it enters the context (write-ahead, SPEC §4); undefined once it is written.
  const commit = (message: Message, payload: SessionEventPayload): Promise<void> | undefined => {
    context.push(message);
    session.sinceCheckpoint.push(message);
    return session.log.append(payload);
  };
  // The first storage failure of a tool batch's results; the batch's caller throws it once the batch is over.
  let storageFailure: unknown;
  const keepStorageFailure = (error: unknown): void => {
    storageFailure ??= error;
  };
  // The write of the batch's results so far: results are queued for writing as they arrive (the log keeps their
  // order) and the batch waits for the writes once, at its end, not after each result.
  let resultsWritten: Promise<void> | undefined;
  // Not an async function: it runs once per tool call, and the suspended frame was a measurable cost.
  const onResult = (outcome: ToolCallOutcome): undefined => {
    openCalls.delete(outcome.callId);
    const { content, isError } = outcome.output;
    try {
      const written = commit(
        { type: 'tool_result', callId: outcome.callId, content, isError },
        { type: 'tool_result', callId: outcome.callId, content, isError },
      );
      if (written !== undefined) {
        resultsWritten = written;
        written.then(undefined, keepStorageFailure);
      }
    } catch (error) {
      keepStorageFailure(error);
    }
    return undefined;
  };
  const commitSystem = (content: string): Promise<void> | undefined =>
    commit({ type: 'system', content }, { type: 'system_message', content });

  try {
    // 1. TurnStart: plugins may add dynamic prompt sections, or stop the turn before the model is called.
    const userText = textOf(input.content);
    let dynamicSections: readonly string[] = [];
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
        return status;
      }
      dynamicSections = readDynamicSections(outcome.data);
    }

    // 2. Skills invoked with /name are injected before the user message.
    for (const skill of runtime.skills.detectInvocations(userText)) {
      const injection = runtime.skills.renderInjection(skill);
      if (injection.type === 'system') await commitSystem(injection.content);
    }

    // 3. The user message is saved before the model is called.
    const userWritten = commit(
      { type: 'user', content: input.content },
      { type: 'user_message', content: input.content },
    );
    if (userWritten !== undefined) await userWritten;
    session.turnCount += 1;
    session.turnsSinceCheckpoint += 1;

    // 4. Model calls and tool rounds until the model answers without tool calls.
    let contextRetryUsed = false;
    while (true) {
      // 4a. The stable part is cached until the next compaction; the dynamic part is rebuilt every call.
      let stable = cachedStablePrompt(runtime, session);
      const dynamic = buildDynamicPrompt({
        memories: session.memories,
        environmentContext: config.environmentContext,
        dynamicSections,
      });

      // 4b. Compaction, checked before every model call.
      const estimated = context.estimateTokens({
        promptChars: stable.length + dynamic.length,
        toolsChars: runtime.toolsChars,
      });
      if (estimated > session.model.info.contextWindow * config.compactThreshold) {
        const compacted = await compact(options, estimated);
        if (compacted === 'cancelled') {
          status = 'cancelled';
          break;
        }
        if (compacted === 'compacted') stable = cachedStablePrompt(runtime, session);
      }
      if (cancellation.aborted) {
        status = 'cancelled';
        break;
      }

      // 4c–4d. One streamed model call.
      const request: ChatRequest = {
        modelId: session.model.info.id,
        purpose: 'turn',
        systemPrompt: combinePrompt(stable, dynamic),
        systemPromptParts: { stable, dynamic },
        messages: context.messages.slice(),
        // A model without tool use is offered no tools.
        tools: session.model.info.capabilities.toolUse ? runtime.tools.specs.slice() : [],
      };
      const answer = await streamAnswer(options, request);
      if (answer.error?.contextLengthExceeded && !answer.receivedAny && !contextRetryUsed) {
        // The provider says the request is too large: compact now and send it once more.
        contextRetryUsed = true;
        const compacted = await compact(options, estimated);
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
        const written = commit(
          { type: 'assistant', content: answer.content, status: statusOfMessage },
          { type: 'assistant_message', content: answer.content, status: statusOfMessage },
        );
        if (written !== undefined) await written;
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

      // 4f. No tool call: the turn's answer is complete.
      if (answer.toolCalls.length === 0) break;

      // 4g. Tool calls enter the context before they run, then their results in call order. The calls are
      // queued for writing together and the tools start once all of them are saved.
      const calls: ToolCallRequest[] = [];
      let callsWritten: Promise<void> | undefined;
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
        const written = commit(
          { type: 'tool_call', callId: call.callId, toolName: call.toolName, arguments: request.arguments },
          { type: 'tool_call', callId: call.callId, toolName: call.toolName, arguments: request.arguments },
        );
        if (written !== undefined) {
          // Handled here; the failure is thrown by the wait below (the write it belongs to is still queued).
          written.catch(ignore);
          callsWritten = written;
        }
      }
      // Appends made without waiting share one write pass: the last one's promise settles once every call is
      // written (a refused call stays queued ahead of it and is written first).
      if (callsWritten !== undefined) await callsWritten;
      storageFailure = undefined;
      resultsWritten = undefined;
      const ran = runtime.tools.executeBatch({
        calls,
        sessionId: session.id,
        turnId,
        signal,
        cancellation,
        hooks,
        runnable: config.maxToolCallsPerTurn - toolCallCount,
        emit,
        reportError,
        onResult,
      });
      // A batch whose tools, hooks and writes all answered at once is over already: no tick to wait for.
      if (ran instanceof Promise) await ran;
      if (resultsWritten !== undefined) await (resultsWritten as Promise<void>).catch(keepStorageFailure);
      if (storageFailure !== undefined) throw storageFailure;

      // 4i. The tool-call limit ends the turn with a notice to the model.
      toolCallCount += calls.length;
      if (cancellation.aborted) {
        status = 'cancelled';
        break;
      }
      if (toolCallCount >= config.maxToolCallsPerTurn) {
        await commitSystem(fillTemplate(TOOL_LIMIT_NOTICE, { limit: config.maxToolCallsPerTurn }));
        reportError(
          new AgentError({
            code: 'MAX_TOOL_CALLS_EXCEEDED',
            message: `the turn ran ${toolCallCount} tool calls and its limit is ${config.maxToolCallsPerTurn}`,
          }),
        );
        break;
      }
    }

    // 6. Memory checkpoint every N turns, inside the turn, before it ends (SPEC §5.14).
    if (status !== 'cancelled' && (await memoryCheckpoint(options)) === 'cancelled') status = 'cancelled';
  } catch (error) {
    status = 'failed';
    reportError(toAgentError(error, 'STORAGE_ERROR', 'the turn failed'));
    // Keep every tool call paired with a result, in the context the next turn sees.
    for (const callId of openCalls) {
      const content = 'The tool call did not complete: the turn failed before its result was recorded.';
      context.push({ type: 'tool_result', callId, content, isError: true });
      await session.log.append({ type: 'tool_result', callId, content, isError: true })?.catch(ignore);
    }
  } finally {
    // 7–8. TurnEnd, then exactly one terminal event.
    await turnEnd(options, status, toolCallCount);
    emit({ type: status === 'cancelled' ? 'turn_cancelled' : 'turn_complete' });
  }
  return status;
}

function ignore(): void {}
