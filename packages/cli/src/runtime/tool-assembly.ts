/**
 * The tools a runtime offers: the workspace tools (per session with `workspaces`, adapted by a mode), the tools
 * of the configured MCP servers, made unique and gated by tool-gating.ts (approval, checkpoints).
 */
import type { ToolHandler, TurnRunOptions } from '@youyou/agent';
// Types only: MCP is imported where it is used, so that `--help` does not load it.
import type {
  ElicitationHandler,
  McpListKind,
  McpServerConfig,
  McpServerConnection,
  McpServerSet,
} from '@youyou/mcp';
import type { ApprovalPolicy } from '../approval/policy.js';
import type { CliSettings } from '../config/config.js';
import { answerOnAbort } from '../tools/answer-on-abort.js';
import { createWorkspaceTools } from '../tools/index.js';
import { openWorkspace, type Workspace } from '../tools/workspace.js';
import type { CheckpointStore } from './checkpoints.js';
import type { Host } from './host.js';
import { SessionAuthProvider } from './mcp-auth.js';
import { connectServers, mcpConfigs } from './mcp-servers.js';
import type { Telemetry } from './telemetry.js';
import { type WorkspaceRouting, workspaceToolsOf } from './tenant-workspaces.js';
import { gateTools, type ReadOnlyTurn } from './tool-gating.js';
import { touchedPathOf, uniqueTools } from './tool-set.js';

/** The runtime's default bound on tool calls and hooks, when the config file does not set toolTimeoutMs. */
const DEFAULT_TOOL_TIMEOUT_MS = 120_000;

/** What the set-up has started and must stop if a later step fails. */
export interface Started {
  mcp?: McpServerSet | undefined;
  telemetry?: Telemetry | undefined;
}

/** The runtime options the tools are assembled from (see `RuntimeOptions` in setup.ts for each). */
interface ToolOptions {
  settings: CliSettings;
  approval: ApprovalPolicy;
  warn: (text: string) => void;
  notice?: (text: string) => void;
  mutatingNeedApproval?: boolean;
  workspaces?: WorkspaceRouting;
  adaptTools?: (tools: ToolHandler[], workspace: Workspace) => ToolHandler[];
  onElicitation?: ElicitationHandler;
  checkpoints?: CheckpointStore | undefined;
}

/**
 * The workspace and MCP tools, gated by tool-gating.ts (approval, checkpoints), and the options every turn
 * runs with.
 */
export async function assembleTools(parts: {
  options: ToolOptions;
  host: Host;
  started: Started;
  readOnly: ReadOnlyTurn;
  /** A server's tools changed (`tools/list_changed`). */
  onToolsChanged: (server: string) => void;
}): Promise<{
  tools: ToolHandler[];
  turnOptions: TurnRunOptions;
  /** The whole tool set again with these MCP tools, prepared as the first one was. */
  withMcpTools: (mcpTools: readonly ToolHandler[]) => ToolHandler[];
  /** Connects server `name` of the config again (after a login); undefined when it still fails (warned). */
  connectMcpServer: (name: string) => Promise<McpServerConnection | undefined>;
}> {
  const { options, host, started, readOnly } = parts;
  const { settings, warn } = options;
  const adapted = workspaceToolsFor(options, host);
  let configs: McpServerConfig[] = [];
  const connectOptions = {
    notice: options.notice ?? warn,
    warn,
    onElicitation: options.onElicitation ?? (async () => ({ action: 'decline' as const })),
    onListChanged: ({ server, list }: { server: string; list: McpListKind }) => {
      if (list === 'tools') parts.onToolsChanged(server);
    },
  };
  if (Object.keys(settings.mcpServers).length > 0) {
    const { validateServerConfig } = await import('@youyou/mcp');
    configs = mcpConfigs({
      servers: settings.mcpServers,
      toolEnv: host.toolEnv,
      warn,
      validateServerConfig,
      authProviderFor: ({ name, url }) =>
        new SessionAuthProvider({ home: settings.home, name, serverUrl: url }),
    });
    if (configs.length > 0) {
      started.mcp = await connectServers({ configs, ...connectOptions });
    }
  }
  const unique = uniqueTools({ tools: [...adapted, ...(started.mcp?.tools ?? [])], warn }).map(answerOnAbort);
  const gated = gateTools({
    tools: unique,
    policy: options.approval,
    rules: settings.approvalRules,
    touchedPath: touchedPathOf(settings.cwd, options.workspaces),
    mutatingNeedApproval: options.mutatingNeedApproval,
    readOnly,
    checkpoints: options.checkpoints,
    toolTimeoutMs: toolTimeoutOf(settings),
    warn,
  });
  return {
    tools: gated.tools,
    turnOptions: gated.turnOptions,
    withMcpTools: (mcpTools) =>
      gated.regate(uniqueTools({ tools: [...adapted, ...mcpTools], warn }).map(answerOnAbort)),
    connectMcpServer: async (name) => {
      const config = configs.find((candidate) => candidate.name === name);
      if (config === undefined) return undefined;
      const set = await connectServers({ configs: [config], ...connectOptions });
      return set.connections[0];
    },
  };
}

/** The workspace tools, confined to the cwd (or each session's folder), with the mode's adaptation applied. */
function workspaceToolsFor(options: ToolOptions, host: Host): ToolHandler[] {
  const { settings } = options;
  const { shellSandbox } = host;
  const workspaceTools = workspaceToolsOf({
    cwd: settings.cwd,
    routing: options.workspaces,
    create: (root, hidden) =>
      createWorkspaceTools({
        root,
        shellSandbox: { ...shellSandbox, hiddenPaths: [...shellSandbox.hiddenPaths, ...hidden] },
        readOnly: settings.sandbox.mode === 'read-only',
        shellEnv: host.toolEnv,
        shell: host.shell,
      }),
  });
  return options.adaptTools === undefined || options.workspaces !== undefined
    ? workspaceTools
    : options.adaptTools(
        workspaceTools,
        openWorkspace(settings.cwd, {
          hiddenPaths: shellSandbox.hiddenPaths,
          readOnly: settings.sandbox.mode === 'read-only',
        }),
      );
}

/** The bound on tool calls and hooks: the config file's toolTimeoutMs, or the runtime's default. */
export function toolTimeoutOf(settings: CliSettings): number {
  return settings.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
}
