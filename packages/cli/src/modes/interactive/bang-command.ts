/**
 * `!command` at the prompt: the user's own command runs through the shell tool (the same sandbox, limits,
 * timeout and output cap as the model's shell calls; no approval question, since the user typed it), its
 * output is shown neutralised, and the command with its output is attached to the NEXT message sent, so the
 * model reads it with that message.
 */
import type { ToolHandler, ToolOutput } from '@youyou/agent';
import type { Styles } from '../../chat/format.js';
import { countOf } from '../../text/plural.js';
import { neutralize } from '../../text/terminal-text.js';

/** The most lines of a command's output shown on screen (the model gets all of it, within the tool's cap). */
const SHOWN_LINES = 40;

/** Runs `command` with the shell tool; the output as the tool returns it (an error text when it failed to run). */
export async function runBangCommand(options: {
  tools: readonly ToolHandler[];
  command: string;
  sessionId: string | undefined;
  signal: AbortSignal;
}): Promise<ToolOutput> {
  const shell = options.tools.find((tool) => tool.name === 'shell');
  if (shell === undefined) return { content: 'there is no shell tool in this chat', isError: true };
  try {
    return await shell.execute({
      callId: 'bang',
      arguments: { command: options.command },
      sessionId: options.sessionId ?? 'prompt',
      turnId: 'prompt',
      signal: options.signal,
    });
  } catch (error) {
    return { content: error instanceof Error ? error.message : String(error), isError: true };
  }
}

/** The command's output for the screen: neutralised, its last lines when long. */
export function bangScreenText(output: ToolOutput, styles: Styles): string {
  const lines = output.content.replace(/\n$/, '').split('\n');
  const hidden = Math.max(0, lines.length - SHOWN_LINES);
  const shown = neutralize(lines.slice(hidden).join('\n'));
  const note =
    hidden > 0
      ? `${styles.dim(`(${countOf(hidden, 'earlier line')} not shown; the model gets them)`)}\n`
      : '';
  const body = output.isError ? styles.red(shown) : shown;
  return `${note}${body}\n${styles.dim('(attached to your next message)')}\n`;
}

/** The block a command and its output take in the next message. */
export function bangContextBlock(command: string, output: ToolOutput): string {
  return `<user_shell_command command=${JSON.stringify(command)}>\n${output.content}\n</user_shell_command>`;
}
