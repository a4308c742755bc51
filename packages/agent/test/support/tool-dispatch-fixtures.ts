import { HookRegistry, hookRunner } from '../../src/hooks/hook.js';
import type { AgentError } from '../../src/kernel/error.js';
import type { AgentEventPayload } from '../../src/kernel/event.js';
import type { JsonSchema } from '../../src/kernel/types.js';
import type { ToolHandler, ToolInput, ToolOutput } from '../../src/ports/tool.js';
import type { ToolCallOutcome, ToolCallRequest, ToolDispatcher } from '../../src/tools/tool-dispatch.js';

export { type Deferred, deferred } from './common.js';

export const NOTICE = '\n\n[output truncated at 1MB]';
export const PATH_SCHEMA: JsonSchema = {
  type: 'object',
  properties: { path: { type: 'string' } },
  required: ['path'],
  additionalProperties: false,
};

export function tool(options: {
  name: string;
  isMutating?: boolean;
  schema?: JsonSchema;
  execute?: (input: ToolInput) => Promise<ToolOutput>;
}): ToolHandler {
  return {
    name: options.name,
    description: `the ${options.name} tool`,
    parametersSchema: options.schema ?? { type: 'object' },
    isMutating: options.isMutating ?? false,
    execute: options.execute ?? (async () => ({ content: `${options.name} ran`, isError: false })),
  };
}

export function call(toolName: string, args: unknown = {}, callId = `call-${toolName}`): ToolCallRequest {
  return { callId, toolName, arguments: args };
}

/**
 * Runs a batch with recording sinks; any option can be replaced. Its BeforeToolUse / AfterToolUse are those of
 * `hooks` (none by default), as the turn makes them.
 */
export async function runBatch(
  dispatcher: ToolDispatcher,
  calls: readonly ToolCallRequest[],
  overrides: Partial<Parameters<ToolDispatcher['executeBatch']>[0]> & { hooks?: HookRegistry } = {},
) {
  const events: AgentEventPayload[] = [];
  const errors: AgentError[] = [];
  const results: ToolCallOutcome[] = [];
  const { hooks = new HookRegistry(), ...options } = overrides;
  const scope = {
    sessionId: 'session-1',
    turnId: 'turn-1',
    timeoutMs: dispatcher.timeoutMs,
    reportError: (error: AgentError) => errors.push(error),
  };
  const outcomes = await dispatcher.executeBatch({
    calls,
    sessionId: 'session-1',
    turnId: 'turn-1',
    signal: new AbortController().signal,
    beforeToolUse: hookRunner(hooks, 'BeforeToolUse', scope),
    afterToolUse: hookRunner(hooks, 'AfterToolUse', scope),
    runnable: calls.length,
    emit: (payload) => events.push(payload),
    onResult: (outcome) => {
      results.push(outcome);
    },
    ...options,
  });
  return { outcomes, events, errors, results };
}

export function contents(outcomes: readonly ToolCallOutcome[]): string[] {
  return outcomes.map((outcome) => outcome.output.content);
}

/** A read-only tool that records how many calls run at once and waits for `gate` before it answers. */
export function inFlightTools(options: { names: string[]; mutating?: string[]; gate: () => Promise<void> }) {
  const stats = { inFlight: 0, max: 0, order: [] as string[] };
  const tools = options.names.map((name) =>
    tool({
      name,
      isMutating: options.mutating?.includes(name) ?? false,
      execute: async () => {
        stats.inFlight++;
        stats.max = Math.max(stats.max, stats.inFlight);
        stats.order.push(name);
        await options.gate();
        stats.inFlight--;
        return { content: name, isError: false };
      },
    }),
  );
  return { stats, tools };
}
