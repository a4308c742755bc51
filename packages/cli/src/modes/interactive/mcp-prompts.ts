/**
 * MCP prompts as commands of the chat: `/server:prompt` with arguments as `key=value` words or positional
 * words, in the prompt's argument order. The prompt's messages become the user's message of a turn.
 */
import type { ContentBlock } from '@youyou/agent';
import type { McpPrompt, McpServerConnection } from '@youyou/mcp';
import { plainMessage, type Styles } from '../../chat/format.js';
import { neutralizeLine } from '../../text/terminal-text.js';

/**
 * `/server:prompt …`. The colon keeps every such command apart from the built-in ones and the skills (whose
 * names have none), so a server cannot shadow `/help` or `/exit` whatever it names its prompts.
 */
export const MCP_PROMPT_COMMAND = /^\/([a-zA-Z0-9_-]+):(\S+)(?:\s+(.*))?$/s;

/** Prompt names that can be typed as a command; a server's other names (spaces, escapes) are not offered. */
const TYPEABLE_PROMPT_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** The words of an argument line: white space separates them; "double" or 'single' quotes keep spaces in one (`focus="a b"`). */
export function argumentWords(line: string): string[] {
  const words = line.match(/(?:[^\s"']+|"[^"]*"|'[^']*')+/g) ?? [];
  return words.map((word) => word.replace(/"([^"]*)"|'([^']*)'/g, '$1$2'));
}

/**
 * The prompt's arguments from the words typed: `name=value` for an argument of that name (the value may be
 * quoted: `focus="error handling"`), every other word fills the next argument not given yet, in order.
 */
export function bindArguments(
  prompt: McpPrompt,
  words: readonly string[],
): { values: Record<string, string> } | { problem: string } {
  const names = prompt.arguments.map((argument) => argument.name);
  const values: Record<string, string> = {};
  const positional: string[] = [];
  for (const word of words) {
    const equals = word.indexOf('=');
    const key = equals > 0 ? word.slice(0, equals) : '';
    if (names.includes(key)) values[key] = word.slice(equals + 1);
    else positional.push(word);
  }
  for (const name of names) {
    if (values[name] !== undefined) continue;
    const next = positional.shift();
    if (next === undefined) break;
    values[name] = next;
  }
  if (positional.length > 0) return { problem: `too many arguments (${positional.length} left over)` };
  const missing = prompt.arguments.filter(
    (argument) => argument.required && values[argument.name] === undefined,
  );
  if (missing.length > 0) {
    return { problem: `missing ${missing.map((argument) => argument.name).join(', ')}` };
  }
  return { values };
}

/** How the command of a prompt is typed: `/server:name file=… [focus=…]`. */
export function promptUsage(server: string, prompt: McpPrompt): string {
  const args = prompt.arguments.map((argument) =>
    argument.required ? `${argument.name}=…` : `[${argument.name}=…]`,
  );
  return neutralizeLine([`/${server}:${prompt.name}`, ...args].join(' '));
}

/** A server's prompts that can be typed as commands. */
async function typeablePrompts(connection: McpServerConnection): Promise<McpPrompt[]> {
  return (await connection.listPrompts()).filter((prompt) => TYPEABLE_PROMPT_NAME.test(prompt.name));
}

/** `/prompts`: every server's prompts as the commands that send them, listed anew from the servers. */
export async function listPromptCommands(options: {
  servers: readonly McpServerConnection[];
  styles: Styles;
}): Promise<string> {
  const { styles } = options;
  const lines: string[] = [];
  for (const connection of options.servers) {
    let prompts: McpPrompt[];
    try {
      prompts = await typeablePrompts(connection);
    } catch (error) {
      lines.push(styles.red(plainMessage(error instanceof Error ? error.message : String(error))));
      continue;
    }
    for (const prompt of prompts) {
      const about = prompt.title ?? prompt.description;
      lines.push(
        `${promptUsage(connection.name, prompt)}${about === undefined ? '' : styles.dim(`  ${neutralizeLine(about)}`)}`,
      );
    }
  }
  if (lines.length === 0) return styles.dim('No MCP server offers prompts.\n');
  return `${lines.join('\n')}\n`;
}

/**
 * The user message of `/server:prompt words…`: the prompt filled in by its server. A problem (no such server
 * or prompt, a missing argument, the server's error) is the `problem`, one line, to show instead.
 */
export async function promptMessage(options: {
  servers: readonly McpServerConnection[];
  server: string;
  prompt: string;
  argumentLine: string;
}): Promise<{ content: ContentBlock[] } | { problem: string }> {
  const connection = options.servers.find((candidate) => candidate.name === options.server);
  if (connection === undefined) {
    return {
      problem: `no MCP server is called "${neutralizeLine(options.server)}" (/prompts lists the prompts)`,
    };
  }
  try {
    const prompt = (await typeablePrompts(connection)).find((candidate) => candidate.name === options.prompt);
    if (prompt === undefined) {
      return {
        problem: `MCP server "${connection.name}" has no prompt "${neutralizeLine(options.prompt)}" (/prompts lists them)`,
      };
    }
    const bound = bindArguments(prompt, argumentWords(options.argumentLine));
    if ('problem' in bound) {
      return { problem: `${bound.problem}; usage: ${promptUsage(connection.name, prompt)}` };
    }
    const filled = await connection.getPrompt({ name: prompt.name, arguments: bound.values });
    if (filled.content.length === 0) return { problem: `the prompt "${prompt.name}" came back empty` };
    return { content: filled.content };
  } catch (error) {
    return { problem: plainMessage(error instanceof Error ? error.message : String(error)) };
  }
}
