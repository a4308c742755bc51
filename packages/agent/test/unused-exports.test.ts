import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runScript, type ScriptRun, temporaryRepositories } from './support/script-runs.js';

/** Runs the script in a child process with these arguments. */
function unusedExports(args: string[]): Promise<ScriptRun> {
  return runScript('unused-exports.mjs', args);
}

const LIBRARY = [
  'export function used(): number {',
  '  return helper();',
  '}',
  'export function helper(): number {',
  '  return 1;',
  '}',
  'export interface Shape {',
  '  size: number;',
  '}',
  'export const viaTest: Shape = { size: 2 };',
  'export const viaNamespace = 3;',
  'export const viaDynamicImport = 4;',
  '',
].join('\n');

describe('scripts/unused-exports.mjs', () => {
  const repositories = temporaryRepositories('youyou-exports-');
  /** A temporary repository (no git checkout) holding these files (path → source). */
  const repositoryWith = repositories.create;

  afterEach(() => repositories.removeAll());

  it('lists the exports only their own file uses, exits 1, and --fix removes their export keyword', async () => {
    const root = repositoryWith({
      'packages/agent/src/index.ts': "export { used } from './lib.js';\nexport * from './whole.js';\n",
      'packages/agent/src/lib.ts': LIBRARY,
      'packages/agent/src/whole.ts':
        'export const publicThroughStar = 1;\nexport type AlsoPublic = string;\n',
      'packages/agent/test/lib.test.ts': "import { type Shape, viaTest } from '../src/lib.js';\n",
      'packages/agent/test/namespace.test.ts': "import * as lib from '../src/lib.js';\nlib.viaNamespace;\n",
      'examples/dynamic.mjs': "const { viaDynamicImport } = await import('../packages/agent/src/lib.js');\n",
    });
    const listed = await unusedExports(['--root', root]);
    expect(listed.code).toBe(1);
    expect(listed.stdout.trim().split('\n')).toEqual(['packages/agent/src/lib.ts:4 helper']);

    const fixed = await unusedExports(['--root', root, '--fix']);
    expect(fixed.code).toBe(0);
    const library = readFileSync(join(root, 'packages/agent/src/lib.ts'), 'utf8');
    expect(library).toBe(LIBRARY.replace('export function helper', 'function helper'));
    expect(await unusedExports(['--root', root])).toMatchObject({ code: 0 });
  });

  it('takes another source folder, whose entry files are never listed', async () => {
    const root = repositoryWith({
      'packages/demo/src/index.ts': "export const entryOnly = 1;\nexport { tool } from './tool.js';\n",
      'packages/demo/src/tool.ts': 'export const tool = 1;\nexport const toolLimit = 2;\n',
    });
    const listed = await unusedExports(['--root', root, 'packages/demo/src']);
    expect(listed.code).toBe(1);
    expect(listed.stdout.trim().split('\n')).toEqual(['packages/demo/src/tool.ts:2 toolLimit']);
  });

  it('finds nothing to un-export in the core of this repository', async () => {
    const result = await unusedExports([]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });
});
