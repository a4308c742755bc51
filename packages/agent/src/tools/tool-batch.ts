import type { CancelScope } from '../kernel/cancel-scope.js';
import { type Deadline, deadlines } from '../kernel/deadlines.js';
import { AgentError, describeError } from '../kernel/error.js';
import type { AgentEventPayload } from '../kernel/event.js';
import type { SchemaCheck } from '../kernel/json-schema.js';
import type { ToolCallRequest } from '../kernel/types.js';
import type { ToolHandler, ToolInput, ToolOutput } from '../ports/tool.js';
import { failed, liveOutputSink, normalizeOutput } from './tool-output.js';

export type { ToolCallRequest };

const CANCELLED_TEXT = 'Tool call cancelled before it ran';
const LIMIT_TEXT = "Tool call not run: the turn's tool-call limit was reached";

/** The result of one call of a batch, with the arguments the tool actually received. */
export interface ToolCallOutcome {
  callId: string;
  toolName: string;
  arguments: unknown;
  output: ToolOutput;
  durationMs: number;
}

/** A registered tool with its compiled schema check. */
export interface RegisteredTool {
  handler: ToolHandler;
  check: SchemaCheck;
}

/** What a BeforeToolUse hook ended with: the data its chain ended with, and its abort reason when it stopped the call. */
interface BeforeToolUseResult {
  data: unknown;
  abortReason: string | undefined;
}

/**
 * BeforeToolUse for one call (its callId, toolName and arguments): undefined, answered at once, when no handler
 * listens. The turn makes it from the hooks (hooks/ `hookRunner`); the batch knows no registry.
 */
export type BeforeToolUse = (data: unknown) => Promise<BeforeToolUseResult> | undefined;

/** AfterToolUse for one call (the call, a copy of its output, its duration): undefined when no handler listens. */
export type AfterToolUse = (data: unknown) => Promise<unknown> | undefined;

/** What `executeBatch` takes. */
export interface ExecuteBatchOptions {
  calls: readonly ToolCallRequest[];
  sessionId: string;
  turnId: string;
  /** The turn's cancellation: calls not started are not started any more, running tools' signals fire. */
  signal: AbortSignal;
  /**
   * The scope of `signal` the caller keeps for longer than the batch (the turn's): the batch watches it instead
   * of adding a listener of its own to the signal.
   */
  cancelScope?: CancelScope | undefined;
  /** Runs BeforeToolUse; the PLUGIN_ERRORs of its handlers are its own to report. */
  beforeToolUse: BeforeToolUse;
  /** Runs AfterToolUse; the PLUGIN_ERRORs of its handlers are its own to report. */
  afterToolUse: AfterToolUse;
  /** How many calls of this batch may run (the tool-call limit); later calls get an `isError` result. */
  runnable: number;
  /** Receives tool_call_start / tool_output_delta / tool_call_end. */
  emit: (payload: AgentEventPayload) => void;
  /** Calls refused approval, with their result text: they do not run, and their tool_call_end says `denied`. */
  refused?: ReadonlyMap<string, string>;
  /** Awaited strictly in call order, each as soon as it and every earlier outcome are in (write-ahead). */
  onResult: (outcome: ToolCallOutcome) => Promise<void> | void;
}

/** A call whose tool runs now: when its time is up, and the state of its signal. */
interface RunningTool {
  readonly toolName: string;
  /** True from the tool's start until its output is in (its answer or its timeout). */
  running: boolean;
  /** The call's timeout in the runtime's shared deadlines, while it runs. */
  deadline: Deadline | undefined;
  /** Hands the call its output; called once, by whichever comes first: the tool's answer or the timeout. */
  readonly resolve: (output: ToolOutput) => void;
  /** The controller of the tool's signal, made when the tool first reads it (see `signalOf`). */
  controller: AbortController | undefined;
  /** Why the call was aborted while it ran (the turn's cancel or the timeout), once it was. */
  abortedWith: { reason: unknown } | undefined;
}

/** Aborts a running tool's signal, or remembers why until the signal is made; only the first reason counts. */
function abortTool(tool: RunningTool, reason: unknown): void {
  if (tool.abortedWith !== undefined) return;
  tool.abortedWith = { reason };
  tool.controller?.abort(reason);
}

/**
 * A tool's signal, made on first read: most tools never read it, and an AbortSignal costs microseconds to make.
 * Made late, it is in the state one made at the start would be in: aborted when the call was, with its reason.
 */
