/**
 * Opening files so that a tool never acts outside the workspace, even while something renames folders under
 * it. The tools run in the CLI's own process, outside the shell's sandbox, while a sandboxed command may swap
 * a workspace folder for a symlink to a folder outside (renameat2 RENAME_EXCHANGE in a loop): a realpath
 * check followed by an open by name loses that race.
 *
 * Why this way: Node has no openat(2), but on Linux `/proc/self/fd/N/name` names `name` inside the folder
 * open as descriptor N, whatever path that folder has now: the kernel jumps straight to the descriptor's
 * folder and resolves only `name`. So a path is opened one component at a time from a descriptor of the
 * root, each component with O_NOFOLLOW (a component that has become a symlink fails with ELOOP or ENOTDIR
 * instead of being followed), and missing folders and new files are created the same way, relative to the
 * held folder, a new file with O_CREAT|O_EXCL (never through a symlink). Every read and write then goes
 * through the final descriptor, which cannot be redirected any more. On top of that, the descriptor's real
 * path (readlink of /proc/self/fd/N, the path the kernel actually walked) is checked to lie inside the root
 * and outside the hidden paths before a byte is read or written.
 *
 * Symlinks that stay inside the workspace keep working: callers first resolve the given path with realpath
 * (`resolveInWorkspace`), then open the real path this way; if a component changed in between, the open
 * fails and the tool says so instead of acting. The sandboxed shell cannot move a folder out of the
 * workspace (renaming across its mount fails with EXDEV), so a held descriptor stays inside.
 *
 * Running the tools inside bubblewrap instead was not chosen: it would cost a process per call (40 parallel
 * reads per step), and danger-full-access or a machine without bwrap would lose the confinement altogether.
 * Where /proc/self/fd does not exist (not Linux), children are named by path: the shell is never sandboxed
 * there (bubblewrap is Linux-only), so a race gains an attacker nothing the shell does not already give.
 */
import { constants, existsSync, type Stats } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, readdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import {
  errorCode,
  hiddenPathText,
  isHidden,
  isInside,
  notRegularFile,
  type Workspace,
} from './workspace.js';

const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK, O_NOCTTY } =
  constants;

/** Whether a folder's children can be named through its descriptor (Linux's /proc/self/fd). */
const DESCRIPTOR_PATHS = process.platform === 'linux' && existsSync('/proc/self/fd');

/** A file or folder opened inside the workspace, with the real path it had when it was checked. */
export interface OpenedInside {
  readonly handle: FileHandle;
  /** The real path of what the descriptor refers to, inside the root and not hidden. */
  readonly real: string;
  readonly stats: Stats;
}

/** What to open: a file to read, write or read and write, or a folder to list. */
export type OpenPurpose = 'read' | 'write' | 'edit' | 'folder';

/** A refusal of the file tools' own making, with the message for the model. */
export class ConfinementError extends Error {
  override readonly name = 'ConfinementError';
}

const FINAL_FLAGS: Record<OpenPurpose, number> = {
  // O_NONBLOCK: a FIFO planted under the name opens without waiting for a writer; fstat then refuses it.
  read: O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
  write: O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
  edit: O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY,
  folder: O_RDONLY | O_DIRECTORY | O_NOFOLLOW,
};

const FOLDER_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;

/** The path naming `name` inside the folder open as `folder`, which was at `folderPath` when it was opened. */
function childPath(folder: FileHandle, folderPath: string, name: string): string {
  return DESCRIPTOR_PATHS ? `/proc/self/fd/${folder.fd}/${name}` : path.join(folderPath, name);
}

/** The path through which an open folder is listed: its descriptor where Linux offers that. */
export function listingPath(opened: OpenedInside): string {
  return DESCRIPTOR_PATHS ? `/proc/self/fd/${opened.handle.fd}` : opened.real;
}

/** The path through which `name` inside an open folder is looked at (lstat, readlink) without following it. */
export function entryPath(opened: OpenedInside, name: string): string {
  return childPath(opened.handle, opened.real, name);
}

/** The components of `real` below the root; throws ConfinementError when it is not below the root. */
function componentsBelowRoot(workspace: Workspace, real: string): string[] {
  if (!isInside(workspace.root, real)) {
    throw new ConfinementError(`'${real}' is outside the workspace root '${workspace.root}'`);
  }
  return path
    .relative(workspace.root, real)
    .split(path.sep)
    .filter((part) => part !== '');
}

/** The message for an open that met a symlink or a file where a folder was checked a moment before. */
function changedText(real: string): string {
  return `'${real}' changed while it was being opened (a folder on the way was replaced, e.g. by a symbolic link); nothing was read or written`;
}

/** Checks what a descriptor really refers to; throws ConfinementError when it is outside or hidden. */
async function verifyDescriptor(workspace: Workspace, handle: FileHandle, expected: string): Promise<string> {
  const real = DESCRIPTOR_PATHS ? await readlink(`/proc/self/fd/${handle.fd}`) : expected;
  if (!isInside(workspace.root, real)) {
    throw new ConfinementError(`'${expected}' led outside the workspace root '${workspace.root}'; refused`);
  }
  if (isHidden(workspace, real)) throw new ConfinementError(hiddenPathText(expected));
  return real;
}

