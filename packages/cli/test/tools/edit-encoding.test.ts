import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeWorkspace, type TestWorkspace } from './helpers.js';

let workspace: TestWorkspace;

beforeEach(async () => {
  workspace = await makeWorkspace();
});

afterEach(() => workspace.cleanup());

async function bytesOf(file: string): Promise<Buffer> {
  return readFile(path.join(workspace.root, file));
}

describe('edit_file never damages a file', () => {
  it('refuses a Latin-1 file and leaves its bytes as they were', async () => {
    const latin1 = Buffer.from('caf\xe9 cr\xe8me\nna\xefve\n', 'latin1');
    await writeFile(path.join(workspace.root, 'menu.txt'), latin1);
    const output = await workspace.call('edit_file', {
      path: 'menu.txt',
      oldString: 'naive',
      newString: 'simple',
    });
    expect(output.isError).toBe(true);
    expect(output.content).toContain('UTF-8');
    expect(output.content).toContain('line 1');
    expect(await bytesOf('menu.txt')).toEqual(latin1);
    // Text that does match (bytes that happen to be ASCII) changes nothing either.
    await workspace.call('edit_file', { path: 'menu.txt', oldString: 'caf', newString: 'bar' });
    expect(await bytesOf('menu.txt')).toEqual(latin1);
  });

  it('refuses truncated, overlong and surrogate sequences too', async () => {
    for (const bytes of [
      [0x61, 0xe2, 0x82],
      [0xc0, 0xaf],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
    ]) {
      const content = Buffer.from([0x61, 0x0a, ...bytes, 0x0a]);
      await writeFile(path.join(workspace.root, 'x.txt'), content);
      const output = await workspace.call('edit_file', { path: 'x.txt', oldString: 'a', newString: 'b' });
      expect(output.isError, String(bytes)).toBe(true);
      expect(await bytesOf('x.txt')).toEqual(content);
    }
  });

  it('edits UTF-8 with a BOM and multi-byte characters byte for byte', async () => {
    const original = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('Grüße 👋\nzwei\n')]);
    await writeFile(path.join(workspace.root, 'u.txt'), original);
    const output = await workspace.call('edit_file', { path: 'u.txt', oldString: 'zwei', newString: 'drei' });
    expect(output.isError).toBe(false);
    expect(await bytesOf('u.txt')).toEqual(
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('Grüße 👋\ndrei\n')]),
    );
  });

  it('matches \\n in oldString against CRLF line breaks and writes newString with CRLF', async () => {
    await writeFile(path.join(workspace.root, 'w.ts'), 'one\r\ntwo\r\nthree\r\n');
    const output = await workspace.call('edit_file', {
      path: 'w.ts',
      oldString: 'one\ntwo\n',
      newString: 'one\nuno\ntwo\n',
    });
    expect(output.isError).toBe(false);
    expect((await bytesOf('w.ts')).toString('latin1')).toBe('one\r\nuno\r\ntwo\r\nthree\r\n');
    // A one-line oldString with a multi-line newString keeps CRLF as well.
    await workspace.call('edit_file', { path: 'w.ts', oldString: 'three', newString: 'three\nfour' });
    expect((await bytesOf('w.ts')).toString('latin1')).toBe('one\r\nuno\r\ntwo\r\nthree\r\nfour\r\n');
  });

  it('leaves LF files with LF line breaks', async () => {
    await writeFile(path.join(workspace.root, 'l.ts'), 'one\ntwo\n');
    await workspace.call('edit_file', { path: 'l.ts', oldString: 'one\n', newString: 'one\nhalf\n' });
    expect((await bytesOf('l.ts')).toString('latin1')).toBe('one\nhalf\ntwo\n');
  });
});
