import path from 'node:path';
import type { ToolCallContent, ToolCallLocation, ToolKind } from '@agentclientprotocol/sdk';
import type { ToolOutput } from '@youyou/agent';
import { neutralize } from '../../text/terminal-text.js';
import { argumentsOf, isInside } from '../../tools/workspace.js';

/** The longest title an editor is sent: titles quote the model's arguments, which may be long. */
const MAX_TITLE_CHARACTERS = 160;

/** How an editor shows one of our tools: its ACP kind (the icon and grouping an editor gives it). */
export function toolKindOf(toolName: string): ToolKind {
  switch (toolName) {
    case 'read_file':
    case 'list_dir':
      return 'read';
    case 'glob':
    case 'grep':
      return 'search';
    case 'write_file':
    case 'edit_file':
      return 'edit';
    case 'shell':
      return 'execute';
    default:
      return /fetch|http|browse|url/i.test(toolName) ? 'fetch' : 'other';
  }
}

function stringArgument(args: unknown, name: string): string | undefined {
  const value = argumentsOf({ arguments: args })[name];
  return typeof value === 'string' ? value : undefined;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= MAX_TITLE_CHARACTERS ? flat : `${flat.slice(0, MAX_TITLE_CHARACTERS - 1)}…`;
}

/** A short human title for a call: the tool and what it acts on (`shell: npm test`, `edit_file src/a.ts`). */
export function toolTitleOf(toolName: string, args: unknown): string {
  if (toolName === 'shell') {
    const command = stringArgument(args, 'command');
    return command === undefined ? 'shell' : oneLine(`shell: ${command}`);
  }
  const target = stringArgument(args, 'path') ?? stringArgument(args, 'pattern');
  return target === undefined ? toolName : oneLine(`${toolName} ${target}`);
}

/**
 * The absolute path a file tool's call names, when it lies inside the workspace (the editor opens it); the
 * tools themselves refuse paths outside, so nothing outside is ever pointed at.
 */
export function absolutePathOf(workspaceRoot: string, args: unknown): string | undefined {
  const given = stringArgument(args, 'path');
  if (given === undefined || given === '' || given.includes('\0')) return undefined;
  const absolute = path.resolve(workspaceRoot, given);
  return isInside(workspaceRoot, absolute) ? absolute : undefined;
}

/** The files a call acts on, for the editor to follow. */
export function toolLocationsOf(workspaceRoot: string, args: unknown): ToolCallLocation[] {
  const absolute = absolutePathOf(workspaceRoot, args);
  if (absolute === undefined) return [];
  const line = argumentsOf({ arguments: args }).startLine;
  return [{ path: absolute, ...(typeof line === 'number' ? { line } : {}) }];
}

/**
 * The diff of a write_file or edit_file call: the whole file for write_file (`oldText` is what the file held,
 * null for a new file), the replaced text for edit_file. Undefined for other calls.
 */
export function toolDiffOf(options: {
  workspaceRoot: string;
  toolName: string;
  args: unknown;
  oldFileText: string | undefined;
}): ToolCallContent | undefined {
  const { toolName, args } = options;
  const absolute = absolutePathOf(options.workspaceRoot, args);
  if (absolute === undefined) return undefined;
  if (toolName === 'write_file') {
    const content = stringArgument(args, 'content');
    if (content === undefined) return undefined;
    return { type: 'diff', path: absolute, oldText: options.oldFileText ?? null, newText: content };
  }
  if (toolName === 'edit_file') {
    const oldString = stringArgument(args, 'oldString');
    const newString = stringArgument(args, 'newString');
    if (oldString === undefined || newString === undefined) return undefined;
    return { type: 'diff', path: absolute, oldText: oldString, newText: newString };
  }
  return undefined;
}

/**
 * Tool text as an editor renders it. The editor treats a call's text content as markdown and is not a
 * terminal, while tool text (a command's output, a file, an MCP server's answer) is hostile: it is fenced as
 * code (a fence longer than any run of backticks in it, so nothing in it closes the fence), so that a link,
 * an image that would fetch a URL, or HTML in it stays text; control characters (ESC sequences, CR, bidi
 * overrides) are shown escaped, as the terminal shows them.
 */
export function codeBlockMarkdown(text: string): string {
  const longestTicks = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longestTicks + 1));
  const shown = neutralize(text.replace(/\r\n/g, '\n'));
  return `${fence}\n${shown}${shown.endsWith('\n') ? '' : '\n'}${fence}`;
}

/** A tool's result as the model sees it, as the content of its call (its exact text is the raw output). */
export function toolOutputContent(output: ToolOutput): ToolCallContent[] {
  if (output.content === '') return [];
  return [{ type: 'content', content: { type: 'text', text: codeBlockMarkdown(output.content) } }];
}
