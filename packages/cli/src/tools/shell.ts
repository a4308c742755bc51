import { spawn } from 'node:child_process';
import { homedir } from 'node:os';
import path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import type { ToolHandler, ToolInput, ToolOutput } from '@youyou/agent';
import { DEFAULT_RESOURCE_LIMITS, type ResourceLimits } from '../sandbox/limits.js';
import {
  DEFAULT_SANDBOX_MODE,
  findShell,
  SECRET_HOME_PATHS,
  type ShellSandbox,
  sandboxedCommand,
} from '../sandbox/sandbox.js';
import { toolEnvironment } from '../sandbox/tool-env.js';
import { absentAgentConfig, removeCreatedAgentConfig } from '../sandbox/workspace.js';
import { argumentsOf, errorText, failure, type Workspace } from './workspace.js';

/** How long a command may run unless the call or the tool's options say otherwise. */
export const SHELL_DEFAULT_TIMEOUT_MS = 60_000;
/** The longest timeout a call may ask for (10 minutes). */
export const SHELL_MAX_TIMEOUT_MS = 600_000;
/** How much output a result keeps unless the tool's options say otherwise: the first and last halves. */
export const SHELL_DEFAULT_OUTPUT_LIMIT_BYTES = 64 * 1024;
/**
 * After the shell exits, how long to wait for its output pipes to close. A process it left running in the
 * background keeps them open; the result does not wait for that process.
 */
const DRAIN_AFTER_EXIT_MS = 1000;

/**
 * The script the shell's `-c` runs: it points stderr at stdout first, so that both arrive through one pipe in the
 * order they were written, then runs the command (passed as $1, so that it needs no quoting) with `eval`.
 */
const SCRIPT = 'exec 2>&1\neval "$1"';

/** Keeps the first and last halves of a stream of bytes within a limit, counting what falls between. */
class HeadTailBuffer {
  readonly #half: number;
  readonly #head: Buffer[] = [];
  #headBytes = 0;
  #tail: Buffer[] = [];
  #tailBytes = 0;
  #omitted = 0;

  constructor(limit: number) {
    this.#half = Math.max(1, Math.floor(limit / 2));
  }

