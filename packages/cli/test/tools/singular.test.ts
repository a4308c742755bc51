import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { describeOutput } from '../../src/chat/format.js';
import { makeWorkspace, type TestWorkspace } from './helpers.js';

let workspace: TestWorkspace;

beforeEach(async () => {
  workspace = await makeWorkspace();
});

afterEach(() => workspace.cleanup());

test('a count of one is said in the singular: 1 line, 1 byte, 1 entry', async () => {
  expect(describeOutput({ content: 'one line\n', isError: false })).toBe('1 line');
  expect(describeOutput({ content: 'a\nb\n', isError: false })).toBe('2 lines');
  await writeFile(path.join(workspace.root, 'one.txt'), 'only\n');
  const past = await workspace.call('read_file', { path: 'one.txt', startLine: 5 });
  expect(past.content).toContain('has only 1 line;');
  const written = await workspace.call('write_file', { path: 'w.txt', content: 'x' });
  expect(written.content).toContain('(1 byte written)');
  await mkdir(path.join(workspace.root, 'single'));
  await writeFile(path.join(workspace.root, 'single', 'f'), 'y');
  const listed = await workspace.call('list_dir', { path: 'single' });
  expect(listed.content).toBe('single/ (1 entry)\nf  (1 byte)');
});
