/**
 * Resource limits of sandboxed commands. Node cannot set a child's rlimits, so the command runs under
 * util-linux's `prlimit` inside bubblewrap: inside, because bubblewrap's user namespace then counts
 * RLIMIT_NPROC for the sandbox alone (set outside, the kernel would hold every process of the user on the
 * machine against it). prlimit rather than `ulimit` in the shell: bash and dash spell the process limit
 * differently (-u, -p), and prlimit takes bytes.
 *
 * The kernel never applies RLIMIT_NPROC to root. As root, the command therefore runs in a PID namespace of its
 * own whose `pid_max` is the process limit (Linux 6.14 made pid_max per namespace; a nested namespace cannot
 * allocate past its parent's). Before 6.14, pid_max is global: youyou then leaves it alone, and as root only the
 * timeout bounds a fork bomb.
 */
import { release } from 'node:os';

/** Limits on one sandboxed command; `null` turns a limit off. */
export interface ResourceLimits {
  /** RLIMIT_FSIZE: the largest file a process may write (bytes). Past it the write fails (SIGXFSZ). */
  fileSizeBytes: number | null;
  /** How many processes the command may have at once (RLIMIT_NPROC; as root, the namespace's pid_max). */
  processes: number | null;
  /** RLIMIT_CPU: CPU seconds of each process (SIGXCPU, then SIGKILL a second later). */
  cpuSeconds: number | null;
}

/** The limits when config.json gives none: 1 GiB per file, 1024 processes, 600 CPU seconds per process. */
export const DEFAULT_RESOURCE_LIMITS: ResourceLimits = {
  fileSizeBytes: 1024 * 1024 * 1024,
  processes: 1024,
  cpuSeconds: 600,
};

/** The kernel's smallest pid_max (RESERVED_PIDS + 1): as root, the process limit is never below 300. */
const PID_MAX_MIN = 301;

/** The `prlimit` options for `limits` (empty when every limit is off). */
export function prlimitOptions(limits: ResourceLimits): string[] {
  const options: string[] = [];
  if (limits.fileSizeBytes !== null) options.push(`--fsize=${limits.fileSizeBytes}`);
  if (limits.processes !== null) options.push(`--nproc=${limits.processes}`);
  // SIGXCPU at the limit (a program may catch it to save its work), SIGKILL one second later.
  if (limits.cpuSeconds !== null) options.push(`--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`);
  return options;
}

/** Whether this kernel keeps pid_max per PID namespace (Linux 6.14 and later). */
export function hasNamespacedPidMax(kernelRelease: string = release()): boolean {
  const match = /^(\d+)\.(\d+)/.exec(kernelRelease);
  if (match === null) return false;
  const major = Number(match[1]);
  const minor = Number(match[2]);
  return major > 6 || (major === 6 && minor >= 14);
}

/**
 * The script that, as pid 1 of a fresh PID namespace (`unshare --pid --fork --mount-proc`), sets that
 * namespace's pid_max to $1 and runs the rest of its arguments. It refuses to run when the write fails: the
 * limit the user configured would silently not hold.
 */
export const PID_MAX_SCRIPT = 'echo "$1" > /proc/sys/kernel/pid_max || exit 125\nshift\nexec "$@"';

/**
 * The prefix that bounds the processes of a command run as root: `unshare … sh -c SCRIPT sh PIDMAX`, then the
 * bubblewrap command; undefined when it is not needed or not possible (not root, no limit, a kernel whose
 * pid_max is global, no unshare or setpriv).
 */
export function rootProcessLimitPrefix(options: {
  limits: ResourceLimits;
  isRoot: boolean;
  unsharePath: string | undefined;
  setprivPath: string | undefined;
  kernelRelease?: string;
}): string[] | undefined {
  const { processes } = options.limits;
  if (!options.isRoot || processes === null) return undefined;
  if (options.unsharePath === undefined || options.setprivPath === undefined) return undefined;
  if (!hasNamespacedPidMax(options.kernelRelease)) return undefined;
  // pid 1 of the namespace is this script (then bwrap): pids 1 … processes are the processes allowed.
  const pidMax = Math.max(processes + 1, PID_MAX_MIN);
  return [
    // bwrap's --die-with-parent now watches unshare, not youyou: unshare must die with youyou, even by SIGKILL
    // (then --kill-child takes bwrap with it). The death signal survives the exec into unshare.
    options.setprivPath,
    '--pdeathsig',
    'KILL',
    '--',
    options.unsharePath,
    '--pid',
    '--fork',
    '--mount-proc',
    '--kill-child',
    '--',
    '/bin/sh',
    '-c',
    PID_MAX_SCRIPT,
    'sh',
    String(pidMax),
  ];
}
