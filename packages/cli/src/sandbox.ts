import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { neutralizeLine } from './terminal-text.js';

/** How far the shell tool is confined, named like Codex's modes. */
export const SANDBOX_MODES = ['read-only', 'workspace-write', 'danger-full-access'] as const;
/** One of SANDBOX_MODES. */
export type SandboxMode = (typeof SANDBOX_MODES)[number];
/** The mode when neither `--sandbox` nor the config file names one. */
export const DEFAULT_SANDBOX_MODE: SandboxMode = 'workspace-write';

/**
 * Folders and files of the home folder that hold credentials: hidden from the shell (an empty tmpfs over a
 * folder, /dev/null over a file). Config's `sandbox.hiddenPaths` adds to them; YOUYOU_HOME is always hidden.
 */
export const SECRET_HOME_PATHS: readonly string[] = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.config/gcloud',
  '.config/gh',
  '.config/hub',
  '.config/op',
  '.docker',
  '.kube',
  '.netrc',
  '.git-credentials',
  '.npmrc',
  '.yarnrc',
  '.pypirc',
  '.gem/credentials',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.terraform.d',
  '.vault-token',
  '.password-store',
  '.local/share/keyrings',
  '.mozilla',
  '.config/google-chrome',
  '.config/chromium',
  '.bash_history',
  '.zsh_history',
  '.python_history',
  '.psql_history',
  '.mysql_history',
  '.node_repl_history',
  '.youyou',
];

/**
 * Sockets and runtime folders outside the home that give a way out of the sandbox (a Unix socket on a
 * read-only mount still accepts connections): the Docker and Podman daemons, the user's agents in /run/user.
 */
export const SECRET_SYSTEM_PATHS: readonly string[] = [
  '/run/user',
  '/run/docker.sock',
  '/var/run/docker.sock',
  '/run/containerd',
  '/run/podman',
  '/run/dbus',
];

/** How the shell tool runs its commands. */
export interface ShellSandbox {
  mode: SandboxMode;
  /** Whether commands may use the network (danger-full-access always may). */
  network: boolean;
  /** The bubblewrap executable: a path, or a name looked up on PATH. */
  bwrapPath: string;
  /** Absolute paths hidden from the shell (those that do not exist are skipped). */
  hiddenPaths: readonly string[];
}

/** The program and arguments that run `shell -c script name command` under the sandbox. */
export interface SandboxedCommand {
  file: string;
  args: string[];
  /** The environment with what the sandbox changes (TMPDIR points at the private /tmp). */
  env: Record<string, string>;
}

