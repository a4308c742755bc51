import type { AgentContext, FileSystemCapabilities } from '@agentclientprotocol/sdk';
import type { ToolHandler, ToolInput, ToolOutput } from '@youyou/agent';
import { READ_FILE_MAX_BYTES, READ_FILE_MAX_LINES } from '../../tools/read-file.js';
import {
  argumentsOf,
  cutLine,
  displayPath,
  errorText,
  failure,
  readOnlyText,
  resolveInWorkspace,
  success,
  type Workspace,
} from '../../tools/workspace.js';

/** The longest line read_file shows through the editor, as the disk tool. */
const MAX_LINE_CHARACTERS = 4000;

/** Where the editor's files are asked for, and what it offers. */
export interface ClientFiles {
  client: () => AgentContext;
  capabilities: FileSystemCapabilities;
}

/**
 * The editor's text numbered from line `first`, held to the disk tool's bounds (lines, bytes, line length):
 * what is left out is said, with the startLine to go on from.
 */
function numbered(first: number, text: string): string {
  const shown: string[] = [];
  let bytes = 0;
  const lines = text.split('\n');
  for (const [index, line] of lines.entries()) {
    const entry = `${String(first + index).padStart(5)}| ${cutLine(line, MAX_LINE_CHARACTERS)}`;
    bytes += Buffer.byteLength(entry) + 1;
    if (shown.length >= READ_FILE_MAX_LINES || bytes > READ_FILE_MAX_BYTES) {
      shown.push(
        `[stopped after line ${first + index - 1}: one call returns at most ${READ_FILE_MAX_LINES} lines or ` +
          `256 KiB; call read_file with startLine ${first + index} to read more]`,
      );
      break;
    }
    shown.push(entry);
  }
  return shown.join('\n');
}

async function readThroughEditor(
  files: ClientFiles,
  input: ToolInput,
  real: string,
  range: { line?: number; limit?: number },
): Promise<string> {
  const answer = await files
    .client()
    .request(
      'fs/read_text_file',
      { sessionId: input.sessionId, path: real, ...range },
      { cancellationSignal: input.signal },
    );
  return answer.content;
}

async function writeThroughEditor(
  files: ClientFiles,
  input: ToolInput,
  real: string,
  content: string,
): Promise<void> {
  await files
    .client()
    .request(
      'fs/write_text_file',
      { sessionId: input.sessionId, path: real, content },
      { cancellationSignal: input.signal },
    );
}

/**
 * read_file through the editor: its buffer, saved or not. The path is checked against the workspace (root,
 * hidden paths) before the editor is asked, exactly as the disk tool checks it.
 */
async function readFileTool(workspace: Workspace, files: ClientFiles, input: ToolInput): Promise<ToolOutput> {
  const args = argumentsOf(input);
  const given = String(args.path ?? '');
  const startLine = typeof args.startLine === 'number' ? args.startLine : 1;
  const endLine = typeof args.endLine === 'number' ? args.endLine : startLine + READ_FILE_MAX_LINES;
  if (endLine < startLine) return failure(`endLine (${endLine}) is before startLine (${startLine})`);
  const resolved = await resolveInWorkspace(workspace, given);
  if (!resolved.ok) return resolved.output;
  try {
    // One line more than is shown, so that a cut says where to go on.
    const limit = Math.min(endLine - startLine + 1, READ_FILE_MAX_LINES + 1);
    const text = await readThroughEditor(files, input, resolved.path, { line: startLine, limit });
    if (text === '') return success(`(${given} is empty, or has no lines from ${startLine})`);
    return success(numbered(startLine, text.replace(/\n$/, '')));
  } catch (error) {
    return failure(`cannot read '${given}' through the editor: ${errorText(error)}`);
  }
}

async function writeFileTool(
  workspace: Workspace,
  files: ClientFiles,
  input: ToolInput,
): Promise<ToolOutput> {
  const args = argumentsOf(input);
  const given = String(args.path ?? '');
  if (typeof args.content !== 'string') return failure('content must be a string holding the whole file');
  if (workspace.readOnly) return failure(readOnlyText('write_file'));
  const resolved = await resolveInWorkspace(workspace, given);
  if (!resolved.ok) return resolved.output;
  try {
    await writeThroughEditor(files, input, resolved.path, args.content);
    const bytes = Buffer.byteLength(args.content);
    return success(`Wrote ${displayPath(workspace, resolved.path)} in the editor (${bytes} bytes)`);
  } catch (error) {
    return failure(`cannot write '${given}' through the editor: ${errorText(error)}`);
  }
}

function occurrences(text: string, part: string): number {
  let count = 0;
  for (let at = text.indexOf(part); at !== -1; at = text.indexOf(part, at + part.length)) count += 1;
  return count;
}

async function editFileTool(workspace: Workspace, files: ClientFiles, input: ToolInput): Promise<ToolOutput> {
  const args = argumentsOf(input);
  const given = String(args.path ?? '');
  const { oldString, newString } = args;
  if (typeof oldString !== 'string' || typeof newString !== 'string') {
    return failure('oldString and newString must be strings');
  }
  if (oldString === '') return failure('oldString is empty; give the exact text to replace');
  if (workspace.readOnly) return failure(readOnlyText('edit_file'));
  const resolved = await resolveInWorkspace(workspace, given);
  if (!resolved.ok) return resolved.output;
  try {
    const text = await readThroughEditor(files, input, resolved.path, {});
    const found = occurrences(text, oldString);
    if (found === 0) return failure(`oldString was not found in ${given}; read the file again and copy it`);
    if (found > 1 && args.replaceAll !== true) {
      return failure(
        `oldString appears ${found} times in ${given}; add surrounding lines, or set replaceAll`,
      );
    }
    await writeThroughEditor(files, input, resolved.path, text.split(oldString).join(newString));
    return success(`Edited ${displayPath(workspace, resolved.path)} in the editor (${found} replaced)`);
  } catch (error) {
    return failure(`cannot edit '${given}' through the editor: ${errorText(error)}`);
  }
}

/**
 * The workspace tools with read_file, write_file and edit_file going through the editor's file system, as far
 * as it offers one (reading for read_file, writing for write_file, both for edit_file). The others stay.
 */
export function withClientFiles(
  tools: ToolHandler[],
  workspace: Workspace,
  files: ClientFiles,
): ToolHandler[] {
  const { readTextFile, writeTextFile } = files.capabilities;
  return tools.map((tool): ToolHandler => {
    if (tool.name === 'read_file' && readTextFile === true) {
      return { ...tool, execute: (input) => readFileTool(workspace, files, input) };
    }
    if (tool.name === 'write_file' && writeTextFile === true) {
      return { ...tool, execute: (input) => writeFileTool(workspace, files, input) };
    }
    if (tool.name === 'edit_file' && readTextFile === true && writeTextFile === true) {
      return { ...tool, execute: (input) => editFileTool(workspace, files, input) };
    }
    return tool;
  });
}
