/**
 * One checkpoint snapshot: the workspace's files listed as git sees them (its `.gitignore` files honoured), what
 * the size limits, unreadable files and links on the way leave out, and the rest written to the shadow store's
 * index and from there to a git tree. The store (checkpoints.ts) decides when; this is what one records.
 */
import path from 'node:path';
import {
  behindLink,
  lstatOrUndefined,
  nulJoined,
  readable,
  type ShadowGit,
  zList,
} from './checkpoint-git.js';

/** What a snapshot leaves out by size. */
export interface CheckpointLimits {
  /** A file larger than this is not recorded (nor restored). */
  maxFileBytes: number;
  /** Files are recorded in path order until their sizes add up to this; the rest are left out. */
  maxTotalBytes: number;
}

/** 10 MiB per file, 256 MiB per snapshot. */
export const DEFAULT_CHECKPOINT_LIMITS: CheckpointLimits = {
  maxFileBytes: 10 * 1024 * 1024,
  maxTotalBytes: 256 * 1024 * 1024,
};

/** One recorded state: a git tree, and the paths left out of it. */
export interface Snapshot {
  tree: string;
  /** Left out by the limits, being unreadable or lying behind a link. */
  skipped: string[];
  /** Those of `skipped` that lie behind a link: no file of the workspace is at that path. */
  linked: string[];
  /** Left out by the `.gitignore` files (a folder ends in `/`). */
  ignored: string[];
}

/**
 * Records `workspace`'s state now in `git`'s index and answers its tree, with what was left out and why. A file
 * past `limits` stays out of the index (dropped from it if an earlier snapshot had it), so the tree never
 * holds a stale copy of it.
 */
export async function takeSnapshot(
  git: ShadowGit,
  workspace: string,
  limits: CheckpointLimits,
): Promise<Snapshot> {
  const listed = zList(await git.run(['ls-files', '-z', '--cached', '--others', '--exclude-standard']));
  const ignoredTracked = zList(
    await git.run(['ls-files', '-z', '--cached', '--ignored', '--exclude-standard']),
  );
  const ignored = zList(
    await git.run(['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory']),
  );
  const update: string[] = [];
  const skipped: string[] = [];
  const linked: string[] = [];
  let total = 0;
  const folders = new Map<string, boolean>();
  for (const relative of [...new Set(listed)].sort()) {
    // A folder holding a repository of its own is listed as `dir/`: its files are that repository's.
    if (relative.endsWith('/')) continue;
    if (behindLink(workspace, relative, folders)) {
      skipped.push(relative);
      linked.push(relative);
      continue;
    }
    const stats = lstatOrUndefined(path.join(workspace, relative));
    const size = stats?.isFile() === true ? stats.size : 0;
    const tooLarge = size > limits.maxFileBytes || total + size > limits.maxTotalBytes;
    if (tooLarge || (stats?.isFile() === true && !readable(path.join(workspace, relative)))) {
      skipped.push(relative);
      continue;
    }
    total += size;
    update.push(relative);
  }
  // Removals first: a link that replaced a folder cannot be added while the folder's files are indexed.
  const dropped = [...skipped, ...ignoredTracked];
  if (dropped.length > 0) {
    await git.run(['update-index', '-z', '--force-remove', '--stdin'], { input: nulJoined(dropped) });
  }
  if (update.length > 0) {
    await git.run(['update-index', '-z', '--add', '--remove', '--replace', '--stdin'], {
      input: nulJoined(update),
    });
  }
  const tree = (await git.run(['write-tree'])).toString('utf8').trim();
  return { tree, skipped, linked, ignored: [...new Set([...ignored, ...ignoredTracked])] };
}

/** The paths of the workspace a snapshot did not record (what lies behind a link is elsewhere). */
export function leftOutOf(snapshot: Snapshot): string[] {
  const linked = new Set(snapshot.linked);
  return [...snapshot.skipped.filter((entry) => !linked.has(entry)), ...snapshot.ignored];
}
