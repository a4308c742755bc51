import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BIN } from './build.js';

/** What one run of the binary printed and how it exited. */
export interface CliResult {
  stdout: string;
  stderr: string;
  code: number | null;
}

/** A temporary YOUYOU_HOME and workspace for one test. */
export interface Sandbox {
  home: string;
  workspace: string;
  /** Also the HOME of the child, so that nothing of the real ~ is read or written. */
  root: string;
  remove(): Promise<void>;
}

/** Makes a sandbox in the system's temp folder. */
export async function createSandbox(): Promise<Sandbox> {
  const root = await mkdtemp(path.join(tmpdir(), 'youyou-cli-'));
  const home = path.join(root, 'youyou-home');
  const workspace = path.join(root, 'workspace');
  await mkdir(workspace);
  return { root, home, workspace, remove: () => rm(root, { recursive: true, force: true }) };
}

/** The environment of a child: only what the binary needs, never the developer's API keys or YOUYOU_ settings. */
export function childEnv(sandbox: Sandbox, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: sandbox.root,
    YOUYOU_HOME: sandbox.home,
    SHELL: '/bin/sh',
    ...extra,
  };
}

/** A running binary: its output so far, and how it ended. */
export interface RunningCli {
  readonly child: ChildProcess;
  /** stdout so far. */
  stdout(): string;
  readonly result: Promise<CliResult>;
}

/** Starts `node packages/cli/dist/bin.js ARGS` in the sandbox's workspace. */
export function startCli(options: {
  args: readonly string[];
  sandbox: Sandbox;
  env?: Record<string, string>;
  stdin?: string;
}): RunningCli {
  const child = spawn(process.execPath, [BIN, ...options.args], {
    cwd: options.sandbox.workspace,
    env: childEnv(options.sandbox, options.env),
    stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  if (options.stdin !== undefined) child.stdin?.end(options.stdin);
  const result = new Promise<CliResult>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ stdout, stderr, code }));
  });
  return { child, stdout: () => stdout, result };
}

/** Runs `node packages/cli/dist/bin.js ARGS` in the sandbox's workspace and waits for it to exit. */
export function runCli(options: {
  args: readonly string[];
  sandbox: Sandbox;
  env?: Record<string, string>;
  stdin?: string;
}): Promise<CliResult> {
  return startCli(options).result;
}

/** Every line of output as parsed JSON. */
export function jsonLines(text: string): unknown[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as unknown);
}
