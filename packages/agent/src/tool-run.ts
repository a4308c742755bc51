import { AgentError, describeError } from './error.js';
import type { HookDispatchResult, HookRegistry } from './hook.js';
import type { HookEvent } from './ports/plugin.js';
import type { ToolHandler, ToolInput, ToolOutput } from './ports/tool.js';
import { isThenable } from './settle.js';
import { keepShape } from './shapes.js';
import type { ToolCallOutcome, ToolCallRequest } from './tool-dispatch.js';
import { failed, normalizeOutput } from './tool-output.js';
import { type TimeoutEntry, TimeoutGroup } from './tool-timeouts.js';

/**
 * One tool call's cancellation, as the signal its tool receives. The AbortController (and AbortSignal) is
 * made only when the tool reads its signal: making one costs microseconds, and most tools never look at it.
 * Until then an abort's reason is remembered and the turn's signal is looked at directly, so the signal the
 * tool reads is in the state, with the reason, that one made at the call's start would have had: aborted by
 * a turn cancel that came while the call ran, by its time-out, never by a cancel after the call ended.
 */
export class CallAbort {
  readonly #turnSignal: AbortSignal;
  /** Whether the turn is cancelled, as a plain field (see TurnCancellation); the turn's signal when absent. */
  readonly #turnCancelled: { readonly aborted: boolean };
  /** Called when the signal is made while the call runs: from then on a turn cancel must reach it at once. */
  readonly #onListen: () => void;
  /** The batch's list of the calls executing now, and this call's place in it (cleared at `finish`). */
  readonly #running: (CallAbort | undefined)[];
  readonly #slot: number;
  #controller: AbortController | undefined;
  #reason: { value: unknown } | undefined;
  #finished = false;

  /** Takes its place at the end of `running`. */
  constructor(turn: {
    signal: AbortSignal;
    cancellation: { readonly aborted: boolean } | undefined;
    onListen: () => void;
    running: (CallAbort | undefined)[];
  }) {
    this.#turnSignal = turn.signal;
    this.#turnCancelled = turn.cancellation ?? turn.signal;
    this.#onListen = turn.onListen;
    this.#running = turn.running;
    this.#slot = turn.running.push(this) - 1;
  }

  /** The call's signal, made on first read. */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      const controller = new AbortController();
      this.#controller = controller;
      if (this.#reason !== undefined) controller.abort(this.#reason.value);
      else if (!this.#finished) {
        if (this.#turnCancelled.aborted) controller.abort(this.#turnSignal.reason);
        else this.#onListen();
      }
    }
    return this.#controller.signal;
  }

  /** Aborts the signal, or remembers the reason until it is read; later calls change nothing. */
  abort(reason: unknown): void {
    if (this.#controller !== undefined) this.#controller.abort(reason);
    else this.#reason ??= { value: reason };
  }

  /**
   * The call has its result: it leaves the running calls; a turn cancel before now still counts, one after it
   * does not reach the call.
   */
  finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#running[this.#slot] = undefined;
    if (this.#controller === undefined && this.#turnCancelled.aborted) this.abort(this.#turnSignal.reason);
  }
}

/**
 * Lets a subclass add a private field to an object it did not make: a constructor may return another object,
 * and the subclass's fields are then added to that one. Nothing of it is visible on the object.
 */
class Stamp {
  constructor(target: object) {
    // biome-ignore lint/correctness/noConstructorReturn: returning the target is the point, see above.
    return target;
  }
}

/** Ties a ToolInput to its call's CallAbort, invisibly to the tool. */
class AbortStamp extends Stamp {
  readonly #abort: CallAbort;

  constructor(target: object, abort: CallAbort) {
    super(target);
    this.#abort = abort;
  }

