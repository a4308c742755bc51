import {
  type Agent,
  AgentBuilder,
  type AgentError,
  type HasProvider,
  type MemoryStorage,
  type Plugin,
  type SessionStorage,
  type SkillDefinition,
  type ToolHandler,
  type TurnRunOptions,
} from '@youyou/agent';
// Types only: MCP and SQLite are imported where they are used, so that `--help` does not load them.
import type { ElicitationHandler, McpServerConnection, McpServerSet } from '@youyou/mcp';
import type { SqliteSessionStorage } from '@youyou/sqlite';
import { type ApprovalPolicy, createDenyRulesPlugin } from '../approval/policy.js';
import type { CliSettings } from '../config/config.js';
import type { SandboxMode } from '../sandbox/sandbox.js';
import type { Workspace } from '../tools/workspace.js';
import { BASE_INSTRUCTIONS, environmentContext } from './agent-build.js';
import type { CheckpointStore } from './checkpoints.js';
import { type Host, prepareHost } from './host.js';
import { projectInstructions } from './instructions.js';
import { mcpToolRefresher } from './mcp-servers.js';
import { type ChosenProvider, chooseProvider } from './provider.js';
import { loadSkills } from './skills.js';
import { startTelemetry, type Telemetry } from './telemetry.js';
import type { WorkspaceRouting } from './tenant-workspaces.js';
import { assembleTools, type Started, toolTimeoutOf } from './tool-assembly.js';
import type { ReadOnlyTurn } from './tool-gating.js';
import { touchedPathOf } from './tool-set.js';

/** Where a runtime keeps sessions and memories: youyou.db, or PostgreSQL for `youyou serve --database-url`. */
export interface RuntimeStorage<Sessions extends SessionStorage = SqliteSessionStorage> {
  sessions: Sessions;
  memories: MemoryStorage;
  /** Releases what it holds (leases, connections, the file). */
  close(): Promise<void>;
}

/** Opens youyou.db of the home folder; `onBackgroundError` hears a claim on a session that could not be renewed. */
export async function openHomeStorage(options: {
  settings: CliSettings;
  onBackgroundError: (error: AgentError) => void;
}): Promise<RuntimeStorage> {
  const { openSqliteStorage } = await import('@youyou/sqlite');
  return openSqliteStorage(options.settings.databasePath, { onBackgroundError: options.onBackgroundError });
}

/** Everything a chat runs with, and how to tear it down. */
export interface CliRuntime<Sessions extends SessionStorage = SqliteSessionStorage> {
  agent: Agent;
  sessions: Sessions;
  /** The provider and model requests go to now (`/model` changes it). */
  readonly provider: ChosenProvider;
  /** Sends the later requests of this session (and the next ones) to model `name` of the same provider. */
  switchModel(name: string): Promise<ChosenProvider>;
  skills: SkillDefinition[];
  /** The tools offered now (an MCP server's changed list replaces its old tools). */
  readonly tools: ToolHandler[];
  /** The MCP servers that connected (their prompts are `/server:prompt` commands). */
  mcpServers: readonly McpServerConnection[];
  /**
   * Resolves once the tools of servers that said theirs changed are listed again and offered (to turns that
   * start after that); the chat waits for it before each turn.
   */
  mcpToolsSettled(): Promise<void>;
  /** The HTTP MCP servers left out at the start because they need a login (`youyou mcp login NAME`). */
  mcpLoginsNeeded: readonly string[];
  /** Connects server `name` (after its login) and gives its tools to the next turn; false when it failed (warned). */
  connectMcpServer(name: string): Promise<boolean>;
  /** How the shell really runs: the mode in force (danger-full-access after a chosen fallback too). */
  sandbox: { mode: SandboxMode; network: boolean };
  /** The options of every turn: the approver that decides the calls needing approval (none in `serve`). */
  turnOptions: TurnRunOptions;
  /** Long-term memories (the CLI keeps them in the `default` namespace). */
  memories: MemoryStorage;
  /**
   * Runs `work` (a turn) with the mutating tools refused: each of their calls is denied with `reason`, --yes
   * and allow rules notwithstanding. For turns that must only look, like /init's.
   */
  withReadOnlyTools<T>(reason: string, work: () => Promise<T>): Promise<T>;
  /** The workspace's checkpoints, when the mode keeps them (the chat and `-p`). */
  checkpoints: CheckpointStore | undefined;
  /** Shuts the agent down (closing its session), then MCP servers and the database. Never rejects. */
  close(): Promise<void>;
}

