import { AgentError, describeError } from './error.js';
import type { AgentEventPayload } from './event.js';
import type { HookRegistry } from './hook.js';
import { isPlainObject, type SchemaCheck, SchemaCompiler } from './json-schema.js';
import type { ToolSpec } from './ports/model.js';
import type { HookEvent } from './ports/plugin.js';
import type { ToolHandler, ToolOutput } from './ports/tool.js';

/** A parsed call from the model: arguments already parsed by parseToolArguments. */
export interface ToolCallRequest {
  callId: string;
  toolName: string;
  arguments: unknown;
  /** Set when the raw text did not parse; `arguments` then holds the raw string. */
  parseError?: string;
}

/** The result of one call of a batch, with the arguments the tool actually received. */
export interface ToolCallOutcome {
  callId: string;
  toolName: string;
  arguments: unknown;
  output: ToolOutput;
  durationMs: number;
}

/** What `executeBatch` takes. */
export interface ExecuteBatchOptions {
  calls: readonly ToolCallRequest[];
  sessionId: string;
  turnId: string;
  /** The turn's cancellation. */
  signal: AbortSignal;
  hooks: HookRegistry;
  /** How many calls of this batch may run (the tool-call limit); later calls get an `isError` result. */
  runnable: number;
  /** Receives tool_call_start / tool_call_end. */
  emit: (payload: AgentEventPayload) => void;
  /** Receives the PLUGIN_ERRORs of BeforeToolUse / AfterToolUse handlers. */
  reportError: (error: AgentError) => void;
  /** Awaited strictly in call order, each as soon as it and every earlier outcome are in (write-ahead). */
  onResult: (outcome: ToolCallOutcome) => Promise<void> | void;
}

/** The most UTF-8 bytes of tool output that enter the context (1 MiB). */
export const TOOL_OUTPUT_LIMIT_BYTES = 1_048_576;

const TRUNCATION_NOTICE = '\n\n[output truncated at 1MB]';
const CANCELLED_TEXT = 'Tool call cancelled before it ran';
const LIMIT_TEXT = "Tool call not run: the turn's tool-call limit was reached";
const INVALID_RESULT_TEXT = 'returned an invalid result: expected { content: string, isError: boolean }';

