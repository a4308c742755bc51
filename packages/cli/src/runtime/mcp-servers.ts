import type { ElicitationHandler, McpServerConfig, McpServerSet } from '@youyou/mcp';
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
}): McpServerConfig[] {
  const sdkDefaults = new Set(['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER']);
  const inherited = Object.fromEntries(
    Object.entries(options.toolEnv).filter(([name]) => !sdkDefaults.has(name)),
  );
  const configs: McpServerConfig[] = [];
  for (const [name, server] of Object.entries(options.servers)) {
    const transport =
      'url' in server
        ? { type: 'http' as const, url: server.url, ...(server.headers ? { headers: server.headers } : {}) }
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
      configs.push(config);
    } catch (error) {
      options.warn(`MCP server "${name}" skipped: ${messageOf(error)}`);
    }
  }
  return configs;
}

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
}): Promise<McpServerSet> {
  const { connectMcpServers } = await import('@youyou/mcp');
  const names = options.configs.map((config) => config.name).join(', ');
  const timer = setTimeout(
    () => options.notice(`connecting to MCP server${options.configs.length === 1 ? '' : 's'} ${names}…`),
    CONNECTING_NOTICE_AFTER_MS,
  );
  try {
    const set = await connectMcpServers(options.configs, { onElicitation: options.onElicitation });
    for (const failure of set.failures) options.warn(messageOf(failure.error));
    return set;
  } finally {
    clearTimeout(timer);
  }
}
