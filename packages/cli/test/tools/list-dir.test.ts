import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LIST_DIR_MAX_ENTRIES } from '../../src/tools/list-dir.js';
import { makeWorkspace, type TestWorkspace } from './helpers.js';

let workspace: TestWorkspace;

beforeEach(async () => {
  workspace = await makeWorkspace();
});

afterEach(() => workspace.cleanup());

describe('list_dir', () => {
  it('lists entries sorted, folders with /, files with their size, symlinks with their target', async () => {
    await writeFile(path.join(workspace.root, 'b.txt'), 'hello');
    await mkdir(path.join(workspace.root, 'a-folder'));
    await writeFile(path.join(workspace.root, 'C.md'), '');
    await symlink('b.txt', path.join(workspace.root, 'link'));
    await symlink(workspace.outside, path.join(workspace.root, 'away'));
    const output = await workspace.call('list_dir', {});
    expect(output).toEqual({
      isError: false,
      content: [
        './ (5 entries)',
        'C.md  (0 bytes)',
        'a-folder/',
        `away -> ${workspace.outside}  (outside the workspace)`,
        'b.txt  (5 bytes)',
        'link -> b.txt',
      ].join('\n'),
    });
  });

  it('lists a sub-folder and says when it is empty', async () => {
    await mkdir(path.join(workspace.root, 'src', 'empty'), { recursive: true });
    await writeFile(path.join(workspace.root, 'src', 'index.ts'), 'export {};\n');
    expect((await workspace.call('list_dir', { path: 'src' })).content).toBe(
      'src/ (2 entries)\nempty/\nindex.ts  (11 bytes)',
    );
    expect((await workspace.call('list_dir', { path: 'src/empty' })).content).toBe(
      'src/empty/ (0 entries)\n(empty directory)',
    );
  });

  it('refuses a file and a missing folder', async () => {
    await writeFile(path.join(workspace.root, 'file.txt'), 'x');
    const file = await workspace.call('list_dir', { path: 'file.txt' });
    expect(file).toEqual({
      isError: true,
      content: "'file.txt' is not a directory; use read_file to read a file",
    });
    const missing = await workspace.call('list_dir', { path: 'missing' });
    expect(missing.isError).toBe(true);
    expect(missing.content).toContain("cannot list 'missing'");
  });

  it('caps the entries with a note', async () => {
    const folder = path.join(workspace.root, 'many');
    await mkdir(folder);
    const count = LIST_DIR_MAX_ENTRIES + 25;
    await Promise.all(
      Array.from({ length: count }, (_, index) =>
        writeFile(path.join(folder, `f${String(index).padStart(5, '0')}`), ''),
      ),
    );
    const shown = (await workspace.call('list_dir', { path: 'many' })).content.split('\n');
    expect(shown).toHaveLength(LIST_DIR_MAX_ENTRIES + 2);
    expect(shown[0]).toBe(`many/ (${count} entries)`);
    expect(shown.at(-1)).toBe('[25 more entries not shown; use glob with a pattern to find what you need]');
  });
});
