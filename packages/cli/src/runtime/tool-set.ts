import type { ToolHandler } from '@youyou/agent';
import type { TouchedPath } from '../approval/policy.js';
import { touchedPathResolver } from '../tools/index.js';
import type { WorkspaceRouting } from './tenant-workspaces.js';

/**
 * What the approval rules match a call's path on: the path resolved in the workspace the call will run in —
 * the cwd, or with `routing` its session's own folder (a session without one is never matched by an allow rule).
 */
export function touchedPathOf(cwd: string, routing: WorkspaceRouting | undefined): TouchedPath {
  if (routing === undefined) return touchedPathResolver(cwd);
  return async (request, sessionId) => {
    const folder = await routing.workspaceOf(sessionId);
    if (folder === undefined) throw new Error(`session ${sessionId} has no workspace`);
    return touchedPathResolver(folder)(request);
  };
}

/** Tools of MCP servers whose names clash with a workspace tool are left out with a warning. */
export function uniqueTools(options: {
  tools: readonly ToolHandler[];
  warn: (text: string) => void;
}): ToolHandler[] {
  const names = new Set<string>();
  const unique: ToolHandler[] = [];
  for (const tool of options.tools) {
    if (names.has(tool.name)) {
      options.warn(`tool '${tool.name}' is offered twice; the second one is left out`);
      continue;
    }
    names.add(tool.name);
    unique.push(tool);
  }
  return unique;
}
