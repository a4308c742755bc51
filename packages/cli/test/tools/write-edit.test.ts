import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeWorkspace, type TestWorkspace } from './helpers.js';

let workspace: TestWorkspace;

beforeEach(async () => {
  workspace = await makeWorkspace();
});

afterEach(() => workspace.cleanup());

function contentOf(file: string): Promise<string> {
  return readFile(path.join(workspace.root, file), 'utf8');
}

describe('write_file', () => {
  it('creates a file and its folders and says how many bytes it wrote', async () => {
    const output = await workspace.call('write_file', { path: 'a/b/c.txt', content: 'héllo\n' });
    expect(output).toEqual({ isError: false, content: 'Created a/b/c.txt (7 bytes written)' });
    expect(await contentOf('a/b/c.txt')).toBe('héllo\n');
  });

  it('replaces an existing file', async () => {
    await writeFile(path.join(workspace.root, 'x.txt'), 'old content');
    const output = await workspace.call('write_file', { path: 'x.txt', content: '' });
    expect(output).toEqual({ isError: false, content: 'Replaced x.txt (0 bytes written)' });
    expect(await contentOf('x.txt')).toBe('');
  });

  it('refuses to write over a folder', async () => {
    await mkdir(path.join(workspace.root, 'folder'));
    const output = await workspace.call('write_file', { path: 'folder', content: 'x' });
    expect(output.isError).toBe(true);
    expect(output.content).toContain("'folder' is a directory");
  });
});

describe('edit_file', () => {
  beforeEach(async () => {
    await writeFile(path.join(workspace.root, 'code.ts'), 'let a = 1;\nlet b = 1;\nlet c = 2;\n');
  });

  it('replaces a unique string', async () => {
    const output = await workspace.call('edit_file', {
      path: 'code.ts',
      oldString: 'c = 2',
      newString: 'c = $& 3',
    });
    expect(output).toEqual({ isError: false, content: 'Replaced 1 occurrence in code.ts' });
    expect(await contentOf('code.ts')).toBe('let a = 1;\nlet b = 1;\nlet c = $& 3;\n');
  });

  it('refuses an ambiguous string, saying how many times it appears, unless replaceAll', async () => {
    const ambiguous = await workspace.call('edit_file', {
      path: 'code.ts',
      oldString: '= 1',
      newString: '= 9',
    });
    expect(ambiguous.isError).toBe(true);
    expect(ambiguous.content).toBe(
      "oldString appears 2 times in 'code.ts'; add surrounding lines to make it unique, or set replaceAll to " +
        'true to replace every occurrence',
    );
    expect(await contentOf('code.ts')).toBe('let a = 1;\nlet b = 1;\nlet c = 2;\n');
    const all = await workspace.call('edit_file', {
      path: 'code.ts',
      oldString: '= 1',
      newString: '= 9',
      replaceAll: true,
    });
    expect(all).toEqual({ isError: false, content: 'Replaced 2 occurrences in code.ts' });
    expect(await contentOf('code.ts')).toBe('let a = 9;\nlet b = 9;\nlet c = 2;\n');
  });

  it('refuses a missing string and leaves the file alone', async () => {
    const output = await workspace.call('edit_file', {
      path: 'code.ts',
      oldString: 'let d',
      newString: 'let e',
    });
    expect(output.isError).toBe(true);
    expect(output.content).toMatch(/^oldString was not found in 'code.ts'; read the file again/);
    expect(await contentOf('code.ts')).toBe('let a = 1;\nlet b = 1;\nlet c = 2;\n');
  });

  it('refuses a missing file, an empty oldString, a no-op and a binary file', async () => {
    const missing = await workspace.call('edit_file', { path: 'nope.ts', oldString: 'a', newString: 'b' });
    expect(missing).toEqual({
      isError: true,
      content: "'nope.ts' does not exist; use write_file to create it",
    });
    const empty = await workspace.call('edit_file', { path: 'code.ts', oldString: '', newString: 'b' });
    expect(empty.isError).toBe(true);
    expect(empty.content).toContain('oldString is empty');
    const same = await workspace.call('edit_file', { path: 'code.ts', oldString: 'a', newString: 'a' });
    expect(same.isError).toBe(true);
    await writeFile(path.join(workspace.root, 'blob'), Buffer.from('a\0b'));
    const binary = await workspace.call('edit_file', { path: 'blob', oldString: 'a', newString: 'c' });
    expect(binary.isError).toBe(true);
    expect(binary.content).toContain('binary file');
  });
});