  push(chunk: Buffer): void {
    let rest = chunk;
    if (this.#headBytes < this.#half) {
      const taken = rest.subarray(0, this.#half - this.#headBytes);
      this.#head.push(taken);
      this.#headBytes += taken.length;
      rest = rest.subarray(taken.length);
    }
    if (rest.length === 0) return;
    this.#tail.push(rest);
    this.#tailBytes += rest.length;
    while (this.#tailBytes > this.#half) {
      const first = this.#tail[0] as Buffer;
      const excess = this.#tailBytes - this.#half;
      if (first.length <= excess) {
        this.#tail.shift();
        this.#tailBytes -= first.length;
        this.#omitted += first.length;
      } else {
        this.#tail[0] = first.subarray(excess);
        this.#tailBytes -= excess;
        this.#omitted += excess;
      }
    }
  }

  /** The kept text; where bytes were left out, a marker says how many. */
  render(): string {
    const head = Buffer.concat(this.#head);
    const tail = Buffer.concat(this.#tail);
    if (this.#omitted === 0) return Buffer.concat([head, tail]).toString('utf8');
    // Cut on character boundaries: drop a character split by the head's end or the tail's start.
    const headText = new StringDecoder('utf8').write(head);
    let start = 0;
    while (start < tail.length && ((tail[start] as number) & 0xc0) === 0x80) start += 1;
    const omitted = this.#omitted + (head.length - Buffer.byteLength(headText)) + start;
    return `${headText}\n[... ${omitted} bytes of output omitted ...]\n${tail.subarray(start).toString('utf8')}`;
  }
}

/** How often a running command's output is reported: a flood of small writes becomes one delta per interval. */
const LIVE_OUTPUT_INTERVAL_MS = 50;
/** Output waiting to be reported is reported at once past this many characters, so it never piles up. */
const LIVE_OUTPUT_PENDING_CHARS = 65_536;

/** Reports a running command's output through `onOutput`, decoded per stream and gathered per interval. */
class LiveOutput {
  readonly #report: ((text: string) => void) | undefined;
  #pending = '';
  #timer: NodeJS.Timeout | undefined;

  constructor(report: ((text: string) => void) | undefined) {
    this.#report = report;
  }

  /** Takes one chunk of a stream (a character split between chunks waits in `decoder` for its rest). */
  push(decoder: StringDecoder, chunk: Buffer): void {
    if (this.#report === undefined) return;
    this.#pending += decoder.write(chunk);
    if (this.#pending.length >= LIVE_OUTPUT_PENDING_CHARS) this.flush();
    else if (this.#pending !== '' && this.#timer === undefined) {
      this.#timer = setTimeout(() => this.flush(), LIVE_OUTPUT_INTERVAL_MS);
    }
  }

  /** Reports what waits now: at each interval, and before the result, after which output is not heard. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const text = this.#pending;
    this.#pending = '';
    if (text !== '') this.#report?.(text);
  }
}

/** What `createShellTool` takes. */
export interface ShellToolOptions {
  workspace: Workspace;
  /** The timeout of a call that gives none. Default 60 s. */
  defaultTimeoutMs?: number;
  /** How many bytes of output a result keeps (head and tail). Default 64 KiB. */
  outputLimitBytes?: number;
  /** How commands are confined. Default: workspace-write without network, the default secret paths hidden. */
  sandbox?: ShellSandbox;
  /** The whole environment of a command. Default: the allowlisted variables of this process. */
  env?: Readonly<Record<string, string>>;
  /** The shell that runs commands. Default: bash when there is one, else /bin/sh. */
  shell?: string;
}

/** The sandbox of a shell tool whose options give none: workspace-write, no network, secrets of ~ hidden. */
export function defaultShellSandbox(home: string = homedir()): ShellSandbox {
  return {
    mode: DEFAULT_SANDBOX_MODE,
    network: false,
    bwrapPath: 'bwrap',
    hiddenPaths: SECRET_HOME_PATHS.map((entry) => path.join(home, entry)),
    limits: DEFAULT_RESOURCE_LIMITS,
  };
}

/** Process groups of commands still running, killed if this process exits before they end. */
const running = new Set<number>();
let exitHookInstalled = false;

function track(pid: number): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const group of running) killGroup(group, 'SIGKILL');
    });
  }
  running.add(pid);
}

function describeLimits(limits: ResourceLimits): string {
  const parts = [
    limits.fileSizeBytes === null ? undefined : `files up to ${limits.fileSizeBytes} bytes`,
    limits.processes === null ? undefined : `${limits.processes} processes`,
    limits.cpuSeconds === null ? undefined : `${limits.cpuSeconds} CPU seconds per process`,
  ].filter((part) => part !== undefined);
  return parts.length === 0 ? '' : ` Limits: ${parts.join(', ')}.`;
}

function describeSandbox(sandbox: ShellSandbox): string {
  if (sandbox.mode === 'danger-full-access') return 'It runs unconfined, with network access.';
  const writable =
    sandbox.mode === 'workspace-write'
      ? 'Only the workspace (except .git/config, .git/hooks, .git/info and agent configuration such as ' +
        'AGENTS.md, .youyou/ and .agents/) and a private /tmp are writable'
      : 'Nothing but a private /tmp is writable';
  const network = sandbox.network ? 'network access is on' : 'there is no network access';
  return (
    `It runs in a sandbox: ${writable}, ${network}, and credential folders of the home folder are hidden.` +
    describeLimits(sandbox.limits ?? DEFAULT_RESOURCE_LIMITS)
  );
}

/** The shell tool: runs a command with bash (or /bin/sh) in the workspace root, sandboxed, as a process group. */
export function createShellTool(options: ShellToolOptions): ToolHandler {
  const sandbox = options.sandbox ?? defaultShellSandbox();
  const env = options.env ?? toolEnvironment({ env: process.env });
  const shell = options.shell ?? findShell(process.env);
  const defaultTimeoutMs = Math.min(
    options.defaultTimeoutMs ?? SHELL_DEFAULT_TIMEOUT_MS,
    SHELL_MAX_TIMEOUT_MS,
  );
  const outputLimitBytes = options.outputLimitBytes ?? SHELL_DEFAULT_OUTPUT_LIMIT_BYTES;
  return {
    name: 'shell',
    description:
      `Runs a command with ${shell} -c in the workspace root and returns its output (stdout and stderr ` +
      `together, in order) and exit code. No input can be typed: interactive programs get no stdin. Output over ` +
      `${outputLimitBytes} bytes keeps its start and end. The command and everything it started are killed ` +
      `when it exits, and after timeoutMs (default ${defaultTimeoutMs}, at most ${SHELL_MAX_TIMEOUT_MS}). ` +
      describeSandbox(sandbox),
    parametersSchema: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'The shell command line to run.' },
        timeoutMs: {
          type: 'integer',
          minimum: 1,
          maximum: SHELL_MAX_TIMEOUT_MS,
          description: `Milliseconds before the command is killed. Default ${defaultTimeoutMs}.`,
        },
      },
      required: ['command'],
      additionalProperties: false,
    },
    isMutating: true,
    execute: (input) => {
      const args = argumentsOf(input);
      const command = args.command;
      if (typeof command !== 'string' || command.trim() === '')
        return Promise.resolve(failure('command is empty'));
      const requested =
        typeof args.timeoutMs === 'number' && args.timeoutMs >= 1 ? args.timeoutMs : defaultTimeoutMs;
      const launch = sandboxedCommand({
        sandbox,
        workspaceRoot: options.workspace.root,
        file: shell,
        args: ['-c', SCRIPT, path.basename(shell), command],
        env: { ...env, SHELL: shell },
      });
      // A missing AGENTS.md, .youyou/ or .agents/ cannot be bound read-only: what the command creates there
      // is removed after it (see removeCreatedAgentConfig).
      const guarded = sandbox.mode === 'workspace-write' ? absentAgentConfig(options.workspace.root) : [];
      return runCommand({
        launch,
        cwd: options.workspace.root,
        timeoutMs: Math.min(requested, SHELL_MAX_TIMEOUT_MS),
        outputLimitBytes,
        signal: input.signal,
        onOutput: input.onOutput,
      }).then((result) => withAgentConfigRemoved(result, options.workspace.root, guarded));
    },
  };
}