  static of(target: object): CallAbort {
    return (target as AbortStamp).#abort;
  }
}

/**
 * The `signal` of every ToolInput: one getter for all of them, so that adding it is cheap (an object literal
 * with a getter of its own costs a hidden class, hundreds of bytes and ~0.4 µs per call). Assigning to it
 * makes it a plain property, as it was before it became a getter.
 */
const SIGNAL_PROPERTY: PropertyDescriptor = {
  get(this: object): AbortSignal {
    return AbortStamp.of(this).signal;
  },
  set(this: object, value: unknown): void {
    Object.defineProperty(this, 'signal', { value, writable: true, enumerable: true, configurable: true });
  },
  enumerable: true,
  configurable: true,
};

/**
 * The ToolInput of one call: a plain object whose `signal` is an own enumerable property, as a tool that
 * copies its input with `{ ...input }` needs, made on first read.
 */
export function toolInput(
  fields: { callId: string; arguments: unknown; sessionId: string; turnId: string },
  abort: CallAbort,
): ToolInput {
  new AbortStamp(fields, abort);
  Object.defineProperty(fields, 'signal', SIGNAL_PROPERTY);
  return fields as ToolInput;
}

/** A tool that answered with a promise: what `watchTool` needs to bound it. */
export class PendingTool {
  constructor(
    readonly handler: ToolHandler,
    readonly answer: unknown,
    /** Finished (`finish()`) once the call has its result. */
    readonly abort: CallAbort,
  ) {}
}

/**
 * Calls a tool with its input. A tool that answers synchronously (or throws) is answered at once: it needs no
 * timer, it cannot be timed out any more. One that answers with a promise comes back as a PendingTool.
 */
export function callTool(options: {
  handler: ToolHandler;
  input: { callId: string; arguments: unknown; sessionId: string; turnId: string };
  abort: CallAbort;
}): ToolOutput | PendingTool {
  const { handler, abort } = options;
  let answer: unknown;
  try {
    // The signal is made on first read: most tools never look at it, and an AbortSignal costs microseconds.
    answer = handler.execute(toolInput(options.input, abort));
  } catch (error) {
    abort.finish();
    return failed(describeError(error));
  }
  let thenable: boolean;
  try {
    thenable = isThenable(answer);
  } catch {
    // A `then` getter that threw: Promise.resolve in watchTool turns it into a rejection, as it always did.
    thenable = true;
  }
  if (thenable) return new PendingTool(handler, answer, abort);
  abort.finish();
  return normalizeOutput(answer, handler.name);
}

/**
 * Bounds a tool's answer by the timeout, counted from `started` (as a timer set before the tool was called
 * would count), on the batch's TimeoutGroup. On timeout the result is decided at once and the tool's signal
 * fires; a late answer or rejection is ignored, never left unhandled. Never rejects.
 */
export function watchTool(
  pending: PendingTool,
  timing: { started: number; timeoutMs: number; timeouts: TimeoutGroup },
): Promise<ToolOutput> {
  return new Promise<ToolOutput>((resolve) => {
    watchToolInto(pending, timing, RESOLVE, resolve);
  });
}

/** Who hears of a watched tool's output, with the token it gave: see `watchToolInto`. */
export interface ToolWatcher<Token> {
  toolSettled(token: Token, output: ToolOutput): void;
}

/** The watcher of `watchTool`: its token is the promise's resolve function. */
const RESOLVE: ToolWatcher<(output: ToolOutput) => void> = {
  toolSettled(resolve, output) {
    resolve(output);
  },
};

/**
 * `watchTool` without a promise of its own: `watcher.toolSettled(token, output)` is called once, when the tool
 * answers or rejects (from the answer's promise reaction) or times out (after its signal fired).
 */
export function watchToolInto<Token>(
  pending: PendingTool,
  timing: { started: number; timeoutMs: number; timeouts: TimeoutGroup },
  watcher: ToolWatcher<Token>,
  token: Token,
): void {
  const watch = new ToolWatch(pending, timing, watcher, token);
  timing.timeouts.add(watch);
  Promise.resolve(pending.answer).then(watch.answered.bind(watch), watch.failed.bind(watch));
}

/**
 * The wait of `watchToolInto`: the entry on the batch's TimeoutGroup and the handlers of the tool's answer. Its
 * work is in methods, not in closures made per call: V8 keeps a closure's optimized code only while one of its
 * closures lives, so every full collection sent per-call closures back to the interpreter.
 */
class ToolWatch<Token> implements TimeoutEntry {
  readonly due: number;
  #settled = false;
  readonly #pending: PendingTool;
  readonly #timeoutMs: number;
  readonly #timeouts: TimeoutGroup;
  readonly #watcher: ToolWatcher<Token>;
  readonly #token: Token;

  constructor(
    pending: PendingTool,
    timing: { started: number; timeoutMs: number; timeouts: TimeoutGroup },
    watcher: ToolWatcher<Token>,
    token: Token,
  ) {
    this.#pending = pending;
    this.#timeoutMs = timing.timeoutMs;
    this.#timeouts = timing.timeouts;
    this.#watcher = watcher;
    this.#token = token;
    this.due = timing.started + timing.timeoutMs;
  }

