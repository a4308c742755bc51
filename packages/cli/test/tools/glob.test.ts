import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GLOB_MAX_RESULTS } from '../../src/tools/glob.js';
import { compileGlob, splitStaticPrefix } from '../../src/tools/glob-pattern.js';
import { makeWorkspace, type TestWorkspace } from './helpers.js';

describe('compileGlob', () => {
  const cases: [string, string[], string[]][] = [
    ['*.ts', ['a.ts', '.hidden.ts'], ['a.tsx', 'src/a.ts', 'a.js']],
    ['src/*.ts', ['src/a.ts'], ['src/deep/a.ts', 'a.ts']],
    ['**/*.ts', ['a.ts', 'src/a.ts', 'src/deep/er/a.ts'], ['a.js', 'src/a.tsx']],
    ['src/**/*.ts', ['src/a.ts', 'src/x/y/a.ts'], ['a.ts', 'srcx/a.ts']],
    ['src/**', ['src/a', 'src/x/y/z'], ['src', 'other/a']],
    ['file?.txt', ['file1.txt', 'fileA.txt'], ['file.txt', 'file12.txt', 'file/.txt']],
    ['*.{js,ts}', ['a.js', 'a.ts'], ['a.jsx', 'a.rs']],
    [
      '{src,test}/**/*.{json,y{a,}ml}',
      ['src/a.json', 'test/x/b.yml', 'test/b.yaml'],
      ['lib/a.json', 'src/a.xml'],
    ],
    ['[ab]*.md', ['a.md', 'bcd.md'], ['c.md']],
    ['[!ab]*.md', ['c.md'], ['a.md']],
    ['a**b', ['ab', 'axxb'], ['a/b']],
    ['a+b(c).txt', ['a+b(c).txt'], ['aab(c).txt']],
  ];
  for (const [pattern, matching, other] of cases) {
    it(`${pattern}`, () => {
      const regex = compileGlob(pattern);
      for (const candidate of matching) expect(regex.test(candidate), candidate).toBe(true);
      for (const candidate of other) expect(regex.test(candidate), candidate).toBe(false);
    });
  }

  it('rejects an unclosed brace', () => {
    expect(() => compileGlob('*.{ts,js')).toThrow("glob '*.{ts,js' has an unclosed '{'");
  });

  it('splits the literal folders off the front', () => {
    expect(splitStaticPrefix('node_modules/pkg/**/*.json')).toEqual({
      prefix: 'node_modules/pkg',
      rest: '**/*.json',
    });
    expect(splitStaticPrefix('src/index.ts')).toEqual({ prefix: 'src', rest: 'index.ts' });
    expect(splitStaticPrefix('**/*.ts')).toEqual({ prefix: '', rest: '**/*.ts' });
  });
});

describe('glob tool', () => {
  let workspace: TestWorkspace;

  beforeEach(async () => {
    workspace = await makeWorkspace();
    const files = [
      'package.json',
      'src/index.ts',
      'src/util/strings.ts',
      'src/util/strings.test.js',
      'test/a.test.ts',
      'node_modules/dep/index.ts',
      '.git/config',
      'docs/readme.md',
    ];
    for (const file of files) {
      await mkdir(path.dirname(path.join(workspace.root, file)), { recursive: true });
      await writeFile(path.join(workspace.root, file), file);
    }
  });

  afterEach(() => workspace.cleanup());

  it('finds files by pattern, sorted, relative to the root, skipping node_modules and .git', async () => {
    const output = await workspace.call('glob', { pattern: '**/*.ts' });
    expect(output).toEqual({ isError: false, content: 'src/index.ts\nsrc/util/strings.ts\ntest/a.test.ts' });
    const all = await workspace.call('glob', { pattern: '**' });
    expect(all.content).not.toContain('node_modules');
    expect(all.content).not.toContain('.git/');
    expect(all.content.split('\n')).toHaveLength(6);
  });

  it('matches against paths below `path` and shows them relative to the root', async () => {
    const output = await workspace.call('glob', { pattern: '*/*.{ts,js}', path: 'src' });
    expect(output.content).toBe('src/util/strings.test.js\nsrc/util/strings.ts');
  });

  it('searches node_modules when the pattern or path names it', async () => {
    expect((await workspace.call('glob', { pattern: 'node_modules/**/*.ts' })).content).toBe(
      'node_modules/dep/index.ts',
    );
    expect((await workspace.call('glob', { pattern: '*.ts', path: 'node_modules/dep' })).content).toBe(
      'node_modules/dep/index.ts',
    );
  });

  it('lists symlinked files inside the root but not those pointing outside', async () => {
    await writeFile(path.join(workspace.outside, 'secret.ts'), 'secret');
    await symlink(path.join(workspace.outside, 'secret.ts'), path.join(workspace.root, 'src', 'away.ts'));
    await symlink(path.join(workspace.root, 'src', 'index.ts'), path.join(workspace.root, 'src', 'alias.ts'));
    await symlink(workspace.outside, path.join(workspace.root, 'outside-folder'));
    const output = await workspace.call('glob', { pattern: '**/*.ts' });
    expect(output.content).toBe('src/alias.ts\nsrc/index.ts\nsrc/util/strings.ts\ntest/a.test.ts');
  });

  it('says when nothing matches and refuses bad patterns', async () => {
    expect(await workspace.call('glob', { pattern: '**/*.rs' })).toEqual({
      isError: false,
      content: "no files match '**/*.rs' in '.'",
    });
    const unclosed = await workspace.call('glob', { pattern: '*.{ts' });
    expect(unclosed).toEqual({ isError: true, content: "invalid glob: glob '*.{ts' has an unclosed '{'" });
    const escaping = await workspace.call('glob', { pattern: '../*' });
    expect(escaping.isError).toBe(true);
    expect(escaping.content).toContain("must not use '..'");
  });

  it('caps the results with a note', async () => {
    const folder = path.join(workspace.root, 'many');
    await mkdir(folder);
    await Promise.all(
      Array.from({ length: GLOB_MAX_RESULTS + 3 }, (_, index) =>
        writeFile(path.join(folder, `${index}.txt`), ''),
      ),
    );
    const lines = (await workspace.call('glob', { pattern: 'many/*.txt' })).content.split('\n');
    expect(lines).toHaveLength(GLOB_MAX_RESULTS + 1);
    expect(lines.at(-1)).toBe('[3 more files match; use a narrower pattern or path]');
  });
});