function signalOf(tool: RunningTool): AbortSignal {
  if (tool.controller === undefined) {
    tool.controller = new AbortController();
    if (tool.abortedWith !== undefined) tool.controller.abort(tool.abortedWith.reason);
  }
  return tool.controller.signal;
}

/** The own, enumerable `signal` accessor of every ToolCallInput: one getter for all (set in the class's static block). */
const signalProperty: PropertyDescriptor = { enumerable: true, configurable: true };

/**
 * What a tool's `execute` receives. `signal` is an own enumerable accessor, so that a spread copy of the input
 * carries it, that makes the call's AbortSignal on first read (see `signalOf`). It is defined with one shared
 * getter: an object literal with a `get signal()` of its own costs a closure and a fresh accessor, and about half a
 * microsecond, on every call.
 */
class ToolCallInput implements ToolInput {
  // Declared only: the constructor defines them, in this order (a class field would be defined first, and the
  // keys' order would change).
  declare callId: string;
  declare arguments: unknown;
  declare sessionId: string;
  declare turnId: string;
  declare signal: AbortSignal;
  declare onOutput: (text: string) => void;
  readonly #tool: RunningTool;

  constructor(
    tool: RunningTool,
    callId: string,
    args: unknown,
    sessionId: string,
    turnId: string,
    onOutput: (text: string) => void,
  ) {
    this.callId = callId;
    this.arguments = args;
    this.sessionId = sessionId;
    this.turnId = turnId;
    this.#tool = tool;
    // Defined here, between turnId and onOutput: the input's keys keep the order a literal had.
    Object.defineProperty(this, 'signal', signalProperty);
    this.onOutput = onOutput;
  }

  static {
    signalProperty.get = function signal(this: ToolCallInput): AbortSignal {
      return signalOf(this.#tool);
    };
  }
}

/**
 * One `ToolDispatcher.executeBatch` call (0006 §12, SPEC §4 "Tool calls"). Each call lives through
 * `#runCall`, top to bottom: checked (parsed, known, limit, schema) → BeforeToolUse → tool_call_start → the
 * tool, with its own signal, the timeout and its live output (tool_output_delta) → output capped →
 * tool_call_end → AfterToolUse. `run` then hands the outcomes to `onResult` (the write-ahead of the results)
 * in call order.
 *
 * Read-only calls run concurrently; a batch with a call of a mutating tool runs one call after another. Each
 * running tool has a deadline in the runtime's shared scheduler (kernel/deadlines.ts: one Node timer for all),
 * and the batch has one listener on the turn's signal (a watcher in the turn's cancel scope, when it is given one).
 */
export class ToolBatch {
  readonly #options: ExecuteBatchOptions;
  readonly #timeoutMs: number;
  /** Per call: the tool to run, or the error text of a call that will not run. */
  readonly #plans: (RegisteredTool | string)[];
  /**
   * The tools started, by call index (each running until its answer or its timeout): an array of the batch's
   * size, made once, not a Set, which costs a hash table per batch and a rehash per removal.
   */
  readonly #tools: (RunningTool | undefined)[];
  /** The first error `onResult` threw or rejected with: nothing is handed over or started after it. */
  #failure: { error: unknown } | undefined;
  /** The caller's scope of the batch's signal, when it has one: asked whether the turn was cancelled. */
  readonly #scope: CancelScope | undefined;

  constructor(options: ExecuteBatchOptions, tools: ReadonlyMap<string, RegisteredTool>, timeoutMs: number) {
    this.#options = options;
    const given = options.cancelScope;
    this.#scope = given !== undefined && given.signal === options.signal ? given : undefined;
    this.#timeoutMs = timeoutMs;
    this.#plans = options.calls.map(
      (call, index) => options.refused?.get(call.callId) ?? plan(call, index, options.runnable, tools),
    );
    this.#tools = new Array(options.calls.length);
  }

