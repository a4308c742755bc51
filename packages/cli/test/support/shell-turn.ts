import { textReply, toolCallReply, toolResult } from '../../../../test-support/cli-wire.js';
import { type CliResult, runCli } from './cli.js';
import type { CliHarness } from './harness.js';

/** How one scripted `shell` call went: the CLI's exit and output, and the tool result the model got back. */
export interface ShellTurn {
  result: CliResult;
  /** The shell tool's result as sent to the model server, or undefined when no second request came. */
  output: string | undefined;
}

/**
 * Runs one `-p … --yes` turn in which the scripted model asks `shell` to run `command`, then answers with
 * what it saw; gives the CLI's result and the tool result that reached the model server.
 */
export async function runShellTurn(
  harness: CliHarness,
  options: {
    command: string;
    /** The call's timeoutMs, when the command should be stopped sooner than the default. */
    timeoutMs?: number;
    args?: readonly string[];
    env?: Record<string, string>;
  },
): Promise<ShellTurn> {
  const { server, sandbox } = harness;
  const before = server.turnRequests().length;
  server.reply(
    toolCallReply({
      id: 'call_sh',
      name: 'shell',
      arguments: {
        command: options.command,
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      },
    }),
    (request) => textReply(`saw: ${toolResult(request, 'call_sh') ?? 'nothing'}`),
  );
  const result = await runCli({
    args: ['-p', 'run it', '--yes', '--base-url', server.baseURL, ...(options.args ?? [])],
    sandbox,
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  const sent = server.turnRequests()[before + 1];
  return { result, output: sent === undefined ? undefined : toolResult(sent, 'call_sh') };
}
