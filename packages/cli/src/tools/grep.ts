import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ToolHandler, ToolInput, ToolOutput } from '@youyou/agent';
import { countOf } from '../text/plural.js';
import { ConfinementError, isBinaryContent, openFileToRead, openInside } from './confined-fs.js';
import { compileGlob } from './glob-pattern.js';
import { compileLinearRegex, type LinearPattern } from './linear-pattern.js';
import { type WalkedFile, walkFiles } from './walk.js';
import {
  argumentsOf,
  cutLine,
  displayPath,
  errorText,
  failure,
  looksBinary,
  notRegularFile,
  resolveInWorkspace,
  success,
  type Workspace,
} from './workspace.js';

/** How many matching lines grep returns unless told otherwise. */
export const GREP_DEFAULT_MAX_RESULTS = 200;
/** The most matching lines one grep call may ask for. */
export const GREP_MAX_RESULTS = 2000;
/** Files larger than this are not searched (logs, dumps, bundles). */
export const GREP_MAX_FILE_BYTES = 16 * 1024 * 1024;
/** Matching lines are cut to this many characters. */
const MAX_LINE_CHARACTERS = 500;
/**
 * How long matching may hold the event loop before it lets timers, keys and the signal in: a cancel or a
 * time-out is heard within about this long even in a file of millions of lines.
 */
const MAX_BUSY_MS = 50;

/** How many bytes of a file are decoded and split into lines at a time: a few milliseconds of work. */
const DECODE_CHUNK_BYTES = 256 * 1024;

/**
 * The lines of a file (split at `\n` and `\r\n`, the last one possibly empty), decoded a chunk at a time so
 * that a 16 MiB file does not hold the event loop while it is decoded. Chunks are cut after a line feed, so
 * neither a line nor a UTF-8 character is ever cut in two.
 */
function* lineChunks(bytes: Buffer): Generator<string[]> {
  let start = 0;
  do {
    const newline =
      start + DECODE_CHUNK_BYTES >= bytes.length ? -1 : bytes.indexOf(0x0a, start + DECODE_CHUNK_BYTES);
    const end = newline === -1 ? bytes.length : newline + 1;
    const lines = bytes.toString('utf8', start, end).split(/\r?\n/);
    // A chunk that ends with its line feed ends with an empty string: the next chunk's first line.
    if (end < bytes.length) lines.pop();
    yield lines;
    start = end;
  } while (start < bytes.length);
}

/** The files grep searches: a walk of the folder, or the one text file. */
async function filesToSearch(options: {
  workspace: Workspace;
  real: string;
  given: string;
  signal: AbortSignal;
}): Promise<AsyncIterable<WalkedFile> | WalkedFile[]> {
  const { workspace, real, given } = options;
  const opened = await openInside({ workspace, real, purpose: 'read' });
  try {
    if (opened.stats.isDirectory()) return walkFiles({ workspace, start: real, signal: options.signal });
    if (!opened.stats.isFile()) throw new ConfinementError(notRegularFile(given));
    if (await isBinaryContent(opened.handle)) {
      throw new ConfinementError(
        `'${given}' is a binary file (it holds NUL bytes); grep only searches text files`,
      );
    }
  } finally {
    await opened.handle.close();
  }
  return [{ absolute: real, relative: path.basename(real) }];
}

/** What grep answers once its signal has fired, wherever it notices. */
const CANCELLED = 'grep was cancelled';

/**
 * The bytes of a file a search met, read through a descriptor opened inside the workspace (the walk's name
 * may have become a symlink since); 'too large' past GREP_MAX_FILE_BYTES, undefined when it cannot be read
 * or the signal fired (a 16 MiB read stops part-way).
 */
