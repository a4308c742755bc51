import type { Dirent } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { isInside, type Workspace } from './workspace.js';

/** Folders a walk does not enter unless it starts inside them: dependencies and version-control data. */
export const SKIPPED_FOLDERS: ReadonlySet<string> = new Set(['node_modules', '.git']);

/** A file found by a walk. */
export interface WalkedFile {
  /** The file's path, absolute (symlinks inside the root are yielded at their own path). */
  absolute: string;
  /** The path relative to the folder the walk started in, with `/` separators. */
  relative: string;
}

/**
 * Every file below `start`, depth first in name order, skipping SKIPPED_FOLDERS and unreadable folders.
 * Symlinks are yielded when they point to a file inside the root; symlinked folders are not entered, which
 * keeps the walk inside the root and free of cycles. Stops early when the signal fires.
 */
export async function* walkFiles(options: {
  workspace: Workspace;
  start: string;
  signal: AbortSignal;
}): AsyncGenerator<WalkedFile> {
  const pending: string[] = [''];
  while (pending.length > 0) {
    if (options.signal.aborted) return;
    const relativeFolder = pending.pop() as string;
    const folder = path.join(options.start, relativeFolder);
    let entries: Dirent[];
    try {
      entries = await readdir(folder, { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
    const folders: string[] = [];
    for (const entry of entries) {
      const relative = relativeFolder === '' ? entry.name : `${relativeFolder}/${entry.name}`;
      const absolute = path.join(folder, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_FOLDERS.has(entry.name)) folders.push(relative);
      } else if (entry.isFile()) {
        yield { absolute, relative };
      } else if (entry.isSymbolicLink() && (await isFileInside(options.workspace, absolute))) {
        yield { absolute, relative };
      }
    }
    // Pushed in reverse so that they come off the stack in name order.
    for (let index = folders.length - 1; index >= 0; index -= 1) pending.push(folders[index] as string);
  }
}

async function isFileInside(workspace: Workspace, link: string): Promise<boolean> {
  try {
    const target = await realpath(link);
    return isInside(workspace.root, target) && (await stat(target)).isFile();
  } catch {
    return false;
  }
}