  /** The tool answered. */
  answered(value: unknown): void {
    if (this.#settle())
      this.#watcher.toolSettled(this.#token, normalizeOutput(value, this.#pending.handler.name));
  }

  /** The tool rejected. */
  failed(error: unknown): void {
    if (this.#settle()) this.#watcher.toolSettled(this.#token, failed(describeError(error)));
  }

  /** The tool's time is up: its result is decided now, its signal fires, then the watcher hears of it. */
  onTimeout(): void {
    if (!this.#settle()) return;
    const { handler, abort } = this.#pending;
    abort.abort(
      new AgentError({
        code: 'TOOL_TIMEOUT',
        message: `tool '${handler.name}' timed out after ${this.#timeoutMs}ms`,
      }),
    );
    this.#watcher.toolSettled(this.#token, failed(`Tool timed out after ${this.#timeoutMs}ms`));
  }

  /** True the first time: the call leaves the timeouts and the running calls; a late answer is ignored. */
  #settle(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    this.#timeouts.delete(this);
    this.#pending.abort.finish();
    return true;
  }
}

/** What a hook run tells a call: the data the chain ended with, and why it stopped the call, if it did. */
export interface HookOutcome {
  data: unknown;
  abortReason: string | undefined;
}

/**
 * Runs BeforeToolUse or AfterToolUse, reporting its failures; a dispatch that throws counts as `continue`.
 * Synchronous when every handler answered synchronously; the promise, when there is one, never rejects.
 */
export function runToolHook(
  options: {
    hooks: HookRegistry;
    sessionId: string;
    turnId: string;
    timeoutMs: number;
    reportError: (error: AgentError) => void;
  },
  event: HookEvent,
  data: unknown,
): HookOutcome | Promise<HookOutcome> {
  const { hooks, sessionId, turnId, timeoutMs } = options;
  try {
    const result = hooks.dispatch({ event, sessionId, turnId, data, timeoutMs });
    if (!(result instanceof Promise)) return reportHookErrors(options, result);
    return result.then(
      (settled) => reportHookErrors(options, settled),
      (error: unknown) => hookFailed({ options, event, data, error }),
    );
  } catch (error) {
    return hookFailed({ options, event, data, error });
  }
}

function reportHookErrors(
  options: { reportError: (error: AgentError) => void },
  result: HookDispatchResult,
): HookOutcome {
  for (const error of result.errors) options.reportError(error);
  return result;
}

/** A dispatch that threw counts as `continue`, reported as PLUGIN_ERROR. */
function hookFailed(failure: {
  options: { reportError: (error: AgentError) => void };
  event: HookEvent;
  data: unknown;
  error: unknown;
}): HookOutcome {
  const { event, error } = failure;
  failure.options.reportError(
    new AgentError({
      code: 'PLUGIN_ERROR',
      message: `${event} hook failed: ${describeError(error)}`,
      cause: error,
    }),
  );
  return { data: failure.data, abortReason: undefined };
}

/** The result of a call whose run failed in the runtime itself (an `emit` that threw): it still needs one. */
export function crashed(call: ToolCallRequest, error: unknown): ToolCallOutcome {
  return {
    callId: call.callId,
    toolName: call.toolName,
    arguments: call.arguments,
    output: failed(`Tool call failed: ${describeError(error)}`),
    durationMs: 0,
  };
}

/** The `arguments` of the data a BeforeToolUse chain ended with; undefined (so the schema fails) when it has none. */
export function finalArguments(data: unknown): unknown {
  return typeof data === 'object' && data !== null ? (data as { arguments?: unknown }).arguments : undefined;
}

const exemplarAbort = new CallAbort({
  signal: new AbortController().signal,
  cancellation: { aborted: false },
  onListen: () => undefined,
  running: [],
});
keepShape(exemplarAbort);
keepShape(toolInput({ callId: '', arguments: undefined, sessionId: '', turnId: '' }, exemplarAbort));
const idleTool: ToolHandler = {
  name: 'exemplar',
  description: '',
  parametersSchema: {},
  isMutating: false,
  execute: () => Promise.resolve({ content: '', isError: false }),
};
const idlePending = new PendingTool(idleTool, undefined, exemplarAbort);
keepShape(idlePending);
keepShape(
  new ToolWatch(
    idlePending,
    { started: 0, timeoutMs: 0, timeouts: new TimeoutGroup() },
    RESOLVE,
    () => undefined,
  ),
);
