import { lstat, readlink, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ToolHandler, ToolInput, ToolOutput } from '@youyou/agent';
import { countOf } from '../text/plural.js';
import { ConfinementError, entryPath, namesIn, type OpenedInside, openInside } from './confined-fs.js';
import {
  argumentsOf,
  displayPath,
  errorCode,
  errorText,
  failure,
  isHidden,
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
  let folder: OpenedInside;
  try {
    // Listed and looked into through this descriptor: a folder swapped for a symlink is never followed.
    folder = await openInside({ workspace, real: resolved.path, purpose: 'folder' });
  } catch (error) {
    if (error instanceof ConfinementError) return failure(error.message);
    if (errorCode(error) === 'ENOTDIR') {
      return failure(`'${given}' is not a directory; use read_file to read a file`);
    }
    return failure(`cannot list '${given}': ${errorText(error)}`);
  }
  const lines: string[] = [];
  let names: string[];
  try {
    names = await namesIn(folder);
    names.sort((left, right) => (left < right ? -1 : left > right ? 1 : 0));
    for (const name of names.slice(0, LIST_DIR_MAX_ENTRIES)) {
      lines.push(await describeEntry({ workspace, folder, name }));
    }
  } catch (error) {
    return failure(`cannot list '${given}': ${errorText(error)}`);
  } finally {
    await folder.handle.close();
  }
  const header = `${displayPath(workspace, folder.real)}/ (${countOf(names.length, 'entry', 'entries')})`;
  if (names.length === 0) return success(`${header}\n(empty directory)`);
  lines.unshift(header);
  if (names.length > LIST_DIR_MAX_ENTRIES) {
    lines.push(
      `[${names.length - LIST_DIR_MAX_ENTRIES} more entries not shown; use glob with a pattern to find what you need]`,
    );
  }
  return success(lines.join('\n'));
}

async function describeEntry(options: {
  workspace: Workspace;
  folder: OpenedInside;
  name: string;
}): Promise<string> {
  const { workspace, name } = options;
  // Shown as the shell's sandbox shows it: there, an empty folder or file stands in its place.
  if (isHidden(workspace, path.join(options.folder.real, name))) return `${name}  (hidden from the tools)`;
  const absolute = entryPath(options.folder, name);
  try {
    const stats = await lstat(absolute);
    if (stats.isDirectory()) return `${name}/`;
    if (stats.isFile()) return `${name}  (${countOf(stats.size, 'byte')})`;
    if (stats.isSymbolicLink()) {
      const target = await readlink(absolute);
      const real = await realpath(absolute).catch(() => undefined);
      if (real === undefined) return `${name} -> ${target}  (broken link)`;
      if (!isInside(workspace.root, real)) return `${name} -> ${target}  (outside the workspace)`;
      if (isHidden(workspace, real)) return `${name}  (a link to a path hidden from the tools)`;
      return `${name}${(await stat(real)).isDirectory() ? '/' : ''} -> ${target}`;
    }
    return `${name}  (special file)`;
  } catch {
    return `${name}  (unreadable)`;
  }
}