/** What `setUpRuntime` takes. */
export interface RuntimeOptions<Sessions extends SessionStorage = SqliteSessionStorage> {
  settings: CliSettings;
  /**
   * Opens the storages, once the home folder is private and the provider is known to be there: `openHomeStorage`
   * for youyou.db. They are closed by the runtime's `close()`, or here when the set-up fails.
   */
  openStorage: () => Promise<RuntimeStorage<Sessions>>;
  env: NodeJS.ProcessEnv;
  approval: ApprovalPolicy;
  warn: (text: string) => void;
  /** A line saying what youyou waits for (`connecting…`), on stderr; default `warn`. */
  notice?: (text: string) => void;
  onBackgroundError: (error: AgentError) => void;
  /** Sessions the agent holds at once (default 1; `youyou serve` holds many). */
  maxActiveSessions?: number;
  /**
   * Set by `youyou serve`: approvals are held for a client. True: mutating tools need approval, and with no
   * in-process approver their calls suspend the turn until a client approves or denies them (without --yes).
   * Unset (`-p` and the chat): every turn gets the in-process approver of `approval` (`turnOptions`).
   */
  mutatingNeedApproval?: boolean;
  /** How long a suspended turn's calls wait for a decision before they count as denied (the agent's `approvalWindowMs`). */
  approvalWindowMs?: number;
  /** Each session's own workspace folder (`youyou serve`'s tenants); without it every session works in the cwd. */
  workspaces?: WorkspaceRouting;
  /**
   * Replaces some workspace tools (`youyou acp`: the file tools go through the editor's buffers); `workspace`
   * is the confinement they must keep: the cwd, the sandbox's hidden paths, read-only. Not with `workspaces`.
   */
  adaptTools?: (tools: ToolHandler[], workspace: Workspace) => ToolHandler[];
  /** More plugins of the mode (`youyou acp` watches why model calls stop). */
  plugins?: readonly Plugin[];
  /** Answers MCP servers' questions (elicitation); default: every question is declined (no one to ask). */
  onElicitation?: ElicitationHandler;
  /** Records the workspace before and after every mutating call (see checkpoints.ts). */
  checkpoints?: CheckpointStore | undefined;
}

/**
 * Builds the agent from the settings: provider (checked reachable when it is a local server), workspace and
 * MCP tools, skills from disk, the approval plugin and the storages `openStorage` opens. Problems that leave a
 * part out (a skill file, an MCP server) are warnings; a missing provider or database rejects.
 */
export async function setUpRuntime<Sessions extends SessionStorage = SqliteSessionStorage>(
  options: RuntimeOptions<Sessions>,
): Promise<CliRuntime<Sessions>> {
  const host = await prepareHost(options);
  const storage = await options.openStorage();
  const started: Started = {};
  const readOnly: ReadOnlyTurn = { reason: undefined };
  // Bound once the agent is built: a server's changed tools replace its old ones from the next turn on.
  let replaceMcpTools: ((mcpTools: ToolHandler[]) => void) | undefined;
  const refresher = mcpToolRefresher({
    connections: () => started.mcp?.connections ?? [],
    apply: (mcpTools) => replaceMcpTools?.(mcpTools),
    warn: options.warn,
  });
  try {
    started.telemetry = await startTelemetry({ env: options.env, warn: options.warn });
    const assembled = await assembleTools({
      options,
      host,
      started,
      readOnly,
      onToolsChanged: (server) => refresher.changed(server),
    });
    const { turnOptions } = assembled;
    let { tools } = assembled;
    const skills = await loadSkills({ settings: options.settings, tools, warn: options.warn });
    const agent = await agentBuilder({
      options,
      host,
      storage,
      telemetry: started.telemetry,
      tools,
      skills,
    }).build();
    replaceMcpTools = (mcpTools) => {
      const next = assembled.withMcpTools(mcpTools);
      agent.replaceTools(next);
      tools = next;
    };
    const { mcp, telemetry } = started;
    return {
      agent,
      sessions: storage.sessions,
      get provider() {
        return host.models.current;
      },
      switchModel: async (name) => {
        const next = await chooseProvider({ ...options.settings, model: name });
        host.models.switchTo(next);
        return next;
      },
      skills,
      get tools() {
        return tools;
      },
      mcpServers: mcp?.connections ?? [],
      mcpToolsSettled: () => refresher.settled(),
      mcpLoginsNeeded: loginsNeeded(mcp),
      connectMcpServer: async (name) => {
        const connection = await assembled.connectMcpServer(name);
        if (connection === undefined || mcp === undefined) return false;
        mcp.connections.push(connection);
        refresher.changed(name);
        await refresher.settled();
        return true;
      },
      sandbox: { mode: host.shellSandbox.mode, network: host.shellSandbox.network },
      turnOptions,
      memories: storage.memories,
      withReadOnlyTools: (reason, work) => readOnlyDuring({ readOnly, reason, work }),
      checkpoints: options.checkpoints,
      close: () =>
        closeRuntime({ agent, started: { mcp, telemetry }, storage, checkpoints: options.checkpoints }),
    };
  } catch (error) {
    await started.telemetry?.shutdown();
    await started.mcp?.close();
    await storage.close().catch(() => undefined);
    throw error;
  }
}

