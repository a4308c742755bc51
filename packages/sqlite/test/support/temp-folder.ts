import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh folder under the system temp folder, and how to remove it with everything in it. */
export interface TempFolder {
  path: string;
  /** The path of a file inside the folder. */
  file(name: string): string;
  remove(): Promise<void>;
}

/** Makes a fresh temp folder (fs.mkdtemp), so parallel test files never share a database file. */
export async function makeTempFolder(prefix = 'youyou-sqlite-'): Promise<TempFolder> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return {
    path,
    file: (name) => join(path, name),
    remove: () => rm(path, { recursive: true, force: true }),
  };
}
