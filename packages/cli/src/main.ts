import type { AgentError } from '@youyou/agent';
import { plainMessage, wantsColor } from './chat/style.js';
import { parseCommandLine, UsageError, usageText } from './config/args.js';
import { ConfigError, resolveSettings } from './config/config.js';
import { UnreachableError } from './config/model-server.js';
import { slashCommandsUsage } from './modes/interactive/help.js';
import type { CliIo } from './runtime/cli-io.js';
import { packageVersion } from './runtime/version.js';
import { runSessionsCommand } from './sessions/session-table.js';
import { CommandError } from './sessions/workspace-sessions.js';
// Types only: the chat modes (and through them the agent, the SDKs, MCP and SQLite) are imported when a
// run needs them, so that `--help` and `--version` answer without loading them.
import { neutralize } from './text/terminal-text.js';

/** What `run` needs from the process. */
export interface RunOptions {
  argv: readonly string[];
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  env: NodeJS.ProcessEnv;
}

async function readAll(stream: NodeJS.ReadStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** The exit code and the one line to print for an error that ends the run. */
function describeFailure(
  error: unknown,
  isAgentError: (value: unknown) => value is AgentError,
): { code: number; text: string } {
  if (error instanceof UsageError)
    return { code: 2, text: `${error.message}\nRun 'youyou --help' for usage.` };
  if (error instanceof ConfigError || error instanceof UnreachableError)
    return { code: 2, text: error.message };
  if (error instanceof CommandError) return { code: 1, text: error.message };
  if (isAgentError(error)) {
    const text = plainMessage(error.message);
    return { code: error.code === 'INVALID_CONFIG' ? 2 : 1, text };
  }
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  return { code: 1, text: `unexpected failure: ${text}` };
}

/** Runs the CLI with these arguments and streams; resolves with the exit code. Never rejects. */
export async function run(options: RunOptions): Promise<number> {
  const { stdout, stderr, env } = options;
  const stderrColor = wantsColor(stderr, env);
  const warn = (text: string): void => {
    // Warnings quote file names, MCP servers and their errors: hostile text, shown escaped.
    stderr.write(
      `${stderrColor ? '\x1b[33myouyou: warning:\x1b[39m' : 'youyou: warning:'} ${neutralize(text)}\n`,
    );
  };
  try {
    const { command, flags } = parseCommandLine(options.argv);
    if (command.type === 'help') {
      stdout.write(`${usageText()}${slashCommandsUsage()}`);
      return 0;
    }
    if (command.type === 'version') {
      stdout.write(`${packageVersion()}\n`);
      return 0;
    }
    const settings = resolveSettings({ flags, env, warn });
    const io: CliIo = { stdin: options.stdin, stdout, stderr, env, warn, stderrColor };
    if (command.type === 'sessions') {
      return await runSessionsCommand({
        settings,
        search: command.search,
        limit: command.limit,
        json: command.json,
        write: (text) => stdout.write(text),
        columns: stdout.columns ?? 100,
        color: wantsColor(stdout, env),
      });
    }
    if (command.type === 'mcp-login' || command.type === 'mcp-logout') {
      const { runMcpLogin, runMcpLogout } = await import('./modes/mcp-auth/login.js');
      const run = command.type === 'mcp-login' ? runMcpLogin : runMcpLogout;
      return await run({ settings, name: command.server, io });
    }
    if (command.type === 'serve') {
      const { runServe } = await import('./modes/serve/serve.js');
      return await runServe({
        settings,
        port: command.port,
        host: command.host,
        databaseUrl: command.databaseUrl,
        webChat: command.webChat,
        io,
      });
    }
    if (command.type === 'mcp-serve') {
      const { runMcpServe } = await import('./modes/mcp-serve/mcp-serve.js');
      return await runMcpServe({ settings, port: command.port, host: command.host, io });
    }
    if (command.type === 'acp') {
      const { runAcp } = await import('./modes/acp/acp.js');
      return await runAcp({ flags, io });
    }
    let prompt = command.prompt;
    if (prompt === undefined && options.stdin.isTTY !== true) {
      // `echo "question" | youyou`: without a terminal there is nobody to chat with, so the input is one prompt.
      prompt = (await readAll(options.stdin)).trim();
      if (prompt === '')
        throw new UsageError('no prompt: stdin is not a terminal and was empty; use -p "prompt"');
    }
    if (prompt !== undefined) {
      const { runPrintMode } = await import('./modes/print.js');
      return await runPrintMode({
        settings,
        prompt,
        json: command.json,
        resume: command.resume,
        latest: command.latest,
        fork: command.fork === true,
        io,
      });
    }
    const { runInteractive } = await import('./modes/interactive/interactive.js');
    return await runInteractive({
      settings,
      resume: command.resume,
      latest: command.latest,
      fork: command.fork === true,
      io,
      color: wantsColor(stdout, env),
      // The chat's offer to log in runs the flow of `youyou mcp login` (a mode imports no other mode).
      logInToMcpServer: async (name, signal) => {
        const { runMcpLogin } = await import('./modes/mcp-auth/login.js');
        await runMcpLogin({ settings, name, io, signal });
      },
    });
  } catch (error) {
    // The runtime is loaded here rather than up front, so that `--help` does not load it.
    const { isAgentError } = await import('@youyou/agent');
    const failure = describeFailure(error, isAgentError);
    stderr.write(`youyou: ${neutralize(failure.text)}\n`);
    return failure.code;
  }
}
