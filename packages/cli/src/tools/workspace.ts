import { realpathSync, statSync } from 'node:fs';
import { lstat, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { AgentError, type ToolOutput } from '@youyou/agent';

/** What every workspace tool shares: the root it is confined to, what it must not see, whether it may write. */
export interface Workspace {
  /** The workspace root, already passed through realpath. */
  readonly root: string;
  /**
   * Absolute paths the tools neither read, list nor write, as the shell's sandbox hides them (credential
   * folders): each as given and as its real path when it exists. Those that contain the root are left out.
   */
  readonly hidden: readonly string[];
  /** `--sandbox read-only`: write_file and edit_file refuse, as the shell cannot write either. */
  readonly readOnly: boolean;
}

/** What `openWorkspace` takes besides the root. */
export interface WorkspaceLimits {
  /** Absolute paths hidden from the tools (sandbox.hiddenPaths); default none. */
  hiddenPaths?: readonly string[];
  /** Refuse every write (default false). */
  readOnly?: boolean;
}

/** A path checked against the workspace: either the real path to act on or the error result to return. */
export type ResolvedPath = { ok: true; path: string } | { ok: false; output: ToolOutput };

/** Symlinks followed while resolving one path before giving up (Linux's own limit). */
const MAX_SYMLINK_HOPS = 40;

/** The workspace for `root`; throws AgentError INVALID_CONFIG when the root is not an existing directory. */
export function openWorkspace(root: string, limits: WorkspaceLimits = {}): Workspace {
  let real: string;
  try {
    real = realpathSync(path.resolve(root));
  } catch (error) {
    throw new AgentError({
      code: 'INVALID_CONFIG',
      message: `workspace root '${root}' does not exist`,
      cause: error,
    });
  }
  if (!statSync(real).isDirectory()) {
    throw new AgentError({ code: 'INVALID_CONFIG', message: `workspace root '${root}' is not a directory` });
  }
  return {
    root: real,
    hidden: hiddenBelow(real, limits.hiddenPaths ?? []),
    readOnly: limits.readOnly === true,
  };
}

/**
 * The hidden paths as given and, for those that exist, as real paths (a hidden folder reached through a
 * symlink is hidden too). Like the shell's sandbox, a hidden path that contains the root is left out: hiding
 * it would hide the whole workspace.
 */
function hiddenBelow(root: string, hiddenPaths: readonly string[]): string[] {
  const hidden = new Set<string>();
  for (const given of hiddenPaths) {
    if (!path.isAbsolute(given)) continue;
    for (const candidate of [path.resolve(given), realpathOrUndefined(given)]) {
      if (candidate !== undefined && !isInside(candidate, root)) hidden.add(candidate);
    }
  }
  return [...hidden];
}

function realpathOrUndefined(candidate: string): string | undefined {
  try {
    return realpathSync(candidate);
  } catch {
    return undefined;
  }
}

/** True when `real` (a real path) is a hidden path or lies below one. */
export function isHidden(workspace: Workspace, real: string): boolean {
  return workspace.hidden.some((hidden) => isInside(hidden, real));
}

/** The message for a path the tools must not see. */
export function hiddenPathText(given: string): string {
  return (
    `'${given}' is hidden from the tools: it holds credentials (the shell's sandbox hides it too; see ` +
    'sandbox.hiddenPaths in config.json); work with other files'
  );
}

/** An error result for the model; the message should say what to fix. */
export function failure(message: string): ToolOutput {
  return { content: message, isError: true };
}

/** A successful result. */
export function success(content: string): ToolOutput {
  return { content, isError: false };
}

/** The arguments object of a call (the core has validated it against the schema; this only narrows the type). */
export function argumentsOf(input: { arguments: unknown }): Record<string, unknown> {
  const value = input.arguments;
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** `error.code` of a Node system error, or undefined. */
export function errorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  const code = (error as { code: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** The short text of an error, for a result message. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** True when `candidate` (a real path) is the root or lies below it. */
export function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return (
    relative === '' ||
    (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
  );
}

/** `absolute` relative to the root, as tools show paths (`.` for the root itself). */
export function displayPath(workspace: Workspace, absolute: string): string {
  return path.relative(workspace.root, absolute) || '.';
}

/**
 * The real path of `target`, which need not exist: the longest existing prefix goes through realpath and the
 * missing rest is appended. A dangling symlink on the way is followed to where it points, so that creating a
 * file through it cannot land outside the root unnoticed.
 */
export async function realpathOfLongestPrefix(target: string): Promise<string> {
  let current = target;
  const missing: string[] = [];
  let hops = 0;
  for (;;) {
    try {
      return path.join(await realpath(current), ...missing);
    } catch (error) {
      const code = errorCode(error);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    }
    const stats = await lstat(current).catch(() => undefined);
    if (stats?.isSymbolicLink()) {
      hops += 1;
      if (hops > MAX_SYMLINK_HOPS) throw new Error(`too many levels of symbolic links in '${target}'`);
      // The link exists, so its folder does: resolve the link's text against that folder's real path.
      const folder = await realpath(path.dirname(current));
      current = path.resolve(folder, await readlink(current));
      continue;
    }
    const parent = path.dirname(current);
    if (parent === current) return path.join(current, ...missing);
    missing.unshift(path.basename(current));
    current = parent;
  }
}

/**
 * Resolves a path given by the model: relative paths against the root, then through realpath (of the longest
 * existing prefix, so new files are checked too). Anything that ends up outside the root is refused.
 */
export async function resolveInWorkspace(workspace: Workspace, given: string): Promise<ResolvedPath> {
  if (given.includes('\0')) return { ok: false, output: failure(`path '${given}' contains a NUL character`) };
  const absolute = path.resolve(workspace.root, given);
  let real: string;
  try {
    real = await realpathOfLongestPrefix(absolute);
  } catch (error) {
    return { ok: false, output: failure(`cannot resolve path '${given}': ${errorText(error)}`) };
  }
  if (!isInside(workspace.root, real)) {
    return {
      ok: false,
      output: failure(
        `path '${given}' is outside the workspace root '${workspace.root}'; use a path inside the workspace`,
      ),
    };
  }
  if (isHidden(workspace, real)) return { ok: false, output: failure(hiddenPathText(given)) };
  return { ok: true, path: real };
}

/** The message of a write refused because the session is read-only. */
export function readOnlyText(tool: string): string {
  return (
    `${tool} refused: this session runs with --sandbox read-only, so no tool changes files; ` +
    'say what you would change instead, or ask the user to restart with --sandbox workspace-write'
  );
}

/** The message for a path that is a FIFO, socket or device: reading one could block forever. */
export function notRegularFile(given: string): string {
  return `'${given}' is not a regular file (a FIFO, socket or device); only regular files can be used`;
}

/** True when the buffer holds a NUL byte, the sign of a binary file. */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.includes(0);
}

/** A text cut to `limit` characters with a note saying how much was left out. */
export function cutLine(text: string, limit: number): string {
  if (text.length <= limit) return text;
  return `${text.slice(0, limit)} … [line cut: ${text.length - limit} more characters]`;
}

/** The workspace tools whose `path` argument names what they act on. */
const PATH_TOOLS: ReadonlySet<string> = new Set([
  'read_file',
  'write_file',
  'edit_file',
  'list_dir',
  'grep',
  'glob',
]);

/**
 * The path a workspace tool's call will really act on, for approval rules: its `path` argument with every
 * symlink resolved, relative to the root with `/` separators (`.` for the root), or absolute when it lies
 * outside (no relative glob matches it; the tool refuses it anyway). Undefined for other tools and calls
 * without a path.
 */
export async function touchedPath(options: {
  workspace: Workspace;
  toolName: string;
  args: unknown;
}): Promise<string | undefined> {
  if (!PATH_TOOLS.has(options.toolName)) return undefined;
  const given = argumentsOf({ arguments: options.args }).path;
  if (typeof given !== 'string' || given === '' || given.includes('\0')) return undefined;
  const { workspace } = options;
  const real = await realpathOfLongestPrefix(path.resolve(workspace.root, given));
  if (!isInside(workspace.root, real)) return real;
  return path.relative(workspace.root, real).split(path.sep).join('/') || '.';
}
