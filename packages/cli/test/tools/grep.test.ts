import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeWorkspace, type TestWorkspace } from './helpers.js';

let workspace: TestWorkspace;

async function put(file: string, content: string | Buffer): Promise<void> {
  await mkdir(path.dirname(path.join(workspace.root, file)), { recursive: true });
  await writeFile(path.join(workspace.root, file), content);
}

beforeEach(async () => {
  workspace = await makeWorkspace();
  await put('src/a.ts', 'const alpha = 1;\nconst beta = 2;\nexport { alpha };\n');
  await put('src/b.md', '# Alpha\nnothing here\n');
  await put('docs/c.ts', 'ALPHA\n');
  await put('node_modules/dep/index.ts', 'alpha in a dependency\n');
  await put('.git/HEAD', 'alpha\n');
  await put('image.bin', Buffer.from('alpha\0beta'));
});

afterEach(() => workspace.cleanup());

describe('grep', () => {
  it('returns matching lines as file:line: text, skipping node_modules, .git and binary files', async () => {
    const output = await workspace.call('grep', { pattern: 'alpha' });
    expect(output).toEqual({
      isError: false,
      content: 'src/a.ts:1: const alpha = 1;\nsrc/a.ts:3: export { alpha };',
    });
  });

  it('matches regardless of case when asked, and takes regular expressions', async () => {
    const output = await workspace.call('grep', { pattern: '^(#\\s*)?alpha$', caseInsensitive: true });
    expect(output.content).toBe('docs/c.ts:1: ALPHA\nsrc/b.md:1: # Alpha');
  });

  it('narrows by path and by glob', async () => {
    expect(
      (await workspace.call('grep', { pattern: 'alpha', path: 'docs', caseInsensitive: true })).content,
    ).toBe('docs/c.ts:1: ALPHA');
    const byName = await workspace.call('grep', { pattern: 'h', glob: '*.md' });
    expect(byName.content).toBe('src/b.md:1: # Alpha\nsrc/b.md:2: nothing here');
    const byPath = await workspace.call('grep', {
      pattern: '.',
      glob: 'src/**/*.{ts,md}',
      caseInsensitive: true,
    });
    expect(byPath.content.split('\n').map((line) => line.split(':')[0])).toEqual([
      'src/a.ts',
      'src/a.ts',
      'src/a.ts',
      'src/b.md',
      'src/b.md',
    ]);
    const oneFile = await workspace.call('grep', { pattern: 'beta', path: 'src/a.ts' });
    expect(oneFile.content).toBe('src/a.ts:2: const beta = 2;');
    const explicitDependency = await workspace.call('grep', { pattern: 'alpha', path: 'node_modules' });
    expect(explicitDependency.content).toBe('node_modules/dep/index.ts:1: alpha in a dependency');
  });

  it('reports an invalid regular expression as an error result', async () => {
    const output = await workspace.call('grep', { pattern: 'a(b' });
    expect(output.isError).toBe(true);
    expect(output.content).toMatch(/^invalid regular expression 'a\(b': .*fix the pattern/);
  });

  it('refuses a binary file named directly and says when nothing matches', async () => {
    const binary = await workspace.call('grep', { pattern: 'alpha', path: 'image.bin' });
    expect(binary.isError).toBe(true);
    expect(binary.content).toContain('binary file');
    expect(await workspace.call('grep', { pattern: 'zeta' })).toEqual({
      isError: false,
      content: "no lines match /zeta/ in '.'",
    });
  });

  it('stops at maxResults with a note', async () => {
    await put('many.txt', Array.from({ length: 50 }, (_, index) => `hit ${index}`).join('\n'));
    const output = await workspace.call('grep', { pattern: 'hit', maxResults: 10 });
    const lines = output.content.split('\n');
    expect(lines).toHaveLength(11);
    expect(lines[9]).toBe('many.txt:10: hit 9');
    expect(lines[10]).toContain('[stopped at 10 matching lines;');
    const defaults = await workspace.call('grep', { pattern: 'hit' });
    expect(defaults.content.split('\n')).toHaveLength(50);
  });

  it('does not read a symlinked file outside the root', async () => {
    await writeFile(path.join(workspace.outside, 'secret.txt'), 'alpha secret\n');
    await symlink(path.join(workspace.outside, 'secret.txt'), path.join(workspace.root, 'src', 'leak.txt'));
    await symlink(workspace.outside, path.join(workspace.root, 'src', 'leak-folder'));
    const output = await workspace.call('grep', { pattern: 'secret' });
    expect(output.content).toBe("no lines match /secret/ in '.'");
  });
});
