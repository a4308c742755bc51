import { HookRegistry } from './hook.js';
import type { HookEvent } from './ports/plugin.js';
import type { ToolHandler, ToolOutput } from './ports/tool.js';
import { keepShape } from './shapes.js';
import { OutcomeDelivery } from './tool-delivery.js';
import type {
  CancelWatcher,
  ExecuteBatchOptions,
  RegisteredTool,
  ToolCallOutcome,
  ToolCallRequest,
} from './tool-dispatch.js';
import { failed } from './tool-output.js';
import {
  CallAbort,
  callTool,
  crashed,
  finalArguments,
  type HookOutcome,
  PendingTool,
  runToolHook,
  type ToolWatcher,
  watchTool,
  watchToolInto,
} from './tool-run.js';
import { TimeoutGroup } from './tool-timeouts.js';

const CANCELLED_TEXT = 'Tool call cancelled before it ran';
const LIMIT_TEXT = "Tool call not run: the turn's tool-call limit was reached";

/** A call's outcome: at once when its hooks and its tool answered synchronously, else a promise of it. */
type Outcome = ToolCallOutcome | Promise<ToolCallOutcome>;

/**
 * The state of one `ToolDispatcher.executeBatch` call. A call whose hooks and tool answer synchronously is
 * run without a promise or a tick of its own: those were most of a tool round trip's cost.
 */
export class BatchRun implements ToolWatcher<Started>, CancelWatcher {
  readonly #options: ExecuteBatchOptions;
  readonly #tools: ReadonlyMap<string, RegisteredTool>;
  readonly #timeoutMs: number;
  /** Per call: the tool to run, or the error text of a call that will not run. */
  readonly #plans: (RegisteredTool | string)[];
  /** The outcomes, handed to `onResult` in call order. */
  readonly #delivery: OutcomeDelivery;
  /** The cancellations of the calls executing now, in the order they started (a slot is cleared at the end). */
  readonly #running: (CallAbort | undefined)[] = [];
  /** The time-outs of the calls that run on; made for the first such call (most tools answer at once). */
  #timeouts: TimeoutGroup | undefined;
  /** How the batch hears of a turn cancel, once it does: `cancellation.watch`, or `#onTurnAbort` on the signal. */
  #listening: 'no' | 'watch' | 'signal' = 'no';

  constructor(options: ExecuteBatchOptions, tools: ReadonlyMap<string, RegisteredTool>, timeoutMs: number) {
    this.#options = options;
    this.#tools = tools;
    this.#timeoutMs = timeoutMs;
    this.#plans = options.calls.map((call, index) => this.#plan(call, index));
    this.#delivery = new OutcomeDelivery(options.onResult, options.calls.length);
  }

  /**
   * Runs the calls concurrently when every call that will run is read-only, else one after another in call
   * order. Answers with the outcomes in call order once every call has settled: at once, without a promise,
   * when every call, hook and delivery answered synchronously; else as a promise. Rejects only with the first
   * error `onResult` threw (after the running calls have settled; calls not yet started are skipped).
   */
  run(): ToolCallOutcome[] | Promise<ToolCallOutcome[]> {
    const { calls } = this.#options;
    let serial = false;
    for (const plan of this.#plans) {
      if (typeof plan !== 'string' && plan.handler.isMutating) serial = true;
    }
    // A single call runs the same either way; the serial path does it with fewer promises.
    if (serial || calls.length === 1) return this.#runSerially(0);
    return this.#runConcurrently().then(this.#end, this.#failed);
  }

  /** The serial calls from `from` on, synchronously until a call or a delivery answers with a promise. */
  #runSerially(from: number): ToolCallOutcome[] | Promise<ToolCallOutcome[]> {
    const { calls } = this.#options;
    for (let index = from; index < calls.length; index++) {
      const outcome = this.#runCall(index);
      if (outcome instanceof Promise) return this.#runSeriallyLater(index, outcome);
      const delivered = this.#delivery.deliverNow(index, outcome);
      if (delivered !== undefined) return delivered.then(() => this.#runSerially(index + 1), this.#failed);
    }
    return this.#endBatch();
  }

