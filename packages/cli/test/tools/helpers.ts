import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ToolHandler, ToolOutput } from '@youyou/agent';
import { createWorkspaceTools, type WorkspaceToolsOptions } from '../../src/tools/index.js';

/** A temp folder holding a workspace root and a sibling folder outside it. */
export interface TestWorkspace {
  /** The real path of the workspace root. */
  root: string;
  /** A real folder next to the root, outside it. */
  outside: string;
  tools: ToolHandler[];
  /** Calls a tool by name with the given arguments. */
  call(name: string, args: unknown, signal?: AbortSignal): Promise<ToolOutput>;
  cleanup(): Promise<void>;
}

/** Makes a fresh workspace in a temp folder; `options` go to createWorkspaceTools. */
export async function makeWorkspace(options: Partial<WorkspaceToolsOptions> = {}): Promise<TestWorkspace> {
  const base = await realpath(await mkdtemp(path.join(tmpdir(), 'youyou-tools-')));
  const root = path.join(base, 'root');
  const outside = path.join(base, 'outside');
  await mkdir(root);
  await mkdir(outside);
  const tools = createWorkspaceTools({ ...options, root });
  return {
    root,
    outside,
    tools,
    call: (name, args, signal) => {
      const tool = tools.find((candidate) => candidate.name === name);
      if (tool === undefined) throw new Error(`no tool ${name}`);
      return tool.execute({
        callId: 'call-1',
        arguments: args,
        sessionId: 'session-1',
        turnId: 'turn-1',
        signal: signal ?? new AbortController().signal,
      });
    },
    cleanup: () => rm(base, { recursive: true, force: true }),
  };
}
