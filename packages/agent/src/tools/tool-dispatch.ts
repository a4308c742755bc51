import { AgentError, describeError } from '../kernel/error.js';
import { type SchemaCheck, SchemaCompiler } from '../kernel/json-schema.js';
import { isPlainObject } from '../kernel/value-kind.js';
import type { ToolSpec } from '../ports/model.js';
import type { ToolHandler } from '../ports/tool.js';
import {
  type ExecuteBatchOptions,
  type RegisteredTool,
  ToolBatch,
  type ToolCallOutcome,
} from './tool-batch.js';

export type {
  AfterToolUse,
  BeforeToolUse,
  ExecuteBatchOptions,
  RegisteredTool,
  ToolCallOutcome,
  ToolCallRequest,
} from './tool-batch.js';
export { TOOL_OUTPUT_LIMIT_BYTES, truncateToolOutput } from './tool-output.js';

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
 * Runs the tool calls of one model answer (0006 §12, SPEC §4 "Tool calls"). Never rejects for a tool's
 * failure: every call ends as a ToolCallOutcome, an `isError` one when it could not run or failed.
 */
export class ToolDispatcher {
  /** The tools as the model is told about them, in registration order. */
  readonly specs: readonly ToolSpec[];
  readonly #tools = new Map<string, RegisteredTool>();
  readonly #timeoutMs: number;

  /** How long a tool may run; the bound of its BeforeToolUse / AfterToolUse handlers too. */
  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  /**
   * Compiles every tool's schema once; throws INVALID_CONFIG for a schema that is not an object schema or does
   * not compile. A tool found in `compiled` (see `subset`) keeps the check compiled for it there.
   */
  constructor(options: {
    tools: readonly ToolHandler[];
    timeoutMs: number;
    compiled?: ReadonlyMap<string, RegisteredTool>;
  }) {
    this.#timeoutMs = options.timeoutMs;
    const specs: ToolSpec[] = [];
    const compiler = new SchemaCompiler();
    for (const handler of options.tools) {
      const known = options.compiled?.get(handler.name);
      if (known !== undefined && known.handler === handler) {
        this.#tools.set(handler.name, known);
        specs.push({
          name: handler.name,
          description: handler.description,
          parameters: handler.parametersSchema,
        });
        continue;
      }
      const schema = handler.parametersSchema;
      if (!isPlainObject(schema) || schema.type !== 'object') {
        throw new AgentError({
          code: 'INVALID_CONFIG',
          message: `tool '${handler.name}': parametersSchema must be a JSON Schema object with type 'object'`,
        });
      }
      const rule: unknown = handler.needsApproval;
      if (rule !== undefined && typeof rule !== 'boolean' && typeof rule !== 'function') {
        throw new AgentError({
          code: 'INVALID_CONFIG',
          message: `tool '${handler.name}': needsApproval must be a boolean or a function of the arguments`,
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

  /** A dispatcher of the named tools only (unknown names are skipped), sharing their compiled schemas. */
  subset(names: readonly string[]): ToolDispatcher {
    const tools: ToolHandler[] = [];
    for (const name of names) {
      const registered = this.#tools.get(name);
      if (registered !== undefined) tools.push(registered.handler);
    }
    return new ToolDispatcher({ tools, timeoutMs: this.#timeoutMs, compiled: this.#tools });
  }

  /** True when a tool of this name is registered. */
  has(name: string): boolean {
    return this.#tools.has(name);
  }

  /** The registered tool of this name, with its compiled schema check. */
  find(name: string): RegisteredTool | undefined {
    return this.#tools.get(name);
  }

  /** The tool's `isMutating`; false for an unknown name. */
  isMutating(name: string): boolean {
    return this.#tools.get(name)?.handler.isMutating ?? false;
  }

  /**
   * Runs one batch: concurrently when every call that will run is read-only, else one after another in call
   * order (see ToolBatch). Answers with the outcomes in call order once every call has settled; rejects only
   * with the first error `onResult` threw (after the running calls have settled; calls not yet started are
   * skipped).
   */
  executeBatch(options: ExecuteBatchOptions): Promise<ToolCallOutcome[]> {
    // Not an async function: wrapping the batch's own promise in another costs ticks on every step.
    try {
      return new ToolBatch(options, this.#tools, this.#timeoutMs).run();
    } catch (error) {
      return Promise.reject(error);
    }
  }
}