/** True when `inner` is `outer` or lies inside it. */
function isWithin(inner: string, outer: string): boolean {
  const relative = path.relative(outer, inner);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** The real path of an existing file or folder, or undefined. */
function realPath(candidate: string): string | undefined {
  try {
    return realpathSync(candidate);
  } catch {
    return undefined;
  }
}

/**
 * The bubblewrap arguments, in the order bwrap applies them (a later mount covers an earlier one):
 * the whole file system read-only, a fresh /dev, /proc and /tmp; when the workspace lies under /tmp, its top
 * folder below /tmp read-only again so that its siblings are not writable; the workspace itself (writable in
 * workspace-write); then the hidden paths over everything, so that a secret folder inside the workspace is
 * hidden too. A hidden folder that contains the workspace is hidden with the workspace bound again inside it.
 */
export function bubblewrapArguments(options: { sandbox: ShellSandbox; workspaceRoot: string }): string[] {
  const { sandbox } = options;
  const root = realPath(options.workspaceRoot) ?? options.workspaceRoot;
  const args = [
    '--unshare-all',
    ...(sandbox.network ? ['--share-net'] : []),
    // As root, bwrap would otherwise keep every capability: `mount -o remount,rw /` would undo read-only.
    '--cap-drop',
    'ALL',
    '--die-with-parent',
    '--new-session',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
  ];
  const privateTmp = realPath('/tmp') ?? '/tmp';
  if (isWithin(root, privateTmp) && root !== privateTmp) {
    const top = path.join('/tmp', path.relative(privateTmp, root).split(path.sep)[0] as string);
    args.push('--ro-bind', top, top);
  }
  const workspaceBind = sandbox.mode === 'workspace-write' ? '--bind' : '--ro-bind';
  args.push(workspaceBind, root, root);
  const hidden = new Set<string>();
  const candidates = [...sandbox.hiddenPaths, ...SECRET_SYSTEM_PATHS].map(realPath);
  // Folders holding the workspace first: the workspace bound again inside them, what is hidden in it stays so.
  const holds = (real: string | undefined): number => Number(real !== undefined && isWithin(root, real));
  candidates.sort((a, b) => holds(b) - holds(a));
  for (const real of candidates) {
    // The workspace itself is never hidden from its own shell.
    if (real === undefined || real === root || hidden.has(real)) continue;
    hidden.add(real);
    let isDirectory = false;
    try {
      isDirectory = statSync(real).isDirectory();
    } catch {
      continue;
    }
    // A hidden folder holding the workspace (serve's tenants' folders) is hidden but for the workspace.
    if (isDirectory && isWithin(root, real)) {
      args.push('--tmpfs', real, workspaceBind, root, root, '--remount-ro', real);
    } else if (isDirectory) args.push('--tmpfs', real, '--remount-ro', real);
    else args.push('--ro-bind', '/dev/null', real);
  }
  args.push('--chdir', root);
  return args;
}

/** Wraps `file args` in bubblewrap as the sandbox says, or returns it as it is for danger-full-access. */
export function sandboxedCommand(options: {
  sandbox: ShellSandbox;
  workspaceRoot: string;
  file: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
}): SandboxedCommand {
  if (options.sandbox.mode === 'danger-full-access') {
    return { file: options.file, args: [...options.args], env: { ...options.env } };
  }
  return {
    file: options.sandbox.bwrapPath,
    args: [
      ...bubblewrapArguments({ sandbox: options.sandbox, workspaceRoot: options.workspaceRoot }),
      '--',
      options.file,
      ...options.args,
    ],
    env: { ...options.env, TMPDIR: '/tmp' },
  };
}

/** The absolute path of an executable file named `name` in the folders of `PATH` (and `extra`), or undefined. */
export function findExecutable(options: {
  name: string;
  env: Readonly<Record<string, string | undefined>>;
  extra?: readonly string[];
}): string | undefined {
  const folders = [...(options.env.PATH ?? '').split(path.delimiter), ...(options.extra ?? [])].filter(
    (folder) => folder !== '' && path.isAbsolute(folder),
  );
  for (const folder of folders) {
    const candidate = path.join(folder, options.name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not here; the next folder.
    }
  }
  return undefined;
}

/** The shell commands run with: bash when there is one (on PATH or in /bin, /usr/bin), else /bin/sh. */
export function findShell(env: Readonly<Record<string, string | undefined>>): string {
  return findExecutable({ name: 'bash', env, extra: ['/bin', '/usr/bin'] }) ?? '/bin/sh';
}

/** Whether bubblewrap can confine commands here; when not, why, in one line. */
export type SandboxProbe = { ok: true } | { ok: false; reason: string };

/**
 * Starts `true` in the sandbox once, with the arguments a command would get: bwrap may be missing, or present
 * but unable to create namespaces (unprivileged user namespaces turned off, a container without them).
 */
export function probeSandbox(options: { sandbox: ShellSandbox; workspaceRoot: string }): SandboxProbe {
  // A bare name would be looked up on the probe's own PATH below, not on the user's.
  if (!path.isAbsolute(options.sandbox.bwrapPath)) {
    return { ok: false, reason: `${options.sandbox.bwrapPath} is not an absolute path` };
  }
  if (process.platform !== 'linux') {
    return {
      ok: false,
      reason: `bubblewrap works on Linux only, not on ${process.platform}`,
    };
  }
  const shell = existsSync('/bin/true') ? '/bin/true' : '/usr/bin/true';
  const command = sandboxedCommand({
    sandbox: options.sandbox,
    workspaceRoot: options.workspaceRoot,
    file: shell,
    args: [],
    env: { PATH: '/usr/bin:/bin' },
  });
  const result = spawnSync(command.file, command.args, {
    env: command.env,
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 10_000,
    encoding: 'utf8',
  });
  if (result.error !== undefined) {
    const code = (result.error as { code?: unknown }).code;
    if (code === 'ENOENT') {
      return { ok: false, reason: `${options.sandbox.bwrapPath} is not installed` };
    }
    return {
      ok: false,
      reason: `${options.sandbox.bwrapPath} did not start: ${result.error.message}`,
    };
  }
  if (result.status !== 0) {
    const said = neutralizeLine((result.stderr ?? '').trim().split('\n').at(-1) ?? '');
    return {
      ok: false,
      reason: `${options.sandbox.bwrapPath} cannot create its sandbox here${said === '' ? '' : ` (${said})`}`,
    };
  }
  return { ok: true };
}

/** The one line shown when the sandbox cannot start and the user did not choose to run unconfined. */
export function sandboxUnavailableText(reason: string): string {
  return (
    `cannot sandbox the shell: ${reason}. Install bubblewrap (apt-get install bubblewrap) with user ` +
    'namespaces allowed, or choose to run it unconfined: --sandbox danger-full-access'
  );
}
