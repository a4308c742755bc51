import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { neutralizeLine } from '../text/terminal-text.js';
import {
  DEFAULT_RESOURCE_LIMITS,
  prlimitOptions,
  type ResourceLimits,
  rootProcessLimitPrefix,
} from './limits.js';
import { workspaceProtection } from './workspace.js';

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
  /** Limits on each command's file sizes, processes and CPU time. Default DEFAULT_RESOURCE_LIMITS. */
  limits?: ResourceLimits;
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
 * Folders whose host content stays out of the sandbox's view, each covered by a fresh, writable tmpfs: /tmp
 * always; /run and /var/run (PostgreSQL's, D-Bus's and every daemon's Unix sockets: a socket on a read-only
 * mount still accepts connections) when the network is off. With the network on, /run stays: name resolution
 * may live there (systemd-resolved's resolv.conf).
 */
export function privateFolders(network: boolean): string[] {
  const folders = new Set<string>();
  for (const candidate of network ? ['/tmp'] : ['/tmp', '/run', '/var/run']) {
    const real = realPath(candidate);
    if (real === undefined || real === '/') continue;
    try {
      if (statSync(real).isDirectory()) folders.add(real);
    } catch {
      // Gone between the two calls.
    }
  }
  return [...folders];
}

/**
 * The bubblewrap arguments, in the order bwrap applies them (a later mount covers an earlier one): the whole
 * file system read-only, a fresh /dev and /proc, an empty tmpfs over each private folder (/tmp; /run when the
 * network is off). When the workspace lies inside a private folder, an empty tmpfs also covers its top folder
 * there, made read-only once the workspace is bound into it, so that the path to the workspace exists but
 * nothing of the host beside it shows, and nothing can be written beside it. Then the workspace (writable in
 * workspace-write) with its git metadata and agent configuration read-only again (sandbox-workspace.ts), and
 * the hidden paths over everything, so that a secret folder inside the workspace is hidden too. A hidden folder
 * that contains the workspace (serve's folder of tenants' workspaces, the youyou home) is covered before the
 * workspace is bound into it, so that all of it but the workspace is hidden; a hidden path inside a private
 * folder is not shown anyway.
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
  ];
  const privates = privateFolders(sandbox.network);
  const tops: string[] = [];
  for (const folder of privates) {
    args.push('--tmpfs', folder);
    if (isWithin(root, folder) && root !== folder) {
      const top = path.join(folder, path.relative(folder, root).split(path.sep)[0] as string);
      if (top !== root) {
        args.push('--tmpfs', top);
        tops.push(top);
      }
    }
  }
  const candidates = [...sandbox.hiddenPaths, ...SECRET_SYSTEM_PATHS].map(realPath);
  // Hidden folders holding the workspace, outermost first: emptied before the workspace is bound into them.
  const holders = [...new Set(candidates)]
    .filter((real): real is string => real !== undefined && real !== root && isWithin(root, real))
    // One inside a private folder shows nothing of the host already.
    .filter((real) => !privates.some((folder) => isWithin(real, folder)))
    .filter(isDirectoryNow)
    .sort((left, right) => left.length - right.length);
  for (const holder of holders) args.push('--tmpfs', holder);
  const writable = sandbox.mode === 'workspace-write';
  args.push(writable ? '--bind' : '--ro-bind', root, root);
  if (writable) {
    const protection = workspaceProtection(root);
    for (const folder of protection.pinned) args.push('--bind', folder, folder);
    for (const entry of protection.readOnly) args.push('--ro-bind', entry, entry);
  }
  for (const folder of [...tops, ...holders]) args.push('--remount-ro', folder);
  const hidden = new Set<string>();
  for (const real of candidates) {
    // The workspace itself, and the folders holding it (covered above), are never hidden from its own shell.
    if (real === undefined || hidden.has(real) || isWithin(root, real)) continue;
    if (!isWithin(real, root) && privates.some((folder) => isWithin(real, folder))) continue;
    hidden.add(real);
    let isDirectory = false;
    try {
      isDirectory = statSync(real).isDirectory();
    } catch {
      continue;
    }
    if (isDirectory) args.push('--tmpfs', real, '--remount-ro', real);
    else args.push('--ro-bind', '/dev/null', real);
  }
  args.push('--chdir', root);
  return args;
}

/** Whether `real` is a folder right now (false when it is gone). */
function isDirectoryNow(real: string): boolean {
  try {
    return statSync(real).isDirectory();
  } catch {
    return false;
  }
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
  const limits = prlimitOptions(options.sandbox.limits ?? DEFAULT_RESOURCE_LIMITS);
  // A missing prlimit is left as a bare name: the command then fails in the sandbox rather than run unlimited.
  const limited = limits.length === 0 ? [] : [systemTool('prlimit') ?? 'prlimit', ...limits, '--'];
  const prefix =
    rootProcessLimitPrefix({
      limits: options.sandbox.limits ?? DEFAULT_RESOURCE_LIMITS,
      isRoot: process.getuid?.() === 0,
      unsharePath: systemTool('unshare'),
      setprivPath: systemTool('setpriv'),
    }) ?? [];
  const bwrap = [
    options.sandbox.bwrapPath,
    ...bubblewrapArguments({ sandbox: options.sandbox, workspaceRoot: options.workspaceRoot }),
    '--',
    ...limited,
    options.file,
    ...options.args,
  ];
  const [file, ...args] = [...prefix, ...bwrap] as [string, ...string[]];
  return { file, args, env: { ...options.env, TMPDIR: '/tmp' } };
}

const systemTools = new Map<string, string | undefined>();

/** The path of a util-linux tool (prlimit, unshare) in the system folders, looked up once. */
function systemTool(name: string): string | undefined {
  if (!systemTools.has(name)) {
    systemTools.set(
      name,
      findExecutable({ name, env: {}, extra: ['/usr/bin', '/bin', '/usr/sbin', '/sbin'] }),
    );
  }
  return systemTools.get(name);
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
  try {
    accessSync(options.sandbox.bwrapPath, constants.X_OK);
  } catch {
    return { ok: false, reason: `${options.sandbox.bwrapPath} is not installed` };
  }
  if (
    prlimitOptions(options.sandbox.limits ?? DEFAULT_RESOURCE_LIMITS).length > 0 &&
    !systemTool('prlimit')
  ) {
    return {
      ok: false,
      reason:
        'prlimit (util-linux) is not installed; it applies sandbox.limits (set them to null to go without)',
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
