import { readFile } from 'node:fs/promises';
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

/**
 * The layers that apply at `start` from the folders above it, from the workspace root down: `.git/info/exclude`
 * and the `.gitignore` of the root and of every folder down to `start` itself. A start folder that these rules
 * ignore was named on purpose, so its ancestors' rules are dropped and only its own (and deeper) ones apply.
 */
export async function layersAbove(root: string, start: string): Promise<IgnoreLayer[]> {
  const folders = [root];
  const relative = path.relative(root, start);
  if (relative !== '' && !relative.startsWith('..')) {
    let current = root;
    for (const part of relative.split(path.sep)) {
      current = path.join(current, part);
      folders.push(current);
    }
  }
  const layers: IgnoreLayer[] = [];
  const exclude = await readIgnoreLayer(root, path.join(root, '.git', 'info', 'exclude'));
  if (exclude !== undefined) layers.push(exclude);
  for (const folder of folders.slice(0, -1)) {
    const layer = await readIgnoreLayer(folder, path.join(folder, '.gitignore'));
    if (layer !== undefined) layers.push(layer);
  }
  const kept = start !== root && isIgnored(layers, start, true) ? [] : layers;
  const own = await readIgnoreLayer(start, path.join(start, '.gitignore'));
  return own === undefined ? kept : [...kept, own];
}
