import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { ToolHandler, ToolInput, ToolOutput } from '@youyou/agent';
import type { CliSettings } from '../config/config.js';
import { neutralizeLine } from '../text/terminal-text.js';

/** How `youyou serve` gives sessions their workspace folders (config "server.workspaces"). */
export type WorkspaceMode = 'tenant' | 'session' | 'shared';

/** Longest folder name `tenantFolderName` makes: well under the 255 bytes of NAME_MAX. */
const MAX_FOLDER_NAME = 120;

/**
 * A folder name for a tenant (or session) name that is safe whatever the name holds (`..`, `/`, NUL,
 * unicode, upper case on a case-insensitive disk) and different for every two names: lower-case letters,
 * digits and `-` stay, every other UTF-8 byte becomes `_` and two hex digits (so `_` itself is escaped and
 * nothing else makes one). A name whose escaped form is too long becomes its first characters, `~` (which
 * no escaped form holds) and the SHA-256 of the whole name.
 */
export function tenantFolderName(name: string): string {
  let escaped = '';
  for (const byte of Buffer.from(name, 'utf8')) {
    const character = String.fromCharCode(byte);
    escaped += /[a-z0-9-]/.test(character) ? character : `_${byte.toString(16).padStart(2, '0')}`;
  }
  if (escaped.length > 0 && escaped.length <= MAX_FOLDER_NAME) return escaped;
  const digest = createHash('sha256').update(name, 'utf8').digest('hex');
  // Cut after whole escapes only, so that the prefix is itself a valid escaped form.
  const prefix = escaped.slice(0, 48).replace(/_[0-9a-f]?$/, '');
  return `${prefix}~${digest}`;
}

/**
 * The workspace folder of a session, created (private to this user) when missing: `root/<tenant>` in
 * `tenant` mode, `root/<tenant>/<session>` in `session` mode.
 */
export async function ensureWorkspaceFolder(options: {
  root: string;
  mode: 'tenant' | 'session';
  tenant: string;
  sessionId: string;
}): Promise<string> {
  const tenantFolder = path.join(options.root, tenantFolderName(options.tenant));
  const folder =
    options.mode === 'tenant' ? tenantFolder : path.join(tenantFolder, tenantFolderName(options.sessionId));
  await mkdir(folder, { recursive: true, mode: 0o700 });
  return folder;
}

/**
 * Workspace tools that each act in the workspace of the session calling them: a call asks `workspaceOf` for
 * the session's folder and runs the same tool made for that folder (`toolsFor`, with the CLI's confinement),
 * so one agent serves every tenant while no call reaches another's files. `template` gives the names,
 * descriptions and schemas the model sees. A session with no workspace (unknown to the server) gets an
 * error result and nothing runs.
 */
export function routedWorkspaceTools(options: {
  template: readonly ToolHandler[];
  workspaceOf: (sessionId: string) => Promise<string | undefined>;
  toolsFor: (folder: string) => readonly ToolHandler[];
}): ToolHandler[] {
  return options.template.map((tool) => ({
    name: tool.name,
    description: tool.description,
    parametersSchema: tool.parametersSchema,
    isMutating: tool.isMutating,
    ...(tool.needsApproval === undefined ? {} : { needsApproval: tool.needsApproval }),
    async execute(input: ToolInput): Promise<ToolOutput> {
      const folder = await options.workspaceOf(input.sessionId);
      const own =
        folder === undefined ? undefined : options.toolsFor(folder).find((t) => t.name === tool.name);
      if (own === undefined) {
        return { content: 'this session has no workspace: the call was not run', isError: true };
      }
      return own.execute(input);
    },
  }));
}

/** Where each session's workspace is: the folder holding them all, and the folder of one session. */
export interface WorkspaceRouting {
  /** Hidden from every session's shell, but for the session's own workspace inside it. */
  root: string;
  workspaceOf: (sessionId: string) => Promise<string | undefined>;
}

/**
 * The workspace tools: confined to the cwd, or (with `routing`) each call to its session's own folder, the
 * folder of all workspaces hidden from the shell around it.
 */
export function workspaceToolsOf(options: {
  cwd: string;
  routing: WorkspaceRouting | undefined;
  create: (root: string, hidden: readonly string[]) => ToolHandler[];
}): ToolHandler[] {
  const { routing, create } = options;
  const template = create(options.cwd, []);
  if (routing === undefined) return template;
  return routedWorkspaceTools({
    template,
    workspaceOf: routing.workspaceOf,
    toolsFor: (folder) => create(folder, [routing.root]),
  });
}

/** The workspaces of `youyou serve`: the routing of sessions to folders, its banner line, and the tenants' source. */
export interface ServeWorkspaces {
  routing: WorkspaceRouting | undefined;
  description: string;
  knowTenants: (tenantOf: (sessionId: string) => Promise<string | undefined>) => void;
}

/**
 * The workspaces of `youyou serve`'s sessions from the config ("server.workspaces", "server.workspaceRoot"):
 * the routing for the tools (none for "shared": the cwd), a line for the banner, and `knowTenants`, which
 * the server's `tenantOf` is handed to once it exists (no tool runs before). The root is made private.
 */
export async function serveWorkspaces(settings: CliSettings): Promise<ServeWorkspaces> {
  const mode = settings.server?.workspaces ?? 'tenant';
  const root = path.resolve(
    settings.cwd,
    settings.server?.workspaceRoot ?? path.join(settings.home, 'workspaces'),
  );
  let tenantOf: ((sessionId: string) => Promise<string | undefined>) | undefined;
  const knowTenants = (lookup: typeof tenantOf): void => {
    tenantOf = lookup;
  };
  if (mode === 'shared') {
    return {
      routing: undefined,
      description: `every tenant works in ${neutralizeLine(settings.cwd)} (server.workspaces "shared")`,
      knowTenants,
    };
  }
  await mkdir(root, { recursive: true, mode: 0o700 });
  const workspaceOf = async (sessionId: string): Promise<string | undefined> => {
    const tenant = await tenantOf?.(sessionId);
    return tenant === undefined ? undefined : ensureWorkspaceFolder({ root, mode, tenant, sessionId });
  };
  return {
    routing: { root, workspaceOf },
    description: `a workspace per ${mode} in ${neutralizeLine(root)}`,
    knowTenants,
  };
}
