import type { ToolHandler } from '@youyou/agent';
import type {
  ElicitationHandler,
  McpListKind,
  McpServerConfig,
  McpServerConnection,
  McpServerSet,
  OAuthClientProvider,
} from '@youyou/mcp';
import type { McpServerSetting } from '../config/schema.js';

/** How long MCP servers may take to connect before the user is told that youyou is waiting for them. */
const CONNECTING_NOTICE_AFTER_MS = 300;

/**
 * The MCP configs of the settings. A stdio server gets the tools' environment (the MCP SDK adds HOME,
 * LOGNAME, PATH, SHELL, TERM and USER itself) and then its own `env` of the config file: values the user
 * wrote for that one server, the way to hand it a token.
 */
export function mcpConfigs(options: {
  servers: Record<string, McpServerSetting>;
  toolEnv: Readonly<Record<string, string>>;
  warn: (text: string) => void;
  validateServerConfig: (config: unknown) => void;
  /**
   * The auth provider of an HTTP server the config gives no Authorization header (its saved OAuth login,
   * used when the server answers 401).
   */
  authProviderFor?: (server: { name: string; url: string }) => OAuthClientProvider;
}): McpServerConfig[] {
  const sdkDefaults = new Set(['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER']);
  const inherited = Object.fromEntries(
    Object.entries(options.toolEnv).filter(([name]) => !sdkDefaults.has(name)),
  );
  const configs: McpServerConfig[] = [];
  for (const [name, server] of Object.entries(options.servers)) {
    const transport =
      'url' in server
        ? {
            type: 'http' as const,
            url: server.url,
            ...(server.headers ? { headers: server.headers } : {}),
          }
        : {
            type: 'stdio' as const,
            command: server.command,
            ...(server.args ? { args: server.args } : {}),
            env: { ...inherited, ...server.env },
            ...(server.cwd ? { cwd: server.cwd } : {}),
          };
    const config = {
      name,
      transport,
      ...(server.timeoutMs === undefined ? {} : { timeoutMs: server.timeoutMs }),
    };
    try {
      options.validateServerConfig(config);
      if (transport.type === 'http') {
        // After validation: the provider's file is named after the server, so the name must be a safe one.
        Object.assign(
          transport,
          authOf({
            name,
            url: transport.url,
            headers: transport.headers,
            authProviderFor: options.authProviderFor,
          }),
        );
      }
      configs.push(config);
    } catch (error) {
      options.warn(`MCP server "${name}" skipped: ${messageOf(error)}`);
    }
  }
  return configs;
}

function authOf(options: {
  name: string;
  url: string;
  headers: Record<string, string> | undefined;
  authProviderFor: ((server: { name: string; url: string }) => OAuthClientProvider) | undefined;
}): { authProvider?: OAuthClientProvider } {
  const hasAuthorization = Object.keys(options.headers ?? {}).some(
    (header) => header.toLowerCase() === 'authorization',
  );
  if (hasAuthorization || options.authProviderFor === undefined) return {};
  return { authProvider: options.authProviderFor({ name: options.name, url: options.url }) };
}

/** The message of an error without its `[CODE] ` prefix. */
export function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/^\[[A-Z_]+\] /, '');
}

/**
 * Connects the MCP servers; when they take longer than a moment (a server that hangs waits its
 * `timeoutMs`), `notice` says so first, so the terminal never sits silent.
 */
export async function connectServers(options: {
  configs: McpServerConfig[];
  notice: (text: string) => void;
  warn: (text: string) => void;
  /** Answers the servers' questions (elicitation). */
  onElicitation: ElicitationHandler;
  /** Hears a server's `list_changed` notifications. */
  onListChanged?: (event: { server: string; list: McpListKind }) => void;
}): Promise<McpServerSet> {
  const { connectMcpServers } = await import('@youyou/mcp');
  const names = options.configs.map((config) => config.name).join(', ');
  const timer = setTimeout(
    () => options.notice(`connecting to MCP server${options.configs.length === 1 ? '' : 's'} ${names}…`),
    CONNECTING_NOTICE_AFTER_MS,
  );
  try {
    const set = await connectMcpServers(options.configs, {
      onElicitation: options.onElicitation,
      ...(options.onListChanged === undefined ? {} : { onListChanged: options.onListChanged }),
    });
    for (const failure of set.failures) options.warn(messageOf(failure.error));
    return set;
  } finally {
    clearTimeout(timer);
  }
}

/** Re-lists a server's tools after its `tools/list_changed`, and hands every server's tools to `apply`. */
export interface McpToolRefresher {
  /** A server said its tools changed: they are listed again (after any listing under way). */
  changed(server: string): void;
  /** Resolves once every listing asked for so far is applied (a chat waits for it before a turn). */
  settled(): Promise<void>;
}

/**
 * Keeps each connected server's current tools, in config order. A failed listing is a warning and keeps the
 * server's last tools.
 */
export function mcpToolRefresher(options: {
  connections: () => readonly McpServerConnection[];
  apply: (mcpTools: ToolHandler[]) => void;
  warn: (text: string) => void;
}): McpToolRefresher {
  const current = new Map<string, ToolHandler[]>();
  let queue: Promise<void> = Promise.resolve();
  const toolsOf = (connection: McpServerConnection): ToolHandler[] =>
    current.get(connection.name) ?? connection.tools;
  const refresh = async (server: string): Promise<void> => {
    const connection = options.connections().find((candidate) => candidate.name === server);
    if (connection === undefined) return;
    try {
      current.set(server, await connection.listTools());
      options.apply(options.connections().flatMap(toolsOf));
    } catch (error) {
      options.warn(`MCP server "${server}": its changed tools were not taken: ${messageOf(error)}`);
    }
  };
  return {
    changed(server) {
      queue = queue.then(() => refresh(server));
    },
    settled: () => queue,
  };
}