/** The result, with what the command created among the absent agent configuration names removed and said. */
function withAgentConfigRemoved(result: ToolOutput, root: string, absent: readonly string[]): ToolOutput {
  if (absent.length === 0) return result;
  let removed: string[];
  try {
    removed = removeCreatedAgentConfig(root, absent);
  } catch (error) {
    return {
      ...result,
      content: `${result.content}\n[could not remove agent configuration the command created: ${errorText(error)}]`,
      isError: true,
    };
  }
  if (removed.length === 0) return result;
  return {
    ...result,
    content:
      `${result.content}\n[removed ${removed.join(', ')}: the shell may not create agent configuration, which ` +
      'the next session would load; write it with write_file, which asks the user]',
    isError: true,
  };
}

/** Sends a signal to a whole process group; a group that is already gone is fine. */
function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: every process of the group has exited already.
  }
}

function runCommand(options: {
  launch: { file: string; args: string[]; env: Record<string, string> };
  cwd: string;
  timeoutMs: number;
  outputLimitBytes: number;
  signal: ToolInput['signal'];
  /** Hears the output as it comes (see LiveOutput). */
  onOutput: ToolInput['onOutput'];
}): Promise<ToolOutput> {
  if (options.signal.aborted) return Promise.resolve(failure('the command was cancelled before it started'));
  return new Promise((resolve) => {
    const output = new HeadTailBuffer(options.outputLimitBytes);
    const live = new LiveOutput(options.onOutput);
    // detached: the shell leads its own process group, so one kill reaches everything it started.
    const { launch } = options;
    const child = spawn(launch.file, launch.args, {
      cwd: options.cwd,
      env: launch.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const group = child.pid;
    if (group !== undefined) track(group);
    let stopReason: 'timeout' | 'cancelled' | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let drainTimer: NodeJS.Timeout | undefined;
    let settled = false;

    const stop = (reason: 'timeout' | 'cancelled'): void => {
      stopReason ??= reason;
      killGroup(child.pid, 'SIGKILL');
    };
    const timeoutTimer = setTimeout(() => stop('timeout'), options.timeoutMs);
    const onAbort = (): void => stop('cancelled');
    options.signal.addEventListener('abort', onAbort, { once: true });

    const finish = (result: ToolOutput): void => {
      if (settled) return;
      settled = true;
      if (group !== undefined) running.delete(group);
      clearTimeout(timeoutTimer);
      clearTimeout(drainTimer);
      options.signal.removeEventListener('abort', onAbort);
      child.stdout.destroy();
      child.stderr.destroy();
      live.flush();
      resolve(result);
    };
    const finishWithExit = (note?: string): void => {
      const text = output.render();
      const lines = [text === '' ? '(no output)' : text.replace(/\n$/, '')];
      if (note !== undefined) lines.push(note);
      if (stopReason === 'timeout') {
        lines.push(
          `[timed out after ${options.timeoutMs}ms; the command and the processes it started were killed]`,
        );
      } else if (stopReason === 'cancelled') {
        lines.push('[cancelled; the command and the processes it started were killed]');
      } else if (exit?.signal) {
        lines.push(`[killed by ${exit.signal}]`);
      } else {
        lines.push(`[exit code ${exit?.code ?? 'unknown'}]`);
      }
      finish({ content: lines.join('\n'), isError: stopReason !== undefined || exit?.code !== 0 });
    };

    const heard = (decoder: StringDecoder) => (chunk: Buffer) => {
      output.push(chunk);
      live.push(decoder, chunk);
    };
    child.stdout.on('data', heard(new StringDecoder('utf8')));
    child.stderr.on('data', heard(new StringDecoder('utf8')));
    child.on('error', (error) => finish(failure(`could not run ${launch.file}: ${errorText(error)}`)));
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // What the command left running in the background ends with it (in the sandbox, bwrap's PID namespace
      // has already ended it); a process that left the group (setsid) may still hold the pipes: the drain.
      killGroup(group, 'SIGKILL');
      drainTimer = setTimeout(
        () =>
          finishWithExit('[processes left running in the background still hold the output; it is not shown]'),
        DRAIN_AFTER_EXIT_MS,
      );
    });
    child.on('close', () => finishWithExit());
  });
}
