import { stat, writeFile } from 'node:fs/promises';
import { isAgentError } from '@youyou/agent';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { openSqliteStorage } from '../src/index.js';
import { makeTempFolder, type TempFolder } from './support/temp-folder.js';

let folder: TempFolder;
let umask: number;

beforeEach(async () => {
  folder = await makeTempFolder();
  // A permissive umask, as many systems have: the files must be private all the same.
  umask = process.umask(0o002);
});

afterEach(async () => {
  process.umask(umask);
  await folder.remove();
});

async function modeOf(file: string): Promise<number> {
  return (await stat(file)).mode & 0o777;
}

test('a new database and its WAL and SHM files are readable by their owner only', async () => {
  const file = folder.file('private.db');
  const storage = await openSqliteStorage(file);
  try {
    for (const name of [file, `${file}-wal`, `${file}-shm`]) expect(await modeOf(name), name).toBe(0o600);
  } finally {
    await storage.close();
  }
});

test('fileMode chooses the mode of a new file; an existing file keeps its own', async () => {
  const shared = folder.file('shared.db');
  const storage = await openSqliteStorage(shared, { fileMode: 0o640 });
  await storage.close();
  expect(await modeOf(shared)).toBe(0o640);

  const existing = folder.file('existing.db');
  await writeFile(existing, '', { mode: 0o664 });
  const reopened = await openSqliteStorage(existing);
  await reopened.close();
  expect(await modeOf(existing)).toBe(0o664);
});

test('a fileMode that is not permission bits is refused', async () => {
  for (const fileMode of [-1, 0o1000, 1.5]) {
    const error = await openSqliteStorage(folder.file('x.db'), { fileMode }).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(isAgentError(error) && error.code).toBe('INVALID_CONFIG');
  }
});
