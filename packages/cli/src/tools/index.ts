import { AgentError, type ToolHandler } from '@youyou/agent';
import type { ShellSandbox } from '../sandbox/sandbox.js';
import { createEditFileTool } from './edit-file.js';
import { createGlobTool } from './glob.js';
import { createGrepTool } from './grep.js';
import { createListDirTool } from './list-dir.js';
import { createReadFileTool } from './read-file.js';
import { createShellTool, defaultShellSandbox } from './shell.js';
import { openWorkspace, touchedPath } from './workspace.js';
import { createWriteFileTool } from './write-file.js';

export { defaultShellSandbox, SHELL_DEFAULT_TIMEOUT_MS, SHELL_MAX_TIMEOUT_MS } from './shell.js';

/** What `createWorkspaceTools` takes. */
export interface WorkspaceToolsOptions {
  /** The folder every tool is confined to; relative paths given to the tools resolve against it. */
  root: string;
  /** The shell tool's timeout for calls that give none (default 60 s, at most 10 minutes). */
  shellTimeoutMs?: number;
  /** How many bytes of shell output a result keeps, first and last halves (default 64 KiB). */
  outputLimitBytes?: number;
  /**
   * How the shell tool is confined (default: workspace-write in bubblewrap, no network). The file tools honour
   * it too: they never see its hidden paths, and in read-only mode write_file and edit_file refuse.
   */
  shellSandbox?: ShellSandbox;
  /**
   * write_file and edit_file refuse every call (default: when the shell's sandbox is read-only). Given apart
   * because a read-only session whose shell had to run unconfined (sandbox.allowUnconfined) stays read-only.
   */
  readOnly?: boolean;
  /** The environment of shell commands (default: the allowlisted variables of this process). */
  shellEnv?: Readonly<Record<string, string>>;
  /** The shell that runs commands (default: bash when there is one, else /bin/sh). */
  shell?: string;
}

/**
 * The workspace tools: read_file, list_dir, glob and grep (read-only), write_file, edit_file and shell
 * (mutating). Every path is confined to `root`; failures are `isError` results, never thrown. Throws
 * AgentError INVALID_CONFIG when `root` is not an existing directory.
 */
export function createWorkspaceTools(options: WorkspaceToolsOptions): ToolHandler[] {
  for (const key of ['shellTimeoutMs', 'outputLimitBytes'] as const) {
    const value = options[key];
    if (value !== undefined && (!Number.isInteger(value) || value < 1)) {
      throw new AgentError({
        code: 'INVALID_CONFIG',
        message: `${key} must be a positive integer, got ${value}`,
      });
    }
  }
  const sandbox = options.shellSandbox ?? defaultShellSandbox();
  const workspace = openWorkspace(options.root, {
    hiddenPaths: sandbox.hiddenPaths,
    readOnly: options.readOnly ?? sandbox.mode === 'read-only',
  });
  return [
    createReadFileTool(workspace),
    createListDirTool(workspace),
    createGlobTool(workspace),
    createGrepTool(workspace),
    createWriteFileTool(workspace),
    createEditFileTool(workspace),
    createShellTool({
      workspace,
      ...(options.shellTimeoutMs !== undefined && { defaultTimeoutMs: options.shellTimeoutMs }),
      ...(options.outputLimitBytes !== undefined && { outputLimitBytes: options.outputLimitBytes }),
      sandbox,
      ...(options.shellEnv !== undefined && { env: options.shellEnv }),
      ...(options.shell !== undefined && { shell: options.shell }),
    }),
  ];
}

/**
 * For approval rules: the path a workspace tool's call will really act on, symlinks resolved, relative to
 * `root` (undefined for other tools and calls without a path).
 */
export function touchedPathResolver(
  root: string,
): (request: { toolName: string; arguments: unknown }) => Promise<string | undefined> {
  const workspace = openWorkspace(root);
  return (request) => touchedPath({ workspace, toolName: request.toolName, args: request.arguments });
}
