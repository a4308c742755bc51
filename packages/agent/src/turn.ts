import { interruptedNotice } from './context.js';
import { AgentError, toAgentError } from './error.js';
import type { AgentEventPayload } from './event.js';
import type { ChatRequest } from './ports/model.js';
import type { SessionEventPayload } from './ports/storage.js';
import { buildDynamicPrompt, combinePrompt } from './prompt/index.js';
import { fillTemplate, TOOL_LIMIT_NOTICE } from './prompt/templates.js';
import type { TurnStatus } from './running-turn.js';
import type { AgentRuntime, SessionState } from './session-state.js';
import { keepShape } from './shapes.js';
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
  const results = new BatchResults(session, openCalls);
  const onResult = (outcome: ToolCallOutcome): undefined => results.add(outcome);
  const commitSystem = (content: string): Promise<void> | undefined =>
    commitMessage(session, { type: 'system', content }, { type: 'system_message', content });

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
    const userWritten = commitMessage(
      session,
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
        const written = commitMessage(
          session,
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
        const written = commitMessage(
          session,
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
      results.reset();
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
      const resultsWritten = results.written();
      if (resultsWritten !== undefined) await resultsWritten;

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
    // Storage failures arrive as STORAGE_ERROR already (the session log wraps them); anything else is unexpected.
    reportError(toAgentError(error, 'INTERNAL_ERROR', 'the turn failed unexpectedly'));
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

/**
 * The results of the running tool batch, saved as they arrive: each is queued for writing at once (the log keeps
 * their order) and the batch waits for the writes once, at its end, not after each result. A class, not closures
 * of the turn, for the reason given at `commitMessage`.
 */
class BatchResults {
  /** The write of the batch's results so far. */
  #written: Promise<void> | undefined;
  /** The first storage failure of the batch's results; thrown by `written()` once the batch is over. */
  #failure: { error: unknown } | undefined;
  readonly #keepFailure = (error: unknown): void => this.#keep(error);

  constructor(
    private readonly session: SessionState,
    private readonly openCalls: Set<string>,
  ) {}

  /** Before a batch. */
  reset(): void {
    this.#written = undefined;
    this.#failure = undefined;
  }

  /**
   * Puts a result into the context and queues its write. Not an async function: it runs once per tool call,
   * and the suspended frame was a measurable cost.
   */
  add(outcome: ToolCallOutcome): undefined {
    this.openCalls.delete(outcome.callId);
    const { content, isError } = outcome.output;
    try {
      const written = commitMessage(
        this.session,
        { type: 'tool_result', callId: outcome.callId, content, isError },
        { type: 'tool_result', callId: outcome.callId, content, isError },
      );
      if (written !== undefined) {
        this.#written = written;
        written.then(undefined, this.#keepFailure);
      }
    } catch (error) {
      this.#keep(error);
    }
    return undefined;
  }

  /**
   * Once the batch's results are written: undefined when they are already (no promise to wait for), else a
   * promise; either way the first failure among them is thrown or rejected with.
   */
  written(): Promise<void> | undefined {
    if (this.#written === undefined) {
      this.#throwFailure();
      return undefined;
    }
    return this.#written.then(this.#throwLater, this.#throwLater);
  }

  readonly #throwLater = (error?: unknown): void => {
    if (error !== undefined) this.#keep(error);
    this.#throwFailure();
  };

  #throwFailure(): void {
    if (this.#failure !== undefined) throw this.#failure.error;
  }

  #keep(error: unknown): void {
    this.#failure ??= { error };
  }
}

/**
 * Adds a message to the context and saves it as it enters (write-ahead, SPEC §4); undefined once it is
 * written. A function of the module, not a closure of the turn: V8 keeps a closure's optimized code only while
 * one of its closures lives, so a closure made per turn ran unoptimized after every full collection.
 */
function commitMessage(
  session: SessionState,
  message: Message,
  payload: SessionEventPayload,
): Promise<void> | undefined {
  session.context.push(message);
  session.sinceCheckpoint.push(message);
  return session.log.append(payload);
}

function ignore(): void {}

// See shapes.ts; the stand-in session is never used: the constructor only stores it.
keepShape(new BatchResults({} as SessionState, new Set()));
