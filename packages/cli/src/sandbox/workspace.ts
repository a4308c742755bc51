/**
 * What stays read-only inside a writable workspace: the files that a later, unsandboxed program would run or
 * obey. Git runs `core.fsmonitor`, hooks and the like from the repository's config when the user next types
 * `git status`; youyou loads `AGENTS.md`, `.youyou/` and `.agents/` as instructions and skills in the next
 * session. A command in the sandbox must not be able to plant either.
 */
import { lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import path from 'node:path';

/** The agent configuration of a workspace that the next session loads: read-only for the shell. */
export const AGENT_CONFIG_NAMES: readonly string[] = ['AGENTS.md', '.youyou', '.agents'];

/** The parts of a git directory that hold configuration or code git runs: read-only for the shell. */
const GIT_CONTROL_NAMES = ['config', 'hooks', 'info'] as const;

/** How deep submodule git directories are looked for under `.git/modules` (names may contain `/`). */
const MODULES_DEPTH = 4;

/** The mounts that keep a writable workspace's git metadata and agent configuration read-only. */
export interface WorkspaceProtection {
  /**
   * Folders bound onto themselves, still writable: a mount point cannot be renamed or removed, so `.git`
   * cannot be moved aside and replaced by a folder with a config of the command's making.
   */
  pinned: string[];
  /** Existing files and folders bound read-only, after `pinned`. */
  readOnly: string[];
}

/** True when `inner` is `outer` or lies inside it. */
function isWithin(inner: string, outer: string): boolean {
  const relative = path.relative(outer, inner);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

function kindOf(candidate: string): 'file' | 'directory' | 'other' | undefined {
  try {
    const stats = lstatSync(candidate);
    if (stats.isDirectory()) return 'directory';
    return stats.isFile() ? 'file' : 'other';
  } catch {
    return undefined;
  }
}

function realOrUndefined(candidate: string): string | undefined {
  try {
    return realpathSync(candidate);
  } catch {
    return undefined;
  }
}

/** The folder a `.git` file points at (`gitdir: PATH`, relative to the file's folder), or undefined. */
function gitdirOfFile(file: string): string | undefined {
  try {
    const match = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(file, 'utf8').slice(0, 4096));
    return match?.[1] === undefined ? undefined : path.resolve(path.dirname(file), match[1]);
  } catch {
    return undefined;
  }
}

/** The repository around `start`, as git finds it: the nearest `.git` folder or `gitdir:` file upwards. */
function findDotGit(
  start: string,
): { dotGit: string; worktree: string; kind: 'file' | 'directory' } | undefined {
  let folder = start;
  for (;;) {
    const candidate = path.join(folder, '.git');
    // Git follows a symlinked .git; its target is what needs protecting.
    const real = realOrUndefined(candidate);
    const kind = real === undefined ? undefined : kindOf(real);
    if (real !== undefined && (kind === 'file' || kind === 'directory'))
      return { dotGit: real, worktree: folder, kind };
    const parent = path.dirname(folder);
    if (parent === folder) return undefined;
    folder = parent;
  }
}

/** The git directory and, for a linked worktree, the common one (`commondir`) that holds config and hooks. */
function gitDirectories(gitDir: string): string[] {
  const folders = [gitDir];
  try {
    const common = readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim();
    if (common !== '') folders.push(path.resolve(gitDir, common));
  } catch {
    // Not a linked worktree.
  }
  return folders;
}

/** Submodule git directories under `modules/` (each has a HEAD), to `MODULES_DEPTH` levels. */
function submoduleGitDirs(modules: string, depth: number): string[] {
  if (depth === 0 || kindOf(modules) !== 'directory') return [];
  const found: string[] = [];
  let entries: string[] = [];
  try {
    entries = readdirSync(modules);
  } catch {
    return [];
  }
  for (const entry of entries) {
    const folder = path.join(modules, entry);
    if (kindOf(folder) !== 'directory') continue;
    if (kindOf(path.join(folder, 'HEAD')) === 'file') found.push(folder);
    else found.push(...submoduleGitDirs(folder, depth - 1));
  }
  return found;
}

/** The value of `key` (lower case, no section) in a git config file, or undefined. */
function configValue(configFile: string, key: string): string | undefined {
  try {
    const text = readFileSync(configFile, 'utf8').slice(0, 256 * 1024);
    return new RegExp(`^\\s*${key}\\s*=\\s*"?([^"\\n]+?)"?\\s*$`, 'im').exec(text)?.[1];
  } catch {
    return undefined;
  }
}

/** Linked worktrees' git folders (`worktrees/NAME`) and the `.git` files they name (their `gitdir` file). */
function linkedWorktrees(gitDir: string): { gitDir: string; dotGitFile: string | undefined }[] {
  const folder = path.join(gitDir, 'worktrees');
  let names: string[] = [];
  try {
    names = readdirSync(folder);
  } catch {
    return [];
  }
  return names.map((name) => {
    const linked = path.join(folder, name);
    let dotGitFile: string | undefined;
    try {
      dotGitFile = readFileSync(path.join(linked, 'gitdir'), 'utf8').trim() || undefined;
    } catch {
      dotGitFile = undefined;
    }
    return { gitDir: linked, dotGitFile };
  });
}

/**
 * The mounts that protect the repository around the workspace (found as git finds it: the workspace may be
 * below the repository's root, or hold a `.git` file pointing elsewhere) and the workspace's agent
 * configuration. Only what lies inside the writable `root` needs them; the rest is read-only already.
 * Paths are real paths. `hooks` and `info` missing from a git directory inside the workspace are created
 * first (as `git init` would), so that they can be bound read-only.
 */
export function workspaceProtection(root: string): WorkspaceProtection {
  const pinned = new Set<string>();
  const readOnly = new Set<string>();
  const protect = (candidate: string | undefined): void => {
    const real = candidate === undefined ? undefined : realOrUndefined(candidate);
    if (real !== undefined && isWithin(real, root) && real !== root) readOnly.add(real);
  };
  const found = findDotGit(root);
  if (found !== undefined) {
    const { worktree } = found;
    const gitDir = found.kind === 'file' ? gitdirOfFile(found.dotGit) : found.dotGit;
    if (found.kind === 'file') protect(found.dotGit);
    protect(path.join(worktree, '.gitmodules'));
    const directories = gitDir === undefined ? [] : gitDirectories(gitDir);
    for (const directory of [...directories])
      directories.push(...submoduleGitDirs(path.join(directory, 'modules'), MODULES_DEPTH));
    for (const directory of directories) {
      const real = realOrUndefined(directory);
      if (real === undefined) continue;
      // A hooks folder of the worktree (`core.hooksPath=.husky`) is as dangerous as .git/hooks.
      const hooksPath = configValue(path.join(real, 'config'), 'hookspath');
      if (hooksPath !== undefined) protect(path.resolve(worktree, hooksPath));
      // A submodule's checkout (`core.worktree`): its `.git` file must keep pointing here.
      const checkout = configValue(path.join(real, 'config'), 'worktree');
      if (checkout !== undefined) {
        protect(path.join(path.resolve(real, checkout), '.git'));
        protect(path.join(path.resolve(real, checkout), '.gitmodules'));
      }
      for (const linked of linkedWorktrees(real)) {
        protect(linked.dotGitFile);
        protect(path.join(linked.gitDir, 'config.worktree'));
        const linkedReal = realOrUndefined(linked.gitDir);
        if (linkedReal !== undefined && isWithin(linkedReal, root)) pinned.add(linkedReal);
      }
      if (!isWithin(real, root) || real === root) continue;
      pinned.add(real);
      protect(path.join(real, 'config.worktree'));
      for (const name of GIT_CONTROL_NAMES) {
        const part = path.join(real, name);
        // A missing hooks or info folder would otherwise be created by the command, writable.
        if (name !== 'config' && kindOf(part) === undefined) {
          try {
            mkdirSync(part);
          } catch {
            continue;
          }
        }
        protect(part);
      }
    }
  }
  for (const name of AGENT_CONFIG_NAMES) protect(path.join(root, name));
  return { pinned: [...pinned], readOnly: [...readOnly] };
}

/** The agent configuration names missing from the workspace root before a command runs. */
export function absentAgentConfig(root: string): string[] {
  return AGENT_CONFIG_NAMES.filter((name) => kindOf(path.join(root, name)) === undefined);
}

/**
 * Removes what a sandboxed command created under the names that were `absent` before it ran: a read-only
 * bind needs something to bind, so a missing `AGENTS.md`, `.youyou/` or `.agents/` cannot be protected by a
 * mount without leaving an empty one in the user's folder. Every process of the command has ended by now
 * (its PID namespace died with it), so nothing recreates them. A symlink is removed, never followed.
 * Returns the names removed.
 */
export function removeCreatedAgentConfig(root: string, absent: readonly string[]): string[] {
  const removed: string[] = [];
  for (const name of absent) {
    const target = path.join(root, name);
    if (kindOf(target) === undefined) continue;
    rmSync(target, { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}
