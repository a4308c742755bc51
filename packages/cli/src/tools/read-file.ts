import type { FileHandle } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { ToolHandler, ToolInput, ToolOutput } from '@youyou/agent';
import { countOf } from '../text/plural.js';
import { ConfinementError, isBinaryContent, openFileToRead } from './confined-fs.js';
import {
  argumentsOf,
  cutLine,
  errorText,
  failure,
  resolveInWorkspace,
  success,
  type Workspace,
} from './workspace.js';

/** The most lines one read_file call returns. */
export const READ_FILE_MAX_LINES = 2000;
/** The most bytes of file text one read_file call returns. */
export const READ_FILE_MAX_BYTES = 256 * 1024;
/** Longer lines are cut, so one minified line cannot use up the whole answer. */
const MAX_LINE_CHARACTERS = 4000;

function numbered(lineNumber: number, text: string): string {
  return `${String(lineNumber).padStart(5)}| ${text}`;
}

/** The read_file tool: a text file's lines, numbered, optionally a 1-based inclusive range. */
export function createReadFileTool(workspace: Workspace): ToolHandler {
  return {
    name: 'read_file',
    description:
      'Reads a text file of the workspace and returns its lines numbered as `   12| text`. Use startLine/endLine ' +
      `(1-based, inclusive) to read part of a large file; one call returns at most ${READ_FILE_MAX_LINES} lines ` +
      'or 256 KiB and says where to continue. Binary files are refused.',
    parametersSchema: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'The file, relative to the workspace root.' },
        startLine: {
          type: 'integer',
          minimum: 1,
          description: 'The first line to return (1-based). Default 1.',
        },
        endLine: {
          type: 'integer',
          minimum: 1,
          description: 'The last line to return (inclusive). Default: the end.',
        },
      },
      required: ['path'],
      additionalProperties: false,
    },
    isMutating: false,
    execute: (input) => readFileTool(workspace, input),
  };
}

async function readFileTool(workspace: Workspace, input: ToolInput): Promise<ToolOutput> {
  const args = argumentsOf(input);
  const given = String(args.path ?? '');
  const startLine = typeof args.startLine === 'number' ? args.startLine : 1;
  const endLine = typeof args.endLine === 'number' ? args.endLine : Number.POSITIVE_INFINITY;
  if (endLine < startLine) {
    return failure(
      `endLine (${endLine}) is before startLine (${startLine}); give a range with startLine <= endLine`,
    );
  }
  const resolved = await resolveInWorkspace(workspace, given);
  if (!resolved.ok) return resolved.output;
  try {
    // Everything below reads through this one descriptor, opened and checked inside the workspace.
    const { handle } = await openFileToRead(workspace, resolved.path, given);
    try {
      if (await isBinaryContent(handle)) {
        return failure(`'${given}' is a binary file (it holds NUL bytes); read_file only reads text files`);
      }
      return success(await readLines({ handle, given, startLine, endLine, signal: input.signal }));
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (error instanceof ConfinementError) return failure(error.message);
    return failure(`cannot read '${given}': ${errorText(error)}`);
  }
}

async function readLines(options: {
  handle: FileHandle;
  given: string;
  startLine: number;
  endLine: number;
  signal: AbortSignal;
}): Promise<string> {
  const { startLine, endLine } = options;
  const stream = options.handle.createReadStream({ encoding: 'utf8', start: 0, autoClose: false });
  const stop = (): void => {
    stream.destroy(new Error('read_file was cancelled'));
  };
  if (options.signal.aborted) stop();
  else options.signal.addEventListener('abort', stop, { once: true });
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  const shown: string[] = [];
  let bytes = 0;
  let lineNumber = 0;
  let stoppedAt: number | undefined;
  try {
    for await (const line of lines) {
      lineNumber += 1;
      if (lineNumber < startLine) continue;
      if (lineNumber > endLine) break;
      const text = numbered(lineNumber, cutLine(line, MAX_LINE_CHARACTERS));
      const size = Buffer.byteLength(text) + 1;
      if (shown.length >= READ_FILE_MAX_LINES || bytes + size > READ_FILE_MAX_BYTES) {
        stoppedAt = lineNumber;
        break;
      }
      shown.push(text);
      bytes += size;
    }
  } finally {
    options.signal.removeEventListener('abort', stop);
    lines.close();
    stream.destroy();
  }
  if (lineNumber === 0) return `(${options.given} is empty)`;
  if (shown.length === 0 && stoppedAt === undefined) {
    return `(${options.given} has only ${countOf(lineNumber, 'line')}; startLine ${startLine} is past the end)`;
  }
  if (stoppedAt !== undefined) {
    shown.push(
      `[stopped after line ${stoppedAt - 1}: one call returns at most ${READ_FILE_MAX_LINES} lines or 256 KiB; ` +
        `call read_file with startLine ${stoppedAt} to read more]`,
    );
  }
  return shown.join('\n');
}