/** Opens the next folder below `folder`, creating it first when `create` says so. */
async function openChildFolder(options: {
  folder: FileHandle;
  folderPath: string;
  name: string;
  create: boolean;
}): Promise<FileHandle> {
  const child = childPath(options.folder, options.folderPath, options.name);
  try {
    return await open(child, FOLDER_FLAGS);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT' || !options.create) throw error;
  }
  await mkdir(child).catch((error: unknown) => {
    if (errorCode(error) !== 'EEXIST') throw error;
  });
  return open(child, FOLDER_FLAGS);
}

/**
 * Opens `real` (a real path inside the root, as `resolveInWorkspace` gives) one component at a time from the
 * root, never following a symlink, and checks the final descriptor. `create` makes missing folders and
 * creates the file (O_EXCL: it must not exist; `purpose` must be 'write'). Throws ConfinementError for a
 * refusal, a Node system error (ENOENT, EISDIR…) otherwise. The caller closes the handle.
 */
export async function openInside(options: {
  workspace: Workspace;
  real: string;
  purpose: OpenPurpose;
  create?: boolean;
}): Promise<OpenedInside> {
  const { workspace, real, purpose } = options;
  const create = options.create === true;
  const components = componentsBelowRoot(workspace, real);
  const last = components.pop();
  let folder = await open(workspace.root, FOLDER_FLAGS);
  let folderPath = workspace.root;
  /** The handle given back to the caller, which must not be closed here. */
  let kept: FileHandle | undefined;
  try {
    for (const name of components) {
      const current = { folder, folderPath, name };
      const next = await openChildFolder({ ...current, create }).catch((error: unknown) =>
        rethrowOpenError({ ...current, error, real }),
      );
      await folder.close();
      folder = next;
      folderPath = path.join(folderPath, name);
    }
    let handle: FileHandle;
    if (last === undefined) {
      if (purpose === 'write' || purpose === 'edit') {
        throw Object.assign(new Error(`'${real}' is a directory`), { code: 'EISDIR' });
      }
      handle = folder;
    } else {
      const flags = create ? O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY : FINAL_FLAGS[purpose];
      const current = { folder, folderPath, name: last };
      handle = await open(childPath(folder, folderPath, last), flags, 0o666).catch((error: unknown) =>
        rethrowOpenError({ ...current, error, real }),
      );
    }
    try {
      const checked = await verifyDescriptor(workspace, handle, real);
      const opened = { handle, real: checked, stats: await handle.stat() };
      kept = handle;
      return opened;
    } finally {
      if (kept === undefined && handle !== folder) await handle.close();
    }
  } finally {
    if (folder !== kept) await folder.close();
  }
}

/**
 * Throws the error of a failed open of `name` in the held folder: a ConfinementError when the name is not a
 * folder now but is a symlink or a folder again (O_NOFOLLOW gives ELOOP, or ENOTDIR with O_DIRECTORY): the
 * path changed since it was resolved. Other errors name the path, never the /proc/self/fd one.
 */
async function rethrowOpenError(options: {
  folder: FileHandle;
  folderPath: string;
  name: string;
  error: unknown;
  real: string;
}): Promise<never> {
  const code = errorCode(options.error);
  if (code === 'ELOOP' || code === 'ENOTDIR') {
    const stats = await lstat(childPath(options.folder, options.folderPath, options.name)).catch(
      () => undefined,
    );
    if (code === 'ELOOP' || stats?.isSymbolicLink() === true || stats?.isDirectory() === true) {
      throw new ConfinementError(changedText(options.real));
    }
  }
  if (options.error instanceof Error) {
    options.error.message = options.error.message.replace(/\/proc\/self\/fd\/\d+/g, options.folderPath);
  }
  throw options.error;
}

/** Opens `real` to read; throws ConfinementError when it is not a regular file. */
export async function openFileToRead(
  workspace: Workspace,
  real: string,
  given: string,
): Promise<OpenedInside> {
  const opened = await openInside({ workspace, real, purpose: 'read' });
  if (opened.stats.isFile()) return opened;
  await opened.handle.close();
  throw new ConfinementError(
    opened.stats.isDirectory()
      ? `'${given}' is a directory; use list_dir to see what it holds`
      : notRegularFile(given),
  );
}

/** The names in an open folder, read through its descriptor. */
export function namesIn(opened: OpenedInside): Promise<string[]> {
  return readdir(listingPath(opened));
}

/** Writes all of `bytes` at offset 0 of the file and cuts it there (positions given, whatever was read before). */
export async function replaceContent(handle: FileHandle, bytes: Uint8Array): Promise<void> {
  await handle.truncate(0);
  let written = 0;
  while (written < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, written, bytes.length - written, written);
    written += bytesWritten;
  }
}

/** How many bytes of a file are looked at to decide whether it is binary (what git looks at). */
export const BINARY_PROBE_BYTES = 8000;

/** Whether the first bytes of the open file hold a NUL byte, the sign of a binary file. */
export async function isBinaryContent(handle: FileHandle): Promise<boolean> {
  const buffer = Buffer.alloc(BINARY_PROBE_BYTES);
  const { bytesRead } = await handle.read(buffer, 0, BINARY_PROBE_BYTES, 0);
  return buffer.subarray(0, bytesRead).includes(0);
}
