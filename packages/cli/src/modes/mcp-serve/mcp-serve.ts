import type { AgentError } from '@youyou/agent';
import { plainMessage } from '../../chat/style.js';
import type { CliSettings } from '../../config/config.js';
import { tokensFromEnv } from '../../config/server.js';
import { ConfigError } from '../../config/values.js';
import type { CliIo } from '../../runtime/cli-io.js';
import { openHomeStorage, setUpRuntime } from '../../runtime/setup.js';
import { neutralizeLine } from '../../text/terminal-text.js';
import { createMcpServer } from './mcp-server.js';
import { TurnRunner } from './turn-tool.js';

/** How many sessions the agent holds at once without "server.maxActiveSessions": calls on several sessions run side by side. */
const DEFAULT_MAX_ACTIVE_SESSIONS = 16;

/**
 * `youyou mcp serve`: youyou as an MCP server offering `run_turn`, over stdio (stdout carries protocol frames
 * only; everything else goes to stderr), or with `port` over Streamable HTTP behind `youyou serve`'s tokens.
 * Runs until the client closes stdin (stdio), or SIGINT/SIGTERM. Resolves with the exit code.
 */
export async function runMcpServe(options: {
  settings: CliSettings;
  port: number | undefined;
  host: string;
  io: CliIo;
}): Promise<number> {
  const { settings, io } = options;
  // Checked before the runtime starts: HTTP without a token fails at once, before any MCP server connects.
  const tokens = options.port === undefined ? undefined : tokensOf(settings, io);
  const onBackgroundError = (error: AgentError): void => io.warn(plainMessage(error.message));
  const runtime = await setUpRuntime({
    settings,
    env: io.env,
    // Without --yes mutating calls go to the approver; each turn's own gate asks its client (consent.ts).
    approval: settings.yes ? { type: 'allow_all' } : { type: 'deny_all' },
    maxActiveSessions: settings.server?.maxActiveSessions ?? DEFAULT_MAX_ACTIVE_SESSIONS,
    warn: io.warn,
    notice: (text) => io.stderr.write(`youyou: ${text}\n`),
    onBackgroundError,
    openStorage: () => openHomeStorage({ settings, onBackgroundError }),
  });
  const runner = new TurnRunner({ runtime, settings });
  try {
    if (options.port === undefined || tokens === undefined) {
      await serveStdio({ runner, workspace: settings.cwd, io });
    } else {
      const { serveHttp } = await import('./http.js');
      await serveHttp({
        runner,
        workspace: settings.cwd,
        io,
        tokens,
        port: options.port,
        host: options.host,
      });
    }
    return 0;
  } finally {
    await runner.close();
    await runtime.close();
  }
}

/** The tokens of `youyou serve` (config.json "server.tokens" and YOUYOU_SERVER_TOKENS); at least one. */
function tokensOf(settings: CliSettings, io: CliIo): Record<string, string> {
  const tokens = { ...(settings.server?.tokens ?? {}), ...tokensFromEnv(io.env.YOUYOU_SERVER_TOKENS) };
  if (Object.keys(tokens).length === 0) {
    throw new ConfigError(
      `youyou mcp serve --port needs at least one bearer token: "server": { "tokens": { "<token>": "<tenant>" } } in ${settings.configPath}, or YOUYOU_SERVER_TOKENS=token=tenant`,
    );
  }
  return tokens;
}

/** Serves one client over stdin/stdout until it closes stdin, or SIGINT/SIGTERM. */
async function serveStdio(options: { runner: TurnRunner; workspace: string; io: CliIo }): Promise<void> {
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const { io } = options;
  const server = createMcpServer({ runner: options.runner, workspace: options.workspace });
  const transport = new StdioServerTransport(io.stdin, io.stdout);
  server.onerror = (error) => io.warn(`MCP: ${error.message}`);
  let stop: () => void = () => undefined;
  const ended = new Promise<void>((resolve) => {
    stop = resolve;
  });
  io.stdin.once('end', stop);
  io.stdin.once('close', stop);
  server.onclose = stop;
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    await server.connect(transport);
    io.stderr.write(`youyou: MCP server on stdio, workspace ${neutralizeLine(options.workspace)}\n`);
    await ended;
    // The turns still running are cancelled before the transport goes.
    await options.runner.close();
    await server.close();
  } finally {
    // A second Ctrl-C while youyou shuts down ends the process at once, as Node does by default.
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
