import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import stringWidth from 'string-width';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { callLines } from '../src/chat/approval-question.js';

let workspace: string;

beforeEach(async () => {
  workspace = await mkdtemp(path.join(tmpdir(), 'youyou-question-'));
});

afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

function lines(toolName: string, args: unknown, columns = 40): string[] {
  return callLines({ request: { callId: 'c', toolName, arguments: args }, workspace, columns, color: false });
}

describe('what the approval question shows of a call', () => {
  test('a shell command: every line, wrapped to the width, controls escaped, nothing cut', () => {
    const command = `printf '${'x'.repeat(70)}'\nrm -rf build\x1b[2K\r`;
    const shown = lines('shell', { command, timeoutMs: 5000 });
    for (const line of shown) expect(stringWidth(line)).toBeLessThanOrEqual(39);
    const text = shown.map((line) => line.slice(4)).join('');
    expect(text).toContain(`printf '${'x'.repeat(70)}'`);
    expect(text).toContain('rm -rf build\\e[2K\\r');
    expect(text).toContain('timeoutMs: 5000');
    expect(shown.join('\n')).not.toContain('\x1b');
  });

  test('write_file: a new file is all additions; an existing one a diff against the disk', async () => {
    expect(lines('write_file', { path: 'new.txt', content: 'a\nb\n' })).toEqual([
      '  │ new.txt (new file)',
      '  │ @@ -0,0 +1,2 @@',
      '  │ +a',
      '  │ +b',
    ]);
    await writeFile(path.join(workspace, 'old.txt'), 'one\r\ntwo\r\n');
    expect(lines('write_file', { path: 'old.txt', content: 'one\nTWO\n' })).toEqual([
      '  │ old.txt (replaces the file)',
      '  │ @@ -1,2 +1,2 @@',
      '  │  one',
      '  │ -two',
      '  │ +TWO',
    ]);
  });

  test('edit_file: the replacement as a diff of the file; a missing text still shows what was asked', async () => {
    await writeFile(path.join(workspace, 'a.ts'), 'const a = 1;\nconst b = 2;\n');
    expect(lines('edit_file', { path: 'a.ts', oldString: 'b = 2', newString: 'b = 3' })).toEqual([
      '  │ a.ts',
      '  │ @@ -1,2 +1,2 @@',
      '  │  const a = 1;',
      '  │ -const b = 2;',
      '  │ +const b = 3;',
    ]);
    const missing = lines('edit_file', { path: 'a.ts', oldString: 'zzz', newString: 'yyy' }, 100);
    expect(missing[0]).toContain('not in the file');
    expect(missing).toContain('  │ -zzz');
    expect(missing).toContain('  │ +yyy');
  });

  test('a file outside the workspace is never read to show a diff', async () => {
    const outside = await mkdtemp(path.join(tmpdir(), 'youyou-outside-'));
    await writeFile(path.join(outside, 'secret.txt'), 'top secret\n');
    const shown = lines('write_file', { path: path.join(outside, 'secret.txt'), content: 'x\n' }, 200);
    expect(shown.join('\n')).not.toContain('top secret');
    await rm(outside, { recursive: true, force: true });
  });

  test('any other tool: its arguments as JSON, escaped', () => {
    expect(lines('fx__post', { url: 'http://x', body: 'hi\x1b]0;t\x07' }, 80)).toEqual([
      '  │ {',
      '  │   "url": "http://x",',
      '  │   "body": "hi\\u001b]0;t\\u0007"',
      '  │ }',
    ]);
  });
});
