import { readFile, stat, writeFile } from 'node:fs/promises';
import type { ToolHandler, ToolInput, ToolOutput } from '@youyou/agent';
import {
  argumentsOf,
  displayPath,
  errorCode,
  errorText,
  failure,
  looksBinary,
  notRegularFile,
  resolveInWorkspace,
  success,
  type Workspace,
} from './workspace.js';

/** How often `needle` occurs in `text`, counting non-overlapping occurrences as a replace would. */
function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let index = text.indexOf(needle); index !== -1; index = text.indexOf(needle, index + needle.length)) {
    count += 1;
  }
  return count;
}

/** The edit_file tool: replaces an exact piece of text in a file. */
export function createEditFileTool(workspace: Workspace): ToolHandler {
  return {
    name: 'edit_file',
    description:
      'Replaces exact text in an existing file: oldString must appear exactly once (copy it from read_file, ' +
      'without the line-number prefix, white space included), unless replaceAll is true, which replaces every ' +
      'occurrence. Add surrounding lines to oldString to make it unique.',
    parametersSchema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'The file, relative to the workspace root.' },
        oldString: { type: 'string', description: 'The exact text to replace.' },
        newString: { type: 'string', description: 'The text to put in its place.' },
        replaceAll: {
          type: 'boolean',
          description: 'Replace every occurrence instead of exactly one. Default false.',
        },
      },
      required: ['path', 'oldString', 'newString'],
      additionalProperties: false,
    },
    isMutating: true,
    execute: (input) => editFileTool(workspace, input),
  };
}

async function editFileTool(workspace: Workspace, input: ToolInput): Promise<ToolOutput> {
  const args = argumentsOf(input);
  const given = String(args.path ?? '');
  const { oldString, newString } = args;
  if (typeof oldString !== 'string' || typeof newString !== 'string') {
    return failure('oldString and newString must be strings');
  }
  if (oldString === '')
    return failure('oldString is empty; give the exact text to replace (use write_file to create a file)');
  if (oldString === newString) return failure('oldString and newString are the same; nothing would change');
  const resolved = await resolveInWorkspace(workspace, given);
  if (!resolved.ok) return resolved.output;
  let bytes: Buffer;
  try {
    const stats = await stat(resolved.path);
    if (stats.isDirectory()) return failure(`'${given}' is a directory; give a file path`);
    if (!stats.isFile()) return failure(notRegularFile(given));
    bytes = await readFile(resolved.path, { signal: input.signal });
  } catch (error) {
    if (errorCode(error) === 'ENOENT')
      return failure(`'${given}' does not exist; use write_file to create it`);
    return failure(`cannot read '${given}': ${errorText(error)}`);
  }
  if (looksBinary(bytes))
    return failure(`'${given}' is a binary file (it holds NUL bytes); edit_file only edits text`);
  const text = bytes.toString('utf8');
  const count = countOccurrences(text, oldString);
  if (count === 0) {
    return failure(
      `oldString was not found in '${given}'; read the file again and copy the text exactly, white space and ` +
        'line breaks included, without the line-number prefix',
    );
  }
  if (count > 1 && args.replaceAll !== true) {
    return failure(
      `oldString appears ${count} times in '${given}'; add surrounding lines to make it unique, or set ` +
        'replaceAll to true to replace every occurrence',
    );
  }
  // split/join rather than String.replace, whose replacement string gives `$&` and friends a meaning.
  const updated = text.split(oldString).join(newString);
  try {
    await writeFile(resolved.path, updated, { encoding: 'utf8', signal: input.signal });
  } catch (error) {
    return failure(`cannot write '${given}': ${errorText(error)}`);
  }
  const shown = displayPath(workspace, resolved.path);
  return success(`Replaced ${count} occurrence${count === 1 ? '' : 's'} in ${shown}`);
}