  /**
   * Runs the calls and hands each outcome to `onResult` in call order, as soon as it and every earlier one
   * are in and the previous `onResult` settled. Answers with the outcomes in call order once every call has
   * settled; rejects only with the first error `onResult` threw (calls not started by then are skipped).
   */
  async run(): Promise<ToolCallOutcome[]> {
    const { calls, signal } = this.#options;
    const serial = this.#plans.some(isMutatingPlan);
    const outcomes: ToolCallOutcome[] = [];
    const scope = this.#scope;
    if (scope !== undefined) scope.watch(this.#cancelRunning);
    else signal.addEventListener('abort', this.#cancelRunning);
    try {
      // Read-only calls all start now; otherwise each call starts once the previous one is handed over.
      const started = serial ? [] : calls.map((_, index) => this.#runCall(index));
      for (let index = 0; index < calls.length; index++) {
        const outcome = await (serial ? this.#runCall(index) : started[index]!);
        outcomes.push(outcome);
        // Write-ahead: the outcome is handed over; after a failure of `onResult`, no other one is.
        if (this.#failure !== undefined) continue;
        try {
          // Awaited only when it answers with a promise: a tick per call otherwise.
          const handed = this.#options.onResult(outcome);
          if (handed !== undefined) await handed;
        } catch (error) {
          this.#failure = { error };
        }
      }
    } finally {
      if (scope !== undefined) scope.unwatch(this.#cancelRunning);
      else signal.removeEventListener('abort', this.#cancelRunning);
    }
    if (this.#failure !== undefined) throw this.#failure.error;
    return outcomes;
  }

  /** One call from start to end; never rejects: a call that cannot run or fails ends as an `isError` outcome. */
  async #runCall(index: number): Promise<ToolCallOutcome> {
    const { calls, beforeToolUse, afterToolUse, emit } = this.#options;
    const call = calls[index]!;
    const { callId, toolName } = call;
    try {
      // 1. Parsed, known, within the limit and valid against the schema (checked when the batch was made).
      const plan = this.#plans[index]!;
      if (typeof plan === 'string') return this.#notRun(call, call.arguments, plan);
      if (this.#stopped()) return this.#notRun(call, call.arguments, CANCELLED_TEXT);

      // 2. BeforeToolUse may stop the call, or change its arguments, which are then checked again.
      let args = call.arguments;
      const beforeRun = beforeToolUse({ callId, toolName, arguments: args });
      if (beforeRun !== undefined) {
        const before = await beforeRun;
        if (before.abortReason !== undefined) {
          return this.#notRun(call, args, `Tool aborted by hook: ${before.abortReason}`);
        }
        // Checked even when the data object is the same one: a handler may have changed it in place.
        args = argumentsOf(before.data);
        const failure = plan.check(args);
        if (failure !== undefined) {
          const text = `Invalid arguments for tool '${toolName}' (as changed by a BeforeToolUse hook): ${failure}`;
          return this.#notRun(call, args, text);
        }
        if (this.#stopped()) return this.#notRun(call, args, CANCELLED_TEXT);
      }

      // 3. The tool runs with a signal of its own, bounded by the timeout; its output comes back capped.
      emit({ type: 'tool_call_start', callId, toolName, arguments: args });
      const started = performance.now();
      const output = await this.#runTool(plan.handler, index, args, started);
      const durationMs = Math.round(performance.now() - started);
      emit({ type: 'tool_call_end', callId, toolName, output, durationMs, success: !output.isError });
      const outcome: ToolCallOutcome = { callId, toolName, arguments: args, output, durationMs };

      // 4. AfterToolUse sees a copy of the output: a handler that changes it cannot change what is recorded.
      const afterRun = afterToolUse({ callId, toolName, arguments: args, output: { ...output }, durationMs });
      if (afterRun !== undefined) await afterRun;
      return outcome;
    } catch (error) {
      // Only the runtime itself (an `emit` that threw) gets here; the call still needs a result.
      const output = failed(`Tool call failed: ${describeError(error)}`);
      return { callId, toolName, arguments: call.arguments, output, durationMs: 0 };
    }
  }

  /**
   * Calls the tool with its own signal, which fires on the turn's cancel or at the timeout. Never rejects: a
   * throw or a rejection is an error result, and at the timeout the result is decided and a late answer ignored.
   */
  #runTool(handler: ToolHandler, index: number, args: unknown, started: number): Promise<ToolOutput> {
    const { sessionId, turnId, emit } = this.#options;
    const callId = (this.#options.calls[index] as ToolCallRequest).callId;
    return new Promise<ToolOutput>((resolve) => {
      const tool: RunningTool = {
        toolName: handler.name,
        running: false,
        deadline: undefined,
        resolve,
        controller: undefined,
        abortedWith: undefined,
      };
      this.#tools[index] = tool;
      this.#startTiming(tool, started);
      // Live output counts only while the call runs: once settled, its tool_call_end is on its way.
      const onOutput = liveOutputSink(emit, callId, tool);
      try {
        const answer = handler.execute(new ToolCallInput(tool, callId, args, sessionId, turnId, onOutput));
        // Whatever the tool answered is awaited the same way: a value that is not a promise is no faster.
        Promise.resolve(answer).then(
          (value) => this.#settle(tool, normalizeOutput(value, handler.name)),
          (error: unknown) => this.#settle(tool, failed(describeError(error))),
        );
      } catch (error) {
        // A tool that throws instead of rejecting: the same error result.
        this.#settle(tool, failed(describeError(error)));
      }
    });
  }

  /** The tool's output is in: the call leaves the running tools. The first output a call gets is its result. */
  #settle(tool: RunningTool, output: ToolOutput): void {
    if (!tool.running) return;
    tool.running = false;
    deadlines.cancel(tool.deadline);
    tool.deadline = undefined;
    tool.resolve(output);
  }

  /** A tool starts running, and its timeout with it, counted from the call's start (`started`, a performance.now()). */
  #startTiming(tool: RunningTool, started: number): void {
    tool.running = true;
    tool.deadline = deadlines.schedule(this.#timeoutMs, this.#onTimeout, tool, started);
  }

  /** A running tool's time is up: its result is the timeout's, and its signal fires with TOOL_TIMEOUT. */
  readonly #onTimeout = (tool: RunningTool): void => {
    const ms = this.#timeoutMs;
    this.#settle(tool, failed(`Tool timed out after ${ms}ms`));
    const message = `tool '${tool.toolName}' timed out after ${ms}ms`;
    abortTool(tool, new AgentError({ code: 'TOOL_TIMEOUT', message }));
  };

  /** The turn was cancelled: the signal of every running tool fires, with the turn's reason. */
  readonly #cancelRunning = (): void => {
    for (const tool of this.#tools) {
      if (tool?.running === true) abortTool(tool, this.#options.signal.reason);
    }
  };

  /** Cancellation, or an `onResult` failure: calls not started yet are not started any more. */
  #stopped(): boolean {
    const scope = this.#scope;
    return (
      (scope === undefined ? this.#options.signal.aborted : scope.cancelled) || this.#failure !== undefined
    );
  }

  /** A call that does not run: tool_call_start and tool_call_end (success false) with its error result. */
  #notRun(call: ToolCallRequest, args: unknown, text: string): ToolCallOutcome {
    const { callId, toolName } = call;
    const output = failed(text);
    this.#options.emit({ type: 'tool_call_start', callId, toolName, arguments: args });
    const denied = this.#options.refused?.has(callId) === true;
    this.#options.emit({
      type: 'tool_call_end',
      callId,
      toolName,
      output,
      durationMs: 0,
      success: false,
      ...(denied ? { denied: true } : {}),
    });
    return { callId, toolName, arguments: args, output, durationMs: 0 };
  }
}

/** The checks that need no hook and no tool: the limit, the JSON, the tool's name, the schema. */
function plan(
  call: ToolCallRequest,
  index: number,
  runnable: number,
  tools: ReadonlyMap<string, RegisteredTool>,
): RegisteredTool | string {
  if (index >= runnable) return LIMIT_TEXT;
  if (call.parseError !== undefined) {
    return `Invalid arguments for tool '${call.toolName}': not valid JSON (${call.parseError})`;
  }
  const tool = tools.get(call.toolName);
  if (tool === undefined) return `[TOOL_NOT_FOUND] tool '${call.toolName}'`;
  const failure = tool.check(call.arguments);
  if (failure !== undefined) return `Invalid arguments for tool '${call.toolName}': ${failure}`;
  return tool;
}

/** True for a call that will run a mutating tool: its batch runs one call after another. */
function isMutatingPlan(plan: RegisteredTool | string): boolean {
  return typeof plan !== 'string' && plan.handler.isMutating;
}

/** The `arguments` of the data a BeforeToolUse chain ended with; undefined (so the schema fails) when it has none. */
function argumentsOf(data: unknown): unknown {
  return typeof data === 'object' && data !== null ? (data as { arguments?: unknown }).arguments : undefined;
}
