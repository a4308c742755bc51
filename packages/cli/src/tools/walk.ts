import type { Dirent } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { entryPath, listingPath, type OpenedInside, openInside } from './confined-fs.js';
import { type IgnoreLayer, isIgnored, layersAbove, readIgnoreLayer } from './ignore-rules.js';
import { isHidden, isInside, type Workspace } from './workspace.js';

/** Folders a walk does not enter unless it starts inside them: dependencies and version-control data. */
export const SKIPPED_FOLDERS: ReadonlySet<string> = new Set(['node_modules', '.git']);

/** A file found by a walk. */
export interface WalkedFile {
  /** The file's path, absolute (symlinks inside the root are yielded at their own path). */
  absolute: string;
  /** The path relative to the folder the walk started in, with `/` separators. */
  relative: string;
}

/** A folder still to be read, with the ignore rules that apply inside it. */
interface PendingFolder {
  relative: string;
  layers: IgnoreLayer[];
}

/**
 * Every file below `start`, depth first in name order, skipping SKIPPED_FOLDERS, unreadable folders and what
 * the `.gitignore` files of the workspace ignore (those above `start` and every one met on the way, as git
 * reads them; see ignore-rules.ts) and the workspace's hidden paths. Symlinks are yielded when they point to a
 * file inside the root; symlinked folders are not entered, which keeps the walk inside the root and free of
 * cycles. Each folder is opened from the root without following symlinks and listed through its descriptor
 * (confined-fs.ts), so a folder swapped for a symlink while the walk runs is skipped, never followed; whoever
 * reads a yielded file opens it the same way. `start` is a real path inside the root. Stops early when the
 * signal fires.
 */
export async function* walkFiles(options: {
  workspace: Workspace;
  start: string;
  signal: AbortSignal;
}): AsyncGenerator<WalkedFile> {
  const pending: PendingFolder[] = [
    { relative: '', layers: await layersAbove(options.workspace.root, options.start) },
  ];
  while (pending.length > 0) {
    if (options.signal.aborted) return;
    const { relative: relativeFolder, layers: outerLayers } = pending.pop() as PendingFolder;
    const folder = path.join(options.start, relativeFolder);
    const listed = await listFolder(options.workspace, folder, relativeFolder === '');
    if (listed === undefined) continue;
    const { entries } = listed;
    const layers = listed.layer === undefined ? outerLayers : [...outerLayers, listed.layer];
    const folders: PendingFolder[] = [];
    for (const entry of entries) {
      const relative = relativeFolder === '' ? entry.name : `${relativeFolder}/${entry.name}`;
      const absolute = path.join(folder, entry.name);
      if (isHidden(options.workspace, absolute)) continue;
      if (entry.isDirectory()) {
        if (!SKIPPED_FOLDERS.has(entry.name) && !isIgnored(layers, absolute, true)) {
          folders.push({ relative, layers });
        }
      } else if (entry.isFile() || entry.isSymbolicLink()) {
        if (isIgnored(layers, absolute, false)) continue;
        if (entry.isFile() || (await isFileInside(options.workspace, absolute))) yield { absolute, relative };
      }
    }
    // Pushed in reverse so that they come off the stack in name order.
    for (let index = folders.length - 1; index >= 0; index -= 1)
      pending.push(folders[index] as PendingFolder);
  }
}

/**
 * The entries of a folder, sorted by name, read through a descriptor opened inside the workspace, and the
 * rules of its own `.gitignore` (not for the start folder, whose file is among the layers already).
 * Undefined when the folder cannot be opened there (gone, unreadable, or replaced by a symlink).
 */
async function listFolder(
  workspace: Workspace,
  folder: string,
  isStart: boolean,
): Promise<{ entries: Dirent[]; layer: IgnoreLayer | undefined } | undefined> {
  let opened: OpenedInside;
  try {
    opened = await openInside({ workspace, real: folder, purpose: 'folder' });
  } catch {
    return undefined;
  }
  try {
    const entries = await readdir(listingPath(opened), { withFileTypes: true });
    entries.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
    const hasRules = !isStart && entries.some((entry) => entry.name === '.gitignore' && entry.isFile());
    const layer = hasRules ? await readIgnoreLayer(folder, entryPath(opened, '.gitignore')) : undefined;
    return { entries, layer };
  } catch {
    return undefined;
  } finally {
    await opened.handle.close();
  }
}

async function isFileInside(workspace: Workspace, link: string): Promise<boolean> {
  try {
    const target = await realpath(link);
    return isInside(workspace.root, target) && !isHidden(workspace, target) && (await stat(target)).isFile();
  } catch {
    return false;
  }
}