/** Runs `work` with the mutating tools refused for `reason` (see `CliRuntime.withReadOnlyTools`). */
async function readOnlyDuring<T>(parts: {
  readOnly: ReadOnlyTurn;
  reason: string;
  work: () => Promise<T>;
}): Promise<T> {
  const { readOnly } = parts;
  readOnly.reason = parts.reason;
  try {
    return await parts.work();
  } finally {
    readOnly.reason = undefined;
  }
}

/** The HTTP MCP servers left out because they need a login. */
function loginsNeeded(mcp: McpServerSet | undefined): string[] {
  return (mcp?.failures ?? [])
    .filter((failure) => failure.error.code === 'AUTHORIZATION_REQUIRED')
    .map((failure) => failure.name);
}

/** Shuts the agent down (closing its session), then telemetry, the MCP servers, the storages and the checkpoints. */
async function closeRuntime(parts: {
  agent: Agent;
  started: Started;
  storage: RuntimeStorage<SessionStorage>;
  checkpoints: CheckpointStore | undefined;
}): Promise<void> {
  const { started, storage } = parts;
  await parts.agent.shutdown();
  // After the agent: its shutdown ends the spans still open, then they are sent.
  await started.telemetry?.shutdown();
  await started.mcp?.close();
  await storage.close().catch(() => undefined);
  parts.checkpoints?.close();
}

/**
 * The builder with the instructions, the environment, the limits, the model, the storages and the deny rules, then
 * the telemetry's and the mode's plugins, the tools and the skills.
 */
function agentBuilder(parts: {
  options: RuntimeOptions<SessionStorage>;
  host: Host;
  storage: RuntimeStorage<SessionStorage>;
  telemetry: Telemetry | undefined;
  tools: readonly ToolHandler[];
  skills: readonly SkillDefinition[];
}): AgentBuilder<HasProvider> {
  const { options, host, storage, telemetry } = parts;
  const { settings, warn } = options;
  const builder = new AgentBuilder({
    defaultModel: host.models.current.modelId,
    systemInstructions: [
      ...BASE_INSTRUCTIONS,
      ...settings.systemInstructions,
      ...projectInstructions({ workspace: settings.cwd, warn }),
    ],
    // With a workspace per session the server's own folder is not where the model works: paths are relative.
    environmentContext: environmentContext(
      options.workspaces === undefined ? settings : { ...settings, cwd: '.' },
      host.shell,
    ),
    toolTimeoutMs: toolTimeoutOf(settings),
    ...(settings.maxCostUsd === undefined
      ? {}
      : { budget: { session: { maxCostUsd: settings.maxCostUsd } } }),
    ...(options.maxActiveSessions === undefined ? {} : { maxActiveSessions: options.maxActiveSessions }),
    ...(options.approvalWindowMs === undefined ? {} : { approvalWindowMs: options.approvalWindowMs }),
    onBackgroundError: (error) => {
      // The memory request skipped after a failed turn: that failure was reported already.
      if (error !== host.models.skippedMemoryError) options.onBackgroundError(error);
    },
  })
    .registerModelProvider(host.models)
    .registerSessionStorage(storage.sessions)
    .registerMemoryStorage(storage.memories)
    .registerPlugin(
      createDenyRulesPlugin(settings.approvalRules, touchedPathOf(settings.cwd, options.workspaces)),
    );
  if (telemetry !== undefined) builder.registerPlugin(telemetry.plugin);
  for (const plugin of options.plugins ?? []) builder.registerPlugin(plugin);
  for (const tool of parts.tools) builder.registerTool(tool);
  for (const skill of parts.skills) builder.registerSkill(skill);
  return builder;
}