  /** Call `index` of a serial batch answered with a promise: its outcome is delivered, then the rest run. */
  async #runSeriallyLater(index: number, outcome: Promise<ToolCallOutcome>): Promise<ToolCallOutcome[]> {
    try {
      const delivered = this.#delivery.deliverNow(index, await outcome);
      if (delivered !== undefined) await delivered;
    } catch (error) {
      return this.#failBatch(error);
    }
    return this.#runSerially(index + 1);
  }

  // The callbacks a batch hands out (to promises, to the signal, to its CallAborts) are thin arrows over methods:
  // V8 keeps the optimized code of a closure made per instance only while one such closure lives, and a
  // method's for good, so the work is in the methods and the code survives a full collection between batches.
  readonly #end = (): ToolCallOutcome[] => this.#endBatch();
  readonly #failed = (error: unknown): never => this.#failBatch(error);
  readonly #onTurnAbort = (): void => this.#abortRunning();
  readonly #listen = (): void => this.#startListening();

  /** The batch is over: the turn's cancel is let go, and the outcomes (or the first delivery error) come out. */
  #endBatch(): ToolCallOutcome[] {
    this.#stopListening();
    const failure = this.#delivery.failure;
    if (failure !== undefined) throw failure.error;
    return this.#delivery.outcomes;
  }

  /** A failure of the batch's own machinery: the turn's cancel is let go all the same. */
  #failBatch(error: unknown): never {
    this.#stopListening();
    throw error;
  }

  /** The turn was cancelled (see BatchCancellation). */
  turnCancelled(): void {
    this.#abortRunning();
  }

  /** Aborts the calls that run now, in the order they started. */
  #abortRunning(): void {
    const reason = this.#options.signal.reason;
    for (const abort of this.#running) abort?.abort(reason);
  }

  /**
   * One watch per batch, not per call (a batch of more than ten concurrent calls listening on the signal would
   * trip Node's MaxListenersExceededWarning), started once a tool runs asynchronously or reads its signal: a
   * call's CallAbort looks at the turn's cancellation itself until then. The turn's TurnCancellation tells the
   * batch directly; a plain signal (a dispatcher used on its own) gets a listener.
   */
  #startListening(): void {
    if (this.#listening !== 'no') return;
    const { cancellation, signal } = this.#options;
    if (cancellation?.watch !== undefined && cancellation.unwatch !== undefined) {
      this.#listening = 'watch';
      cancellation.watch(this);
    } else {
      this.#listening = 'signal';
      signal.addEventListener('abort', this.#onTurnAbort);
    }
  }

  #stopListening(): void {
    const listening = this.#listening;
    this.#listening = 'no';
    if (listening === 'watch') this.#options.cancellation?.unwatch?.(this);
    else if (listening === 'signal') this.#options.signal.removeEventListener('abort', this.#onTurnAbort);
  }

  /** The checks that need no hook and no tool: limit, parse error, unknown tool, schema. */
  #plan(call: ToolCallRequest, index: number): RegisteredTool | string {
    if (index >= this.#options.runnable) return LIMIT_TEXT;
    if (call.parseError !== undefined) {
      return `Invalid arguments for tool '${call.toolName}': not valid JSON (${call.parseError})`;
    }
    const tool = this.#tools.get(call.toolName);
    if (tool === undefined) return `[TOOL_NOT_FOUND] tool '${call.toolName}'`;
    const failure = tool.check(call.arguments);
    if (failure !== undefined) return `Invalid arguments for tool '${call.toolName}': ${failure}`;
    return tool;
  }

  /** Cancellation, or an onResult failure: calls not started yet are not started any more. */
  #stopped(): boolean {
    return (
      (this.#options.cancellation ?? this.#options.signal).aborted || this.#delivery.failure !== undefined
    );
  }

  /** One call of a serial batch (or a batch of one) from start to end; never throws or rejects. */
  #runCall(index: number): Outcome {
    const call = this.#options.calls[index]!;
    const plan = this.#plans[index]!;
    try {
      if (typeof plan === 'string') return this.#notRun(call, call.arguments, plan);
      if (this.#stopped()) return this.#notRun(call, call.arguments, CANCELLED_TEXT);
      if (!this.#options.hooks.has('BeforeToolUse')) return this.#start(index, call.arguments);
      const data = { callId: call.callId, toolName: call.toolName, arguments: call.arguments };
      const result = this.#hook('BeforeToolUse', data);
      if (result instanceof Promise) return this.#afterBeforeHookLater(index, result);
      return this.#afterBeforeHook(index, result);
    } catch (error) {
      return crashed(call, error);
    }
  }

  /**
   * The calls of a concurrent batch, each going through its steps as when each was its own async function
   * waiting at every step, so in the same order: BeforeToolUse for every call before any of them goes on (a
   * call without the hook starts its tool at once), then each call's tool started (checks, tool_call_start,
   * the tool called) in call order, then the answers. The calls whose hooks answered at once start in one
   * tight loop and their timers are set after it: the tools start within microseconds of each other.
   */
  async #runConcurrently(): Promise<void> {
    const { calls, hooks } = this.#options;
    const started: Started[] = [];
    const hooked: { index: number; result: HookOutcome }[] = [];
    for (let index = 0; index < calls.length; index++) {
      const call = calls[index]!;
      const plan = this.#plans[index]!;
      try {
        if (typeof plan === 'string') this.#delivery.arrive(index, this.#notRun(call, call.arguments, plan));
        else if (this.#stopped())
          this.#delivery.arrive(index, this.#notRun(call, call.arguments, CANCELLED_TEXT));
        else if (!hooks.has('BeforeToolUse')) started.push(this.#launch(index, call.arguments));
        else {
          const data = { callId: call.callId, toolName: call.toolName, arguments: call.arguments };
          const result = this.#hook('BeforeToolUse', data);
          if (result instanceof Promise) result.then((settled) => this.#goOnAlone(index, settled));
          else hooked.push({ index, result });
        }
      } catch (error) {
        this.#delivery.arrive(index, crashed(call, error));
      }
    }
    if (hooked.length > 0) {
      // Where each call waited for its hook's answer.
      await undefined;
      for (const { index, result } of hooked) {
        try {
          const go = this.#checkAfterHook(index, result);
          if ('output' in go) this.#delivery.arrive(index, go);
          else started.push(this.#launch(index, go.args));
        } catch (error) {
          this.#delivery.arrive(index, crashed(calls[index]!, error));
        }
      }
    }
    const answered: { run: Started; output: ToolOutput }[] = [];
    for (const run of started) {
      if (run.called instanceof PendingTool) {
        watchToolInto(run.called, this.#runsOn(run.started), this, run);
      } else answered.push({ run, output: run.called });
    }
    if (answered.length > 0) {
      // Where each call waited for its tool's answer.
      await undefined;
      for (const { run, output } of answered) this.#complete(run, output);
    }
    if (!this.#delivery.complete) await this.#delivery.allDelivered();
  }

  /** A watched tool of a concurrent batch has its output (see `watchToolInto`). */
  toolSettled(run: Started, output: ToolOutput): void {
    this.#complete(run, output);
  }

  /** A call whose BeforeToolUse answered with a promise goes on by itself once it has the answer. */
  #goOnAlone(index: number, result: HookOutcome): void {
    try {
      const go = this.#checkAfterHook(index, result);
      if ('output' in go) {
        this.#delivery.arrive(index, go);
        return;
      }
      const run = this.#launch(index, go.args);
      const output = run.called instanceof PendingTool ? this.#watch(run.called, run.started) : run.called;
      Promise.resolve(output).then((settled) => this.#complete(run, settled));
    } catch (error) {
      this.#delivery.arrive(index, crashed(this.#options.calls[index]!, error));
    }
  }

  /** What BeforeToolUse decided for a call: it does not run (its outcome), or runs with these arguments. */
  #checkAfterHook(index: number, result: HookOutcome): ToolCallOutcome | { args: unknown } {
    const call = this.#options.calls[index]!;
    const plan = this.#plans[index] as RegisteredTool;
    if (result.abortReason !== undefined) {
      return this.#notRun(call, call.arguments, `Tool aborted by hook: ${result.abortReason}`);
    }
    // Checked again even when the data object is the same one: a handler may have changed it in place.
    const args = finalArguments(result.data);
    const failure = plan.check(args);
    if (failure !== undefined) {
      const text = `Invalid arguments for tool '${call.toolName}' (as changed by a BeforeToolUse hook): ${failure}`;
      return this.#notRun(call, args, text);
    }
    if (this.#stopped()) return this.#notRun(call, args, CANCELLED_TEXT);
    return { args };
  }

  /** tool_call_start and the tool called; throws only when `emit` does. */
  #launch(index: number, args: unknown): Started {
    const call = this.#options.calls[index]!;
    const plan = this.#plans[index] as RegisteredTool;
    this.#options.emit({
      type: 'tool_call_start',
      callId: call.callId,
      toolName: call.toolName,
      arguments: args,
    });
    const started = performance.now();
    return { index, args, started, called: this.#callTool(plan.handler, call.callId, args) };
  }

  /** tool_call_end and AfterToolUse for a call of a concurrent batch, then its outcome arrives. */
  #complete(run: Started, output: ToolOutput): void {
    const call = this.#options.calls[run.index]!;
    try {
      const outcome = this.#finish(call, run.args, run.started, output);
      if (outcome instanceof Promise) outcome.then((settled) => this.#delivery.arrive(run.index, settled));
      else this.#delivery.arrive(run.index, outcome);
    } catch (error) {
      this.#delivery.arrive(run.index, crashed(call, error));
    }
  }

  async #afterBeforeHookLater(index: number, result: Promise<HookOutcome>): Promise<ToolCallOutcome> {
    try {
      return await this.#afterBeforeHook(index, await result);
    } catch (error) {
      return crashed(this.#options.calls[index]!, error);
    }
  }

  /** What BeforeToolUse decided: the call does not run, or runs with the arguments the chain ended with. */
  #afterBeforeHook(index: number, result: HookOutcome): Outcome {
    const go = this.#checkAfterHook(index, result);
    return 'output' in go ? go : this.#start(index, go.args);
  }

  /** tool_call_start, the tool, then `#finish`: at once when the tool answered at once. */
  #start(index: number, args: unknown): Outcome {
    const run = this.#launch(index, args);
    const call = this.#options.calls[index]!;
    if (run.called instanceof PendingTool) {
      return this.#finishLater(call, args, run.started, this.#watch(run.called, run.started));
    }
    return this.#finish(call, args, run.started, run.called);
  }

  async #finishLater(
    call: ToolCallRequest,
    args: unknown,
    started: number,
    output: Promise<ToolOutput>,
  ): Promise<ToolCallOutcome> {
    try {
      return await this.#finish(call, args, started, await output);
    } catch (error) {
      return crashed(call, error);
    }
  }

  /** tool_call_end and AfterToolUse. */
  #finish(call: ToolCallRequest, args: unknown, started: number, output: ToolOutput): Outcome {
    const durationMs = Math.round(performance.now() - started);
    this.#options.emit({
      type: 'tool_call_end',
      callId: call.callId,
      toolName: call.toolName,
      output,
      durationMs,
      success: !output.isError,
    });
    const outcome: ToolCallOutcome = {
      callId: call.callId,
      toolName: call.toolName,
      arguments: args,
      output,
      durationMs,
    };
    if (!this.#options.hooks.has('AfterToolUse')) return outcome;
    // A copy, so a handler that changes the output in place cannot change what was already recorded; written
    // out rather than spread (the same keys in the same order: both objects are made above).
    const data = {
      callId: outcome.callId,
      toolName: outcome.toolName,
      arguments: outcome.arguments,
      output: { content: output.content, isError: output.isError },
      durationMs,
    };
    const result = this.#hook('AfterToolUse', data);
    if (result instanceof Promise) return result.then(() => outcome);
    return outcome;
  }

  /** A call that does not run: tool_call_start and tool_call_end (success false) with its error result. */
  #notRun(call: ToolCallRequest, args: unknown, text: string): ToolCallOutcome {
    const output = failed(text);
    const { emit } = this.#options;
    emit({ type: 'tool_call_start', callId: call.callId, toolName: call.toolName, arguments: args });
    emit({
      type: 'tool_call_end',
      callId: call.callId,
      toolName: call.toolName,
      output,
      durationMs: 0,
      success: false,
    });
    return { callId: call.callId, toolName: call.toolName, arguments: args, output, durationMs: 0 };
  }

  /** Runs BeforeToolUse or AfterToolUse for a call; synchronous when every handler answered synchronously. */
  #hook(event: HookEvent, data: unknown): HookOutcome | Promise<HookOutcome> {
    const { hooks, sessionId, turnId, reportError } = this.#options;
    this.#hookOptions ??= { hooks, sessionId, turnId, timeoutMs: this.#timeoutMs, reportError };
    return runToolHook(this.#hookOptions, event, data);
  }

  #hookOptions: Parameters<typeof runToolHook>[0] | undefined;

  /** Calls a tool with its own CallAbort, among the running calls until it has its result. */
  #callTool(handler: ToolHandler, callId: string, args: unknown): ToolOutput | PendingTool {
    const { sessionId, turnId, signal, cancellation } = this.#options;
    const abort = new CallAbort({ signal, cancellation, onListen: this.#listen, running: this.#running });
    // The batch checked the signal before it got here; this covers the time since all the same.
    if ((cancellation ?? signal).aborted) abort.abort(signal.reason);
    return callTool({ handler, input: { callId, arguments: args, sessionId, turnId }, abort });
  }

  /** Bounds a tool that runs on by the timeout; from now on a turn cancel must reach its signal as it happens. */
  #watch(pending: PendingTool, started: number): Promise<ToolOutput> {
    return watchTool(pending, this.#runsOn(started));
  }

  /** A call runs on: the turn's signal is listened to, and its time-out goes on the batch's group. */
  #runsOn(started: number): { started: number; timeoutMs: number; timeouts: TimeoutGroup } {
    this.#startListening();
    this.#timeouts ??= new TimeoutGroup();
    return { started, timeoutMs: this.#timeoutMs, timeouts: this.#timeouts };
  }
}

/** A call of a concurrent batch whose tool was called. */
interface Started {
  index: number;
  args: unknown;
  started: number;
  called: ToolOutput | PendingTool;
}

function ignore(): void {}

keepShape(
  new BatchRun(
    {
      calls: [],
      sessionId: '',
      turnId: '',
      signal: new AbortController().signal,
      hooks: new HookRegistry(),
      runnable: 0,
      emit: ignore,
      reportError: ignore,
      onResult: ignore,
    },
    new Map(),
    0,
  ),
);
