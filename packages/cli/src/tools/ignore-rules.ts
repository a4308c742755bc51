import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';

/**
 * The `.gitignore` rules a walk honours, as git applies them: each file's patterns are relative to its folder,
 * a deeper file's rules come after its parents' (so `!name` there can bring a name back), and the last rule
 * that matches decides.
 */

/** The rules of one `.gitignore` file (or `.git/info/exclude`) and the folder its patterns are relative to. */
export interface IgnoreLayer {
  /** The absolute folder the patterns are relative to. */
  folder: string;
  rules: Ignore;
}

/** Files longer than this are not read as rules: a real .gitignore is a few KiB. */
const MAX_RULES_BYTES = 1024 * 1024;

/** The layer for the ignore file `file`, whose patterns are relative to `folder`; undefined when it is unreadable. */
export async function readIgnoreLayer(folder: string, file: string): Promise<IgnoreLayer | undefined> {
  let text: string;
  try {
    const bytes = await readFile(file);
    if (bytes.length > MAX_RULES_BYTES) return undefined;
    text = bytes.toString('utf8');
  } catch {
    return undefined;
  }
  return { folder, rules: ignore().add(text.split(/\r?\n/)) };
}

/**
 * Whether the entry at `absolute` (a folder when `isFolder`) is ignored by the layers, outermost first: a later
 * layer's match, ignoring or bringing back, overrides an earlier one's.
 */
export function isIgnored(layers: readonly IgnoreLayer[], absolute: string, isFolder: boolean): boolean {
  let ignored = false;
  for (const layer of layers) {
    const relative = path.relative(layer.folder, absolute).split(path.sep).join('/');
    if (relative === '' || relative.startsWith('..')) continue;
    const result = layer.rules.test(isFolder ? `${relative}/` : relative);
    if (result.ignored) ignored = true;
    else if (result.unignored) ignored = false;
  }
  return ignored;
}

/** The nearest folder at or above `folder` that holds `.git` (a folder, or a file for a worktree), if any. */
async function repositoryRoot(folder: string): Promise<string | undefined> {
  let current = folder;
  for (;;) {
    if (
      await stat(path.join(current, '.git')).then(
        () => true,
        () => false,
      )
    )
      return current;
    const parent = path.dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

/** `top`, the folders between it and `bottom`, and `bottom` (which lies at or below `top`). */
function foldersDown(top: string, bottom: string): string[] {
  const folders = [top];
  const relative = path.relative(top, bottom);
  if (relative === '' || relative.startsWith('..')) return folders;
  let current = top;
  for (const part of relative.split(path.sep)) {
    current = path.join(current, part);
    folders.push(current);
  }
  return folders;
}

/**
 * The layers that apply at `start` from the folders above it, as git reads them: `.git/info/exclude` and the
 * `.gitignore` of every folder from the repository's top (the workspace root when it is in no repository) down
 * to `start` itself. A start folder that these rules ignore was named on purpose, so its ancestors' rules are
 * dropped and only its own (and deeper) ones apply.
 */
export async function layersAbove(root: string, start: string): Promise<IgnoreLayer[]> {
  const top = (await repositoryRoot(root)) ?? root;
  let layers: IgnoreLayer[] = [];
  const exclude = await readIgnoreLayer(top, path.join(top, '.git', 'info', 'exclude'));
  if (exclude !== undefined) layers.push(exclude);
  const add = async (folders: string[]): Promise<void> => {
    for (const folder of folders) {
      const layer = await readIgnoreLayer(folder, path.join(folder, '.gitignore'));
      if (layer !== undefined) layers.push(layer);
    }
  };
  await add(foldersDown(top, root).slice(0, -1));
  // A workspace inside an ignored folder of its repository (a build output, say) is searched all the same.
  if (root !== top && isIgnored(layers, root, true)) layers = [];
  await add(foldersDown(root, start).slice(0, -1));
  if (start !== root && isIgnored(layers, start, true)) layers = [];
  await add([start]);
  return layers;
}
