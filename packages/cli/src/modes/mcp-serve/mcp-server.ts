import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { packageVersion } from '../../runtime/version.js';
import { TURN_TOOL_NAME, type TurnRunner, turnTool } from './turn-tool.js';

/** Makes the MCP server one client talks to: the `run_turn` tool, answered by `runner`. */
export function createMcpServer(options: {
  runner: TurnRunner;
  workspace: string;
  /** The tenant of the client's token (HTTP), undefined over stdio. */
  tenant?: string | undefined;
}): Server {
  const server = new Server(
    { name: 'youyou', title: 'youyou', version: packageVersion() },
    {
      capabilities: { tools: {} },
      instructions: `youyou is a coding agent working in ${options.workspace}. Call ${TURN_TOOL_NAME} with a prompt; pass the sessionId it returns to continue the conversation.`,
    },
  );
  const tool = turnTool(options.workspace);
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [tool] }));
  server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
    if (request.params.name !== TURN_TOOL_NAME) {
      return {
        content: [{ type: 'text', text: `unknown tool; this server offers ${TURN_TOOL_NAME}` }],
        isError: true,
      };
    }
    // Only a client that asked (with a progressToken) is told how the turn goes.
    const progressToken = request.params._meta?.progressToken;
    let step = 0;
    const progress =
      progressToken === undefined
        ? undefined
        : (message: string): void => {
            step += 1;
            extra
              .sendNotification({
                method: 'notifications/progress',
                params: { progressToken, progress: step, message },
              })
              .catch(() => undefined);
          };
    return options.runner.call({
      arguments: request.params.arguments,
      channel: { server, relatedRequestId: extra.requestId },
      signal: extra.signal,
      tenant: options.tenant,
      progress,
    });
  });
  return server;
}
