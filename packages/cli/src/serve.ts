import type { AgentError } from '@youyou/agent';
import type { CliSettings } from './config.js';
import { ConfigError } from './config-values.js';
import type { CliIo } from './print-mode.js';
import { tokensFromEnv } from './server-config.js';
import { setUpRuntime } from './setup.js';
import { plainMessage } from './style.js';
import { neutralizeLine } from './terminal-text.js';

/** How many sessions `youyou serve` holds at once without "server.maxActiveSessions". */
const DEFAULT_MAX_ACTIVE_SESSIONS = 16;

/**
 * `youyou serve`: the CLI's providers, tools, config and SQLite storage behind the sessions API of
 * @youyou/server, until SIGINT or SIGTERM. Refuses to start without a token. Resolves with the exit code.
 */
export async function runServe(options: {
  settings: CliSettings;
  port: number;
  host: string;
  io: CliIo;
}): Promise<number> {
  const { settings, io } = options;
  const tokens = { ...(settings.server?.tokens ?? {}), ...tokensFromEnv(io.env.YOUYOU_SERVER_TOKENS) };
  if (Object.keys(tokens).length === 0) {
    throw new ConfigError(
      `youyou serve needs at least one bearer token: "server": { "tokens": { "<token>": "<tenant>" } } in ${settings.configPath}, or YOUYOU_SERVER_TOKENS=token=tenant`,
    );
  }
  const runtime = await setUpRuntime({
    settings,
    env: io.env,
    // Mutating calls wait for a client's approve/deny (durable: they survive a restart), unless --yes.
    approval: { type: 'allow_all' },
    mutatingNeedApproval: !settings.yes,
    maxActiveSessions: settings.server?.maxActiveSessions ?? DEFAULT_MAX_ACTIVE_SESSIONS,
    warn: io.warn,
    notice: (text) => io.stderr.write(`youyou: ${text}\n`),
    onBackgroundError: (error: AgentError) => io.warn(plainMessage(error.message)),
  });
  try {
    const { createServer, listen } = await import('@youyou/server');
    const server = createServer({ agent: runtime.agent, storage: runtime.sessions, auth: { tokens } });
    const listening = await listen(server, { port: options.port, host: options.host });
    io.stdout.write(`youyou: serving on ${listening.url} (${Object.keys(tokens).length} token(s))\n`);
    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    });
    io.stderr.write(`youyou: ${signal}, stopping\n`);
    await listening.close();
    return 0;
  } catch (error) {
    if ((error as { code?: unknown }).code === 'EADDRINUSE') {
      throw new ConfigError(
        `${neutralizeLine(options.host)}:${options.port} is in use; choose another --port`,
      );
    }
    throw error;
  } finally {
    await runtime.close();
  }
}
