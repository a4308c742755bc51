import { AgentError, isAgentError, type ToolHandler } from '@youyou/agent';
import { authorizationProblemOf } from './auth.js';
import {
  DEFAULT_TIMEOUT_MS,
  describeTarget,
  type McpServerConfig,
  redact,
  validateServerConfig,
} from './config.js';
import type { ElicitationHandler } from './elicitation.js';
import { describeFailure, isRequestTimeout } from './failure.js';
import { LinkOpenError, type McpListKind } from './link.js';
import { prefixedToolNames } from './naming.js';
import { type McpPrompt, type McpPromptContent, promptContent, toMcpPrompt } from './prompts.js';
import { RESOURCE_TOOL_NAMES, resourceTools } from './resources.js';
import { ServerClient } from './server-client.js';
import { toToolHandlers } from './tools.js';

/** What a host may add to a connection besides the config. */
export interface McpClientOptions {
  /**
   * Answers servers' `elicitation/create` questions (forms: string, number, boolean and enum fields).
   * Given, the client offers elicitation in `initialize`; without it, servers are told it is not supported.
   */
  onElicitation?: ElicitationHandler;
  /**
   * Hears `notifications/{tools,resources,prompts}/list_changed`. Resources and prompts are listed anew on
   * every request anyway; for tools, call `listTools()` and register what it gives (between turns).
   */
  onListChanged?: (event: { server: string; list: McpListKind }) => void;
}

/** What `getPrompt` takes. */
export interface GetPromptOptions {
  name: string;
  /** The prompt's arguments by name (all strings, as MCP has them). */
  arguments?: Record<string, string>;
  signal?: AbortSignal;
}

/**
 * A connected MCP server. `tools` were listed once, at connect; they call the server through this
 * connection, which reconnects by itself after the server died (see `connectMcpServer`).
 */
export interface McpServerConnection {
  readonly name: string;
  /**
   * One handler per tool, named `${name}__${tool}`, listed at connect; and, when the server offers
   * resources, `${name}__list_resources` and `${name}__read_resource`. Register them with
   * `AgentBuilder.registerTool`.
   */
  readonly tools: ToolHandler[];
  /** The tools listed anew (after a `tools/list_changed`), resource tools included. Rejects when the server fails. */
  listTools(): Promise<ToolHandler[]>;
  /** The server's prompts, listed anew (none when it offers no prompts). Rejects with TOOL_EXECUTION_ERROR. */
  listPrompts(options?: { signal?: AbortSignal }): Promise<McpPrompt[]>;
  /** One prompt filled in, as a user message's content. Rejects with TOOL_EXECUTION_ERROR naming the server. */
  getPrompt(options: GetPromptOptions): Promise<McpPromptContent>;
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
export async function connectMcpServer(
  config: McpServerConfig,
  options: McpClientOptions = {},
): Promise<McpServerConnection> {
  validateServerConfig(config);
  const timeoutMs = config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const { onListChanged } = options;
  const client = new ServerClient({
    config,
    timeoutMs,
    elicitation: options.onElicitation,
    onListChanged:
      onListChanged === undefined ? undefined : (list) => onListChanged({ server: config.name, list }),
  });
  let tools: ToolHandler[];
  try {
    await client.connect();
    tools = await allTools(client);
  } catch (error) {
    const failure = connectError(config, error, timeoutMs);
    await client.close();
    throw failure;
  }
  const close = (): Promise<void> => client.close();
  const failed = (what: string, error: unknown): AgentError =>
    new AgentError({
      code: 'TOOL_EXECUTION_ERROR',
      sourceComponent: 'tool',
      message: redact(`MCP server "${config.name}" ${what}: ${describeFailure(error)}`, config.transport),
      cause: error,
    });
  return {
    name: config.name,
    tools,
    listTools: () =>
      allTools(client).catch((error: unknown) => Promise.reject(failed('could not list its tools', error))),
    listPrompts: async (request = {}) => {
      try {
        return (await client.listPrompts(request.signal)).map(toMcpPrompt);
      } catch (error) {
        throw failed('could not list its prompts', error);
      }
    },
    getPrompt: async (request) => {
      try {
        return promptContent(await client.getPrompt(request.name, request.arguments ?? {}, request.signal));
      } catch (error) {
        throw failed(`could not give the prompt ${JSON.stringify(request.name)}`, error);
      }
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** The server's tools and, when it offers resources, the two resource tools (named after its own tools). */
async function allTools(client: ServerClient): Promise<ToolHandler[]> {
  const tools = toToolHandlers({ server: client, tools: await client.listTools() });
  if (!client.offers('resources')) return tools;
  const names = prefixedToolNames(client.config.name, [
    ...tools.map((tool) => tool.name.slice(client.config.name.length + 2)),
    ...RESOURCE_TOOL_NAMES,
  ]);
  const [list, read] = names.slice(-2);
  return [...tools, ...resourceTools({ server: client, names: { list: list ?? '', read: read ?? '' } })];
}

/**
 * Connects several servers at once. Bad configs reject the whole call with INVALID_CONFIG before any server
 * is started (names must be unique); a server that cannot be connected lands in `failures` and the others
 * are returned regardless.
 */
export async function connectMcpServers(
  configs: readonly McpServerConfig[],
  options: McpClientOptions = {},
): Promise<McpServerSet> {
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
  const settled = await Promise.allSettled(configs.map((config) => connectMcpServer(config, options)));
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