async function readSearchedFile(
  workspace: Workspace,
  absolute: string,
  signal: AbortSignal,
): Promise<Buffer | 'too large' | undefined> {
  const resolved = await resolveInWorkspace(workspace, absolute);
  if (!resolved.ok) return undefined;
  try {
    const { handle, stats } = await openFileToRead(workspace, resolved.path, absolute);
    try {
      if (stats.size > GREP_MAX_FILE_BYTES) return 'too large';
      return await handle.readFile({ signal });
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
}

/** The grep tool: the lines of workspace files that match a JavaScript regular expression. */
export function createGrepTool(workspace: Workspace): ToolHandler {
  return {
    name: 'grep',
    description:
      'Searches file contents with a regular expression (JavaScript syntax without lookaround or ' +
      'backreferences, matched by RE2 as in ripgrep) and returns matching lines as `file:line: text` (paths ' +
      'relative to the workspace root). `path` is a folder or a file (default: the root); `glob` keeps only ' +
      'some files (`*.ts` matches names, `src/**/*.ts` paths below `path`). Binary files, node_modules, .git ' +
      'and what .gitignore files ignore are skipped. At most maxResults lines (default ' +
      `${GREP_DEFAULT_MAX_RESULTS}).`,
    parametersSchema: {
      type: 'object',
      properties: {
        pattern: {
          type: 'string',
          description: 'A regular expression, without slashes or flags (no lookaround or backreferences).',
        },
        path: {
          type: 'string',
          description: 'The folder or file to search, relative to the root. Default: the root.',
        },
        glob: {
          type: 'string',
          description: 'Only search files matching this glob, e.g. `*.ts` or `src/**/*.md`.',
        },
        caseInsensitive: { type: 'boolean', description: 'Match regardless of case. Default false.' },
        maxResults: {
          type: 'integer',
          minimum: 1,
          maximum: GREP_MAX_RESULTS,
          description: `The most matching lines to return. Default ${GREP_DEFAULT_MAX_RESULTS}.`,
        },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    isMutating: false,
    execute: (input) => grepTool(workspace, input),
  };
}

/**
 * The files a `glob` argument lets through (all without one), or what is wrong with it. Like ripgrep: a glob
 * without `/` matches file names anywhere, one with `/` the path below `path`.
 */
function fileFilterOf(glob: unknown): ((file: WalkedFile) => boolean) | undefined | string {
  if (typeof glob !== 'string' || glob === '') return undefined;
  let matcher: LinearPattern;
  try {
    matcher = compileGlob(glob);
  } catch (error) {
    return `invalid glob: ${errorText(error)}`;
  }
  return glob.includes('/')
    ? (file) => matcher.test(file.relative)
    : (file) => matcher.test(path.posix.basename(file.relative));
}

async function grepTool(workspace: Workspace, input: ToolInput): Promise<ToolOutput> {
  const args = argumentsOf(input);
  const pattern = String(args.pattern ?? '');
  const given = typeof args.path === 'string' && args.path !== '' ? args.path : '.';
  const maxResults = Math.min(
    typeof args.maxResults === 'number' && args.maxResults >= 1
      ? Math.floor(args.maxResults)
      : GREP_DEFAULT_MAX_RESULTS,
    GREP_MAX_RESULTS,
  );
  let regex: LinearPattern;
  try {
    regex = compileLinearRegex(pattern, { caseInsensitive: args.caseInsensitive === true });
  } catch (error) {
    return failure(`invalid regular expression '${pattern}': ${errorText(error)}; fix the pattern`);
  }
  const fileFilter = fileFilterOf(args.glob);
  if (typeof fileFilter === 'string') return failure(fileFilter);
  const resolved = await resolveInWorkspace(workspace, given);
  if (!resolved.ok) return resolved.output;
  let files: AsyncIterable<WalkedFile> | WalkedFile[];
  try {
    files = await filesToSearch({ workspace, real: resolved.path, given, signal: input.signal });
  } catch (error) {
    if (error instanceof ConfinementError) return failure(error.message);
    return failure(`cannot search '${given}': ${errorText(error)}`);
  }
  const results: string[] = [];
  let skippedLarge = 0;
  let truncated = false;
  let busySince = performance.now();
  search: for await (const file of files) {
    if (input.signal.aborted) return failure(CANCELLED);
    if (fileFilter !== undefined && !fileFilter(file)) continue;
    const bytes = await readSearchedFile(workspace, file.absolute, input.signal);
    // Reading waited for the disk, and the event loop ran meanwhile: a cancel may have come in, and matching
    // would not hear it until its first yield, up to MAX_BUSY_MS later.
    if (input.signal.aborted) return failure(CANCELLED);
    busySince = performance.now();
    if (bytes === 'too large') {
      skippedLarge += 1;
      continue;
    }
    if (bytes === undefined) continue;
    if (looksBinary(bytes.subarray(0, 8000))) continue;
    const shown = displayPath(workspace, file.absolute);
    let lineNumber = 0;
    for (const lines of lineChunks(bytes)) {
      for (let index = 0; index < lines.length; index += 1) {
        if (index % 256 === 0 && performance.now() - busySince > MAX_BUSY_MS) {
          await nextTurn();
          if (input.signal.aborted) return failure(CANCELLED);
          busySince = performance.now();
        }
        lineNumber += 1;
        const line = lines[index] as string;
        if (!regex.test(line)) continue;
        if (results.length >= maxResults) {
          truncated = true;
          break search;
        }
        results.push(`${shown}:${lineNumber}: ${cutLine(line, MAX_LINE_CHARACTERS)}`);
      }
    }
  }
  const notes: string[] = [];
  if (truncated) {
    notes.push(
      `[stopped at ${maxResults} matching lines; narrow the pattern, path or glob, or raise maxResults]`,
    );
  }
  if (skippedLarge > 0)
    notes.push(
      `[${countOf(skippedLarge, 'file')} over 16 MiB ${skippedLarge === 1 ? 'was' : 'were'} not searched]`,
    );
  if (results.length === 0)
    return success([`no lines match /${pattern}/ in '${given}'`, ...notes].join('\n'));
  return success([...results, ...notes].join('\n'));
}
