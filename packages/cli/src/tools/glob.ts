import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { ToolHandler, ToolInput, ToolOutput } from '@youyou/agent';
import { compileGlob, splitStaticPrefix } from './glob-pattern.js';
import type { LinearPattern } from './linear-pattern.js';
import { walkFiles } from './walk.js';
import {
  argumentsOf,
  displayPath,
  errorText,
  failure,
  resolveInWorkspace,
  success,
  type Workspace,
} from './workspace.js';

/** The most paths one glob call returns. */
export const GLOB_MAX_RESULTS = 1000;

/** The glob tool: the files below a folder whose path matches a pattern. */
export function createGlobTool(workspace: Workspace): ToolHandler {
  return {
    name: 'glob',
    description:
      'Finds files by path pattern, e.g. `src/**/*.ts` or `**/*.{json,yaml}`. `**` matches any number of ' +
      'folders, `*` and `?` match within one name, `{a,b}` either branch, `[abc]` one character. The pattern ' +
      'is matched against paths relative to `path` (default: the workspace root); results are paths relative ' +
      `to the workspace root, sorted, at most ${GLOB_MAX_RESULTS}. node_modules and .git are skipped unless ` +
      'the pattern or path names them; so are files that .gitignore files ignore.',
    parametersSchema: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'The glob, with `/` separators, relative to `path`.' },
        path: {
          type: 'string',
          description: 'The folder to search in, relative to the root. Default: the root.',
        },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    isMutating: false,
    execute: (input) => globTool(workspace, input),
  };
}

async function globTool(workspace: Workspace, input: ToolInput): Promise<ToolOutput> {
  const args = argumentsOf(input);
  const pattern = String(args.pattern ?? '').replace(/^\.\//, '');
  const given = typeof args.path === 'string' && args.path !== '' ? args.path : '.';
  if (pattern === '') return failure('pattern is empty; give a glob such as `**/*.ts`');
  if (pattern.startsWith('/') || pattern.split('/').includes('..')) {
    return failure(
      `pattern '${pattern}' must be relative and must not use '..'; choose the folder with 'path'`,
    );
  }
  let matcher: LinearPattern;
  try {
    matcher = compileGlob(pattern);
  } catch (error) {
    return failure(`invalid glob: ${errorText(error)}`);
  }
  const base = await resolveInWorkspace(workspace, given);
  if (!base.ok) return base.output;
  const { prefix } = splitStaticPrefix(pattern);
  const start = await resolveInWorkspace(workspace, path.join(base.path, prefix));
  if (!start.ok) return start.output;
  try {
    if (!(await stat(base.path)).isDirectory()) return failure(`'${given}' is not a directory`);
  } catch (error) {
    return failure(`cannot search '${given}': ${errorText(error)}`);
  }
  const isFolder = await stat(start.path).then(
    (stats) => stats.isDirectory(),
    () => false,
  );
  const matches: string[] = [];
  if (isFolder) {
    for await (const file of walkFiles({ workspace, start: start.path, signal: input.signal })) {
      const relative = prefix === '' ? file.relative : `${prefix}/${file.relative}`;
      if (matcher.test(relative)) matches.push(displayPath(workspace, file.absolute));
    }
  }
  if (input.signal.aborted) return failure('glob was cancelled');
  if (matches.length === 0) return success(`no files match '${pattern}' in '${given}'`);
  matches.sort();
  const shown = matches.slice(0, GLOB_MAX_RESULTS);
  if (matches.length > GLOB_MAX_RESULTS) {
    shown.push(`[${matches.length - GLOB_MAX_RESULTS} more files match; use a narrower pattern or path]`);
  }
  return success(shown.join('\n'));
}