/** Parses a call's raw JSON text; empty or white-space text means `{}` (models send it for tools without parameters). */
export function parseToolArguments(raw: string): { ok: true; value: unknown } | { ok: false; error: string } {
  if (raw.trim() === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch (error) {
    return { ok: false, error: describeError(error) };
  }
}

/**
 * Cuts content whose UTF-8 form is over 1 MiB to the longest prefix that fits, ending on a character
 * boundary, and appends the truncation notice.
 */
export function truncateToolOutput(content: string): string {
  // A UTF-16 code unit never takes more than 3 UTF-8 bytes, so short content needs no encoding at all.
  if (content.length * 3 <= TOOL_OUTPUT_LIMIT_BYTES) return content;
  // encodeInto writes whole characters only (a surrogate pair is one unit) and stops at the first that
  // does not fit, so `read` is the length of the longest prefix within the limit.
  const { read } = new TextEncoder().encodeInto(content, new Uint8Array(TOOL_OUTPUT_LIMIT_BYTES));
  if (read === content.length) return content;
  return content.slice(0, read) + TRUNCATION_NOTICE;
}

function failed(content: string): ToolOutput {
  return { content: truncateToolOutput(content), isError: true };
}

/** A tool's answer made safe: anything that is not a ToolOutput becomes an error, extra fields are dropped. */
function normalizeOutput(value: unknown, toolName: string): ToolOutput {
  if (typeof value === 'object' && value !== null) {
    const { content, isError } = value as { content?: unknown; isError?: unknown };
    if (typeof content === 'string' && typeof isError === 'boolean') {
      return { content: truncateToolOutput(content), isError };
    }
  }
  return failed(`Tool '${toolName}' ${INVALID_RESULT_TEXT}`);
}

interface RegisteredTool {
  handler: ToolHandler;
  check: SchemaCheck;
}

/**
 * Runs the tool calls of one model answer (0006 §12, SPEC §4 "Tool calls"). Never rejects for a tool's
 * failure: every call ends as a ToolCallOutcome, an `isError` one when it could not run or failed.
 */
export class ToolDispatcher {
  /** The tools as the model is told about them, in registration order. */
  readonly specs: readonly ToolSpec[];
  readonly #tools = new Map<string, RegisteredTool>();
  readonly #timeoutMs: number;

  /** Compiles every tool's schema once; throws INVALID_CONFIG for a schema that is not an object schema or does not compile. */
  constructor(options: { tools: readonly ToolHandler[]; timeoutMs: number }) {
    this.#timeoutMs = options.timeoutMs;
    const specs: ToolSpec[] = [];
    const compiler = new SchemaCompiler();
    for (const handler of options.tools) {
      const schema = handler.parametersSchema;
      if (!isPlainObject(schema) || schema.type !== 'object') {
        throw new AgentError({
          code: 'INVALID_CONFIG',
          message: `tool '${handler.name}': parametersSchema must be a JSON Schema object with type 'object'`,
        });
      }
      let check: SchemaCheck;
      try {
        check = compiler.compile(schema);
      } catch (error) {
        throw new AgentError({
          code: 'INVALID_CONFIG',
          message: `tool '${handler.name}': parametersSchema does not compile: ${describeError(error)}`,
          cause: error,
        });
      }
      this.#tools.set(handler.name, { handler, check });
      specs.push({ name: handler.name, description: handler.description, parameters: schema });
    }
    this.specs = specs;
  }

  /** True when a tool of this name is registered. */
  has(name: string): boolean {
    return this.#tools.has(name);
  }

  /** The tool's `isMutating`; false for an unknown name. */
  isMutating(name: string): boolean {
    return this.#tools.get(name)?.handler.isMutating ?? false;
  }

  /**
   * Runs one batch: concurrently when every call that will run is read-only, else one after another in call
   * order. Resolves with the outcomes in call order once every call has settled; rejects only with the
   * first error `onResult` threw (after the running calls have settled; calls not yet started are skipped).
   */
  async executeBatch(options: ExecuteBatchOptions): Promise<ToolCallOutcome[]> {
    return new BatchRun(options, this.#tools, this.#timeoutMs).run();
  }
}

/** The state of one executeBatch call. */
class BatchRun {
  readonly #options: ExecuteBatchOptions;
  readonly #tools: ReadonlyMap<string, RegisteredTool>;
  readonly #timeoutMs: number;
  /** Per call: the tool to run, or the error text of a call that will not run. */
  readonly #plans: (RegisteredTool | string)[];
  readonly #outcomes: (ToolCallOutcome | undefined)[];
  /** The controllers of the tools executing now; a turn cancel aborts them. */
  readonly #running = new Set<AbortController>();
  #delivered = 0;
  #delivery: Promise<void> = Promise.resolve();
  #deliveryError: { error: unknown } | undefined;

  constructor(options: ExecuteBatchOptions, tools: ReadonlyMap<string, RegisteredTool>, timeoutMs: number) {
    this.#options = options;
    this.#tools = tools;
    this.#timeoutMs = timeoutMs;
    this.#plans = options.calls.map((call, index) => this.#plan(call, index));
    this.#outcomes = new Array<ToolCallOutcome | undefined>(options.calls.length);
  }

  async run(): Promise<ToolCallOutcome[]> {
    const { signal, calls } = this.#options;
    let executable = false;
    let serial = false;
    for (const plan of this.#plans) {
      if (typeof plan === 'string') continue;
      executable = true;
      if (plan.handler.isMutating) serial = true;
    }
    // One listener per batch, not per call: a batch of more than ten concurrent calls would otherwise trip
    // Node's MaxListenersExceededWarning on the turn's signal.
    const onTurnAbort = (): void => {
      for (const controller of this.#running) controller.abort(signal.reason);
    };
    if (executable) signal.addEventListener('abort', onTurnAbort);
    try {
      if (serial) {
        for (let index = 0; index < calls.length; index++) {
          const outcome = await this.#runCall(index);
          this.#outcomes[index] = outcome;
          await this.#deliver(outcome);
        }
      } else {
        const pending: Promise<void>[] = [];
        for (let index = 0; index < calls.length; index++) {
          pending.push(
            this.#runCall(index).then((outcome) => {
              this.#outcomes[index] = outcome;
              this.#delivery = this.#delivery.then(() => this.#deliverReady());
            }),
          );
        }
        await Promise.all(pending);
        await this.#delivery;
      }
    } finally {
      if (executable) signal.removeEventListener('abort', onTurnAbort);
    }
    if (this.#deliveryError !== undefined) throw this.#deliveryError.error;
    return this.#outcomes as ToolCallOutcome[];
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
    return this.#options.signal.aborted || this.#deliveryError !== undefined;
  }

  /** Delivers every outcome whose predecessors are delivered; runs chained, so never twice at once. */
  async #deliverReady(): Promise<void> {
    for (let outcome = this.#outcomes[this.#delivered]; outcome !== undefined; ) {
      await this.#deliver(outcome);
      outcome = this.#outcomes[this.#delivered];
    }
  }

  async #deliver(outcome: ToolCallOutcome): Promise<void> {
    this.#delivered++;
    if (this.#deliveryError !== undefined) return;
    try {
      await this.#options.onResult(outcome);
    } catch (error) {
      this.#deliveryError = { error };
    }
  }

  /** One call from start to end; never rejects. */
  async #runCall(index: number): Promise<ToolCallOutcome> {
    const call = this.#options.calls[index]!;
    const plan = this.#plans[index]!;
    try {
      if (typeof plan === 'string') return this.#notRun(call, call.arguments, plan);
      if (this.#stopped()) return this.#notRun(call, call.arguments, CANCELLED_TEXT);
      let args = call.arguments;
      if (this.#options.hooks.has('BeforeToolUse')) {
        const data = { callId: call.callId, toolName: call.toolName, arguments: args };
        const result = await this.#hook('BeforeToolUse', data);
        if (result.abortReason !== undefined) {
          return this.#notRun(call, args, `Tool aborted by hook: ${result.abortReason}`);
        }
        // Checked again even when the data object is the same one: a handler may have changed it in place.
        args = finalArguments(result.data);
        const failure = plan.check(args);
        if (failure !== undefined) {
          const text = `Invalid arguments for tool '${call.toolName}' (as changed by a BeforeToolUse hook): ${failure}`;
          return this.#notRun(call, args, text);
        }
        if (this.#stopped()) return this.#notRun(call, args, CANCELLED_TEXT);
      }
      const { emit } = this.#options;
      emit({ type: 'tool_call_start', callId: call.callId, toolName: call.toolName, arguments: args });
      const started = performance.now();
      const output = await this.#execute(plan.handler, call.callId, args);
      const durationMs = Math.round(performance.now() - started);
      emit({
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
      if (this.#options.hooks.has('AfterToolUse')) {
        // A copy, so a handler that changes the output in place cannot change what was already recorded.
        await this.#hook('AfterToolUse', { ...outcome, output: { ...outcome.output } });
      }
      return outcome;
    } catch (error) {
      // Only a throwing `emit` gets here; the call still needs a result so its tool_call is answered.
      return {
        callId: call.callId,
        toolName: call.toolName,
        arguments: call.arguments,
        output: failed(`Tool call failed: ${describeError(error)}`),
        durationMs: 0,
      };
    }
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

  /** Runs a hook, reporting its failures; a dispatch that throws counts as `continue`. */
  async #hook(event: HookEvent, data: unknown): Promise<{ data: unknown; abortReason: string | undefined }> {
    const { hooks, sessionId, turnId, reportError } = this.#options;
    try {
      const result = await hooks.dispatch({ event, sessionId, turnId, data, timeoutMs: this.#timeoutMs });
      for (const error of result.errors) reportError(error);
      return result;
    } catch (error) {
      reportError(
        new AgentError({
          code: 'PLUGIN_ERROR',
          message: `${event} hook failed: ${describeError(error)}`,
          cause: error,
        }),
      );
      return { data, abortReason: undefined };
    }
  }

  /**
   * Executes a tool with its own signal, bounded by the timeout. On timeout the result is decided at once and
   * the tool's signal fires; on turn cancel the signal fires and the tool's own answer is still awaited (until
   * the same timeout). A late answer or rejection is ignored, never left unhandled.
   */
  #execute(handler: ToolHandler, callId: string, args: unknown): Promise<ToolOutput> {
    const { sessionId, turnId, signal } = this.#options;
    const timeoutMs = this.#timeoutMs;
    const controller = new AbortController();
    const running = this.#running;
    return new Promise<ToolOutput>((resolve) => {
      let settled = false;
      const finish = (output: ToolOutput): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        running.delete(controller);
        resolve(output);
      };
      const timer = setTimeout(() => {
        finish(failed(`Tool timed out after ${timeoutMs}ms`));
        controller.abort(
          new AgentError({
            code: 'TOOL_TIMEOUT',
            message: `tool '${handler.name}' timed out after ${timeoutMs}ms`,
          }),
        );
      }, timeoutMs);
      running.add(controller);
      // The batch checked the signal before it got here; this covers a listener-less window all the same.
      if (signal.aborted) controller.abort(signal.reason);
      let answer: unknown;
      try {
        answer = handler.execute({ callId, arguments: args, sessionId, turnId, signal: controller.signal });
      } catch (error) {
        finish(failed(describeError(error)));
        return;
      }
      Promise.resolve(answer).then(
        (value) => finish(normalizeOutput(value, handler.name)),
        (error: unknown) => finish(failed(describeError(error))),
      );
    });
  }
}

/** The `arguments` of the data a BeforeToolUse chain ended with; undefined (so the schema fails) when it has none. */
function finalArguments(data: unknown): unknown {
  return typeof data === 'object' && data !== null ? (data as { arguments?: unknown }).arguments : undefined;
}
