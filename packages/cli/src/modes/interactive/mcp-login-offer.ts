/** The chat's offer, at its start, to log in to each HTTP MCP server that was left out for want of a login. */
import type { Terminal } from '../../chat/terminal.js';
import type { CliIo } from '../../runtime/cli-io.js';
import type { CliRuntime } from '../../runtime/setup.js';
import { neutralizeLine } from '../../text/terminal-text.js';

/** Runs the login of `youyou mcp login NAME` (saving it); rejects when it did not finish. */
export type McpLogIn = (name: string, signal: AbortSignal) => Promise<void>;

/**
 * Asks once per server; on yes runs the login of `youyou mcp login NAME` and connects the server, so its
 * tools serve from the next turn. Input closed at a question ends the offers (the chat then leaves).
 */
export async function offerMcpLogins(options: {
  runtime: CliRuntime;
  terminal: Terminal;
  io: CliIo;
  logIn: McpLogIn;
}): Promise<void> {
  const { runtime, terminal, io } = options;
  if (io.stdin.isTTY !== true) return;
  for (const name of runtime.mcpLoginsNeeded) {
    const shown = neutralizeLine(name);
    const answer = await terminal.readLine(`MCP server ${shown} needs a login. Log in now? [y/N] `, '');
    if (answer.type === 'eof') return;
    if (answer.type !== 'line' || !/^\s*y(es)?\s*$/i.test(answer.text)) continue;
    // Keys are read raw meanwhile: Ctrl-C abandons the login instead of reaching the process group.
    const abandon = new AbortController();
    terminal.startKeys((key) => {
      if (key.ctrl === true && key.name === 'c') abandon.abort();
    });
    try {
      await options.logIn(name, abandon.signal);
    } catch (error) {
      io.warn(neutralizeLine(error instanceof Error ? error.message : String(error)));
      continue;
    } finally {
      terminal.stopKeys();
    }
    if (await runtime.connectMcpServer(name)) io.stdout.write(`MCP server "${shown}" is connected.\n`);
  }
}
