import { lstat, readdir, readlink, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ToolHandler, ToolInput, ToolOutput } from '@youyou/agent';
import {
  argumentsOf,
  displayPath,
  errorText,
  failure,
  isInside,
  resolveInWorkspace,
  success,
  type Workspace,
} from './workspace.js';

/** The most entries one list_dir call shows. */
export const LIST_DIR_MAX_ENTRIES = 1000;

/** The list_dir tool: the entries of one folder, sorted, folders marked with `/`, files with their size. */
export function createListDirTool(workspace: Workspace): ToolHandler {
  return {
    name: 'list_dir',
    description:
      'Lists one folder of the workspace (not recursive): entries sorted by name, folders end with `/`, files ' +
      'show their size in bytes, symlinks show their target. Use glob to find files in a whole tree.',
    parametersSchema: {
      type: 'object',
      properties: {
        path: {
          type: 'string',
          description: 'The folder, relative to the workspace root. Default: the root.',
        },
      },
      additionalProperties: false,
    },
    isMutating: false,
    execute: (input) => listDir(workspace, input),
  };
}

async function listDir(workspace: Workspace, input: ToolInput): Promise<ToolOutput> {
  const requested = argumentsOf(input).path;
  const given = typeof requested === 'string' && requested !== '' ? requested : '.';
  const resolved = await resolveInWorkspace(workspace, given);
  if (!resolved.ok) return resolved.output;
  let names: string[];
  try {
    const stats = await stat(resolved.path);
    if (!stats.isDirectory()) return failure(`'${given}' is not a directory; use read_file to read a file`);
    names = await readdir(resolved.path);
  } catch (error) {
    return failure(`cannot list '${given}': ${errorText(error)}`);
  }
  names.sort((left, right) => (left < right ? -1 : left > right ? 1 : 0));
  const header = `${displayPath(workspace, resolved.path)}/ (${names.length} entries)`;
  if (names.length === 0) return success(`${header}\n(empty directory)`);
  const lines = [header];
  for (const name of names.slice(0, LIST_DIR_MAX_ENTRIES)) {
    lines.push(await describeEntry(workspace, path.join(resolved.path, name), name));
  }
  if (names.length > LIST_DIR_MAX_ENTRIES) {
    lines.push(
      `[${names.length - LIST_DIR_MAX_ENTRIES} more entries not shown; use glob with a pattern to find what you need]`,
    );
  }
  return success(lines.join('\n'));
}

async function describeEntry(workspace: Workspace, absolute: string, name: string): Promise<string> {
  try {
    const stats = await lstat(absolute);
    if (stats.isDirectory()) return `${name}/`;
    if (stats.isFile()) return `${name}  (${stats.size} bytes)`;
    if (stats.isSymbolicLink()) {
      const target = await readlink(absolute);
      const real = await realpath(absolute).catch(() => undefined);
      if (real === undefined) return `${name} -> ${target}  (broken link)`;
      if (!isInside(workspace.root, real)) return `${name} -> ${target}  (outside the workspace)`;
      return `${name}${(await stat(real)).isDirectory() ? '/' : ''} -> ${target}`;
    }
    return `${name}  (special file)`;
  } catch {
    return `${name}  (unreadable)`;
  }
}
