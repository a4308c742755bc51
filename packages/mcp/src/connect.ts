import { AgentError, isAgentError, type ToolHandler } from '@youyou/agent';
import { authorizationProblemOf } from './auth.js';
import {
  DEFAULT_TIMEOUT_MS,
  describeTarget,
  type McpServerConfig,
  redact,
  validateServerConfig,
} from './config.js';
import { describeFailure, isRequestTimeout } from './failure.js';
import { LinkOpenError } from './link.js';
import { ServerClient } from './server-client.js';
import { toToolHandlers } from './tools.js';

/**
 * A connected MCP server. `tools` were listed once, at connect; they call the server through this
 * connection, which reconnects by itself after the server died (see `connectMcpServer`).
 */
export interface McpServerConnection {
  readonly name: string;
  /** One handler per tool, named `${name}__${tool}`; register them with `AgentBuilder.registerTool`. */
  readonly tools: ToolHandler[];
  /** Closes the connection and stops a stdio server; the tools fail from then on. Never rejects. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** What `connectMcpServers` resolves to: the servers that connected, and why the others did not. */
export interface McpServerSet {
  /** The tools of every server that connected, in config order. */
  readonly tools: ToolHandler[];
  readonly connections: McpServerConnection[];
  /** One entry per server that could not be connected; the others work regardless. */
  readonly failures: { name: string; error: AgentError }[];
  /** Closes every connection. Never rejects. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

function connectError(config: McpServerConfig, error: unknown, timeoutMs: number): AgentError {
  const target = describeTarget(config.transport);
  const verb = config.transport.type === 'stdio' ? 'could not be started' : 'could not be reached';
  const failure = error instanceof LinkOpenError ? error.failure : error;
  const problem = authorizationProblemOf(config.transport, failure);
  if (problem !== undefined) {
    return new AgentError({
      code: 'AUTHORIZATION_REQUIRED',
      sourceComponent: 'tool',
      message: redact(
        `MCP server "${config.name}" (${target}) needs authorization: ${problem}`,
        config.transport,
      ),
      cause: failure,
    });
  }
  let detail = isRequestTimeout(failure)
    ? `it did not answer within ${timeoutMs}ms (timeoutMs)`
    : describeFailure(failure);
  if (error instanceof LinkOpenError && error.stderrTail !== '')
    detail += `; its stderr ended with: ${error.stderrTail}`;
  return new AgentError({
    code: 'TOOL_EXECUTION_ERROR',
    sourceComponent: 'tool',
    message: redact(`MCP server "${config.name}" (${target}) ${verb}: ${detail}`, config.transport),
    cause: failure,
  });
}

/**
 * Connects one MCP server (stdio: starts its process; http: opens a Streamable HTTP session), initialises
 * it and lists its tools. Rejects with INVALID_CONFIG for a bad config, with AUTHORIZATION_REQUIRED when a
 * server with an `authProvider` needs the user to authorize (again), and with TOOL_EXECUTION_ERROR (source
 * `tool`) naming the server and its command or URL when it cannot be started, reached or listed.
 *
 * The tools never throw. A failed call is an `isError` result `MCP server "name" failed: …`; a server that
 * died mid-call (process exit, connection dropped or refused) gives such a result, and the next call opens
 * a new connection (a new process or session, initialised again) before calling; if that fails too, the call
 * fails and the one after tries again. An HTTP server that answers 404 for our session (it restarted) gets a
 * new session and the call is sent once more, as the MCP spec asks.
 */
export async function connectMcpServer(config: McpServerConfig): Promise<McpServerConnection> {
  validateServerConfig(config);
  const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const client = new ServerClient({ config, timeoutMs });
  let tools: ToolHandler[];
  try {
    await client.connect();
    tools = toToolHandlers({ server: client, tools: await client.listTools() });
  } catch (error) {
    const failure = connectError(config, error, timeoutMs);
    await client.close();
    throw failure;
  }
  const close = (): Promise<void> => client.close();
  return { name: config.name, tools, close, [Symbol.asyncDispose]: close };
}

/**
 * Connects several servers at once. Bad configs reject the whole call with INVALID_CONFIG before any server
 * is started (names must be unique); a server that cannot be connected lands in `failures` and the others
 * are returned regardless.
 */
export async function connectMcpServers(configs: readonly McpServerConfig[]): Promise<McpServerSet> {
  const names = new Set<string>();
  for (const config of configs) {
    validateServerConfig(config);
    if (names.has(config.name)) {
      throw new AgentError({
        code: 'INVALID_CONFIG',
        message: `MCP server name "${config.name}" is used twice`,
      });
    }
    names.add(config.name);
  }
  const settled = await Promise.allSettled(configs.map((config) => connectMcpServer(config)));
  const connections: McpServerConnection[] = [];
  const failures: { name: string; error: AgentError }[] = [];
  settled.forEach((outcome, index) => {
    const name = configs[index]?.name ?? '';
    if (outcome.status === 'fulfilled') connections.push(outcome.value);
    else {
      const error = isAgentError(outcome.reason)
        ? outcome.reason
        : new AgentError({ code: 'TOOL_EXECUTION_ERROR', message: describeFailure(outcome.reason) });
      failures.push({ name, error });
    }
  });
  const close = async (): Promise<void> => {
    await Promise.all(connections.map((connection) => connection.close()));
  };
  return {
    tools: connections.flatMap((connection) => connection.tools),
    connections,
    failures,
    close,
    [Symbol.asyncDispose]: close,
  };
}
