import { AgentError, describeError } from './error.js';
import type { AgentEventPayload } from './event.js';
import type { HookRegistry } from './hook.js';
import { isPlainObject, type SchemaCheck, SchemaCompiler } from './json-schema.js';
import type { ToolSpec } from './ports/model.js';
import type { ToolHandler, ToolOutput } from './ports/tool.js';
import { BatchRun } from './tool-batch.js';

export { TOOL_OUTPUT_LIMIT_BYTES, truncateToolOutput } from './tool-output.js';

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

/** Who hears of a turn cancel directly from a BatchCancellation. */
export interface CancelWatcher {
  turnCancelled(): void;
}

/**
 * The turn's cancellation as a batch sees it: a plain flag and, when it offers them, `watch`/`unwatch`, through
 * which a batch hears of a cancel (right after the signal fired) without a listener on the signal: Node's
 * EventTarget makes adding and removing one a cost per batch, and a large one in the first turn after a full
 * collection.
 */
export interface BatchCancellation {
  readonly aborted: boolean;
  watch?(watcher: CancelWatcher): void;
  unwatch?(watcher: CancelWatcher): void;
}

/** What `executeBatch` takes. */
export interface ExecuteBatchOptions {
  calls: readonly ToolCallRequest[];
  sessionId: string;
  turnId: string;
  /** The turn's cancellation. */
  signal: AbortSignal;
  /** The same as `signal.aborted`, cheaper to ask (the turn's TurnCancellation); `signal` itself when absent. */
  cancellation?: BatchCancellation;
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

/** Parses a call's raw JSON text; empty or white-space text means `{}` (models send it for tools without parameters). */
export function parseToolArguments(raw: string): { ok: true; value: unknown } | { ok: false; error: string } {
  if (raw.trim() === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch (error) {
    return { ok: false, error: describeError(error) };
  }
}

/** A registered tool with its compiled schema check. */
export interface RegisteredTool {
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
   * order. Answers with the outcomes in call order once every call has settled, at once when the whole batch
   * ran synchronously, else as a promise (await it either way); fails only with the first error `onResult`
   * threw (after the running calls have settled; calls not yet started are skipped).
   */
  executeBatch(options: ExecuteBatchOptions): ToolCallOutcome[] | Promise<ToolCallOutcome[]> {
    try {
      return new BatchRun(options, this.#tools, this.#timeoutMs).run();
    } catch (error) {
      return Promise.reject(error);
    }
  }
}
