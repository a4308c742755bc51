import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ToolHandler, ToolInput, ToolOutput } from '@youyou/agent';
import {
  argumentsOf,
  displayPath,
  errorCode,
  errorText,
  failure,
  notRegularFile,
  resolveInWorkspace,
  success,
  type Workspace,
} from './workspace.js';

/** The write_file tool: creates or replaces a whole file, creating its folders. */
export function createWriteFileTool(workspace: Workspace): ToolHandler {
  return {
    name: 'write_file',
    description:
      'Writes a whole file of the workspace, creating it and any missing folders, or replacing what it held. ' +
      'To change part of an existing file, use edit_file instead.',
    parametersSchema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'The file, relative to the workspace root.' },
        content: { type: 'string', description: 'The complete new content of the file.' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    isMutating: true,
    execute: (input) => writeFileTool(workspace, input),
  };
}

async function writeFileTool(workspace: Workspace, input: ToolInput): Promise<ToolOutput> {
  const args = argumentsOf(input);
  const given = String(args.path ?? '');
  if (typeof args.content !== 'string') return failure('content must be a string holding the whole file');
  const content = args.content;
  const resolved = await resolveInWorkspace(workspace, given);
  if (!resolved.ok) return resolved.output;
  try {
    const existed = await stat(resolved.path).then(
      (stats) => {
        if (stats.isDirectory()) throw new Error(`'${given}' is a directory; give a file path`);
        if (!stats.isFile()) throw new Error(notRegularFile(given));
        return true;
      },
      (error: unknown) => {
        if (errorCode(error) === 'ENOENT') return false;
        throw error;
      },
    );
    await mkdir(path.dirname(resolved.path), { recursive: true });
    await writeFile(resolved.path, content, { encoding: 'utf8', signal: input.signal });
    const bytes = Buffer.byteLength(content);
    return success(
      `${existed ? 'Replaced' : 'Created'} ${displayPath(workspace, resolved.path)} (${bytes} bytes written)`,
    );
  } catch (error) {
    return failure(`cannot write '${given}': ${errorText(error)}`);
  }
}
