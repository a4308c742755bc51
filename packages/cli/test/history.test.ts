import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { HISTORY_SIZE, loadHistory, saveHistory } from '../src/chat/terminal.js';

let folder: string;

beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'youyou-history-'));
});

afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

test('the history file keeps one prompt per line, oldest first, and round-trips newlines and backslashes', async () => {
  const file = path.join(folder, 'nested', 'history');
  const entries = ['first', 'two\nlines', 'a \\n literal', 'last'];
  saveHistory(file, entries);
  expect(await readFile(file, 'utf8')).toBe('first\ntwo\\nlines\na \\\\n literal\nlast\n');
  expect(loadHistory(file)).toEqual(entries);
});

test('a missing file is an empty history, and only the newest entries are kept', () => {
  expect(loadHistory(path.join(folder, 'none'))).toEqual([]);
  const file = path.join(folder, 'history');
  saveHistory(
    file,
    Array.from({ length: HISTORY_SIZE + 5 }, (_, index) => `prompt ${index}`),
  );
  const loaded = loadHistory(file);
  expect(loaded).toHaveLength(HISTORY_SIZE);
  expect(loaded[0]).toBe('prompt 5');
});
