import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { READ_FILE_MAX_LINES } from '../../src/tools/read-file.js';
import { makeWorkspace, type TestWorkspace } from './helpers.js';

let workspace: TestWorkspace;

beforeEach(async () => {
  workspace = await makeWorkspace();
});

afterEach(() => workspace.cleanup());

function lines(count: number): string {
  return Array.from({ length: count }, (_, index) => `line ${index + 1}`).join('\n');
}

describe('read_file', () => {
  it('returns every line numbered', async () => {
    await writeFile(path.join(workspace.root, 'a.txt'), 'first\r\nsecond\n\nfourth');
    const output = await workspace.call('read_file', { path: 'a.txt' });
    expect(output).toEqual({
      isError: false,
      content: '    1| first\n    2| second\n    3| \n    4| fourth',
    });
  });

  it('returns a 1-based inclusive range', async () => {
    await writeFile(path.join(workspace.root, 'a.txt'), lines(20));
    const output = await workspace.call('read_file', { path: 'a.txt', startLine: 12, endLine: 14 });
    expect(output.content).toBe('   12| line 12\n   13| line 13\n   14| line 14');
    const tail = await workspace.call('read_file', { path: 'a.txt', startLine: 19 });
    expect(tail.content).toBe('   19| line 19\n   20| line 20');
  });

  it('says when the range starts past the end or is reversed', async () => {
    await writeFile(path.join(workspace.root, 'a.txt'), lines(3));
    const past = await workspace.call('read_file', { path: 'a.txt', startLine: 10 });
    expect(past).toEqual({
      isError: false,
      content: '(a.txt has only 3 lines; startLine 10 is past the end)',
    });
    const reversed = await workspace.call('read_file', { path: 'a.txt', startLine: 5, endLine: 2 });
    expect(reversed.isError).toBe(true);
    expect(reversed.content).toContain('endLine (2) is before startLine (5)');
  });

  it('caps the lines of one call and says how to read on', async () => {
    await writeFile(path.join(workspace.root, 'big.txt'), lines(READ_FILE_MAX_LINES + 500));
    const output = await workspace.call('read_file', { path: 'big.txt' });
    const shown = output.content.split('\n');
    expect(shown).toHaveLength(READ_FILE_MAX_LINES + 1);
    expect(shown[READ_FILE_MAX_LINES - 1]).toBe(` 2000| line 2000`);
    expect(shown.at(-1)).toContain(`call read_file with startLine ${READ_FILE_MAX_LINES + 1} to read more`);
    const next = await workspace.call('read_file', { path: 'big.txt', startLine: READ_FILE_MAX_LINES + 1 });
    expect(next.content.split('\n')).toHaveLength(500);
  });

  it('caps the bytes of one call and cuts very long lines', async () => {
    const long = 'x'.repeat(3000);
    await writeFile(
      path.join(workspace.root, 'wide.txt'),
      Array.from({ length: 200 }, () => long).join('\n'),
    );
    const output = await workspace.call('read_file', { path: 'wide.txt' });
    expect(Buffer.byteLength(output.content)).toBeLessThanOrEqual(256 * 1024 + 200);
    const stoppedAt = /call read_file with startLine (\d+)/.exec(output.content)?.[1];
    expect(Number(stoppedAt)).toBeGreaterThan(50);
    expect(Number(stoppedAt)).toBeLessThan(200);

    await writeFile(path.join(workspace.root, 'minified.js'), 'y'.repeat(10_000));
    const cut = await workspace.call('read_file', { path: 'minified.js' });
    expect(cut.content).toMatch(/^ {4}1\| y{4000} … \[line cut: 6000 more characters\]$/);
  });

  it('refuses binary files', async () => {
    await writeFile(path.join(workspace.root, 'image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2]));
    const output = await workspace.call('read_file', { path: 'image.png' });
    expect(output.isError).toBe(true);
    expect(output.content).toBe(
      "'image.png' is a binary file (it holds NUL bytes); read_file only reads text files",
    );
  });

  it('reports a missing file, a folder and an empty file', async () => {
    const missing = await workspace.call('read_file', { path: 'nope.txt' });
    expect(missing.isError).toBe(true);
    expect(missing.content).toMatch(/^cannot read 'nope.txt': .*ENOENT/);
    await mkdir(path.join(workspace.root, 'folder'));
    const folder = await workspace.call('read_file', { path: 'folder' });
    expect(folder).toEqual({
      isError: true,
      content: "'folder' is a directory; use list_dir to see what it holds",
    });
    await writeFile(path.join(workspace.root, 'empty.txt'), '');
    expect(await workspace.call('read_file', { path: 'empty.txt' })).toEqual({
      isError: false,
      content: '(empty.txt is empty)',
    });
  });

  it('refuses a FIFO instead of blocking on it, in every file tool', async () => {
    execFileSync('mkfifo', [path.join(workspace.root, 'pipe')]);
    const calls: [string, unknown][] = [
      ['read_file', { path: 'pipe' }],
      ['grep', { pattern: 'x', path: 'pipe' }],
      ['edit_file', { path: 'pipe', oldString: 'a', newString: 'b' }],
      ['write_file', { path: 'pipe', content: 'x' }],
    ];
    for (const [name, args] of calls) {
      const output = await workspace.call(name, args);
      expect(output.isError, name).toBe(true);
      expect(output.content, name).toContain("'pipe' is not a regular file");
    }
  });
});
