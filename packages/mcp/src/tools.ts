import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchema, ToolHandler } from '@youyou/agent';
import { prefixedToolNames } from './naming.js';
import type { ServerClient } from './server-client.js';

/** The tool's input schema as a parameters schema: always `type: 'object'`, `{ type: 'object' }` when absent. */
export function toParametersSchema(inputSchema: unknown): JsonSchema {
  if (typeof inputSchema !== 'object' || inputSchema === null || Array.isArray(inputSchema)) {
    return { type: 'object' };
  }
  return { ...(inputSchema as JsonSchema), type: 'object' };
}

/** Tools the server says must run as MCP tasks cannot be called with a plain tools/call, so they are not offered. */
function isCallable(tool: Tool): boolean {
  return tool.execution?.taskSupport !== 'required';
}

/**
 * One ToolHandler per callable tool of the server, named by `prefixedToolNames`. Read-only means the server
 * set `readOnlyHint: true`; a tool without that hint may change something, so it is mutating. `idempotentHint:
 * true` makes it `idempotent`: after a crash, a call of it without a result runs again without asking (the
 * server vouches for that as it does for read-only; its tools run its own code either way).
 */
export function toToolHandlers(options: { server: ServerClient; tools: readonly Tool[] }): ToolHandler[] {
  const { server } = options;
  const tools = options.tools.filter(isCallable);
  const names = prefixedToolNames(
    server.config.name,
    tools.map((tool) => tool.name),
  );
  return tools.map((tool, index) => {
    const toolName = tool.name;
    return {
      name: names[index] ?? toolName,
      description:
        tool.description ??
        tool.title ??
        tool.annotations?.title ??
        `The tool "${toolName}" of the MCP server "${server.config.name}".`,
      parametersSchema: toParametersSchema(tool.inputSchema),
      isMutating: tool.annotations?.readOnlyHint !== true,
      idempotent: tool.annotations?.idempotentHint === true,
      execute: (input) =>
        server.callTool({
          toolName,
          arguments: input.arguments,
          signal: input.signal,
          onOutput: input.onOutput,
          call: {
            sessionId: input.sessionId,
            turnId: input.turnId,
            callId: input.callId,
            toolName: names[index] ?? toolName,
          },
        }),
    };
  });
}
