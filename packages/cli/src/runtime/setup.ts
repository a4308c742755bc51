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
import type {
  ElicitationHandler,
  McpListKind,
  McpServerConfig,
  McpServerConnection,
  McpServerSet,
} from '@youyou/mcp';
import type { SqliteSessionStorage } from '@youyou/sqlite';
import { type ApprovalPolicy, createDenyRulesPlugin } from '../approval/policy.js';
import type { CliSettings } from '../config/config.js';
import { findShell, type SandboxMode, type ShellSandbox } from '../sandbox/sandbox.js';
import { refusedNames, toolEnvironment } from '../sandbox/tool-env.js';
import { neutralizeLine } from '../text/terminal-text.js';
import { answerOnAbort } from '../tools/answer-on-abort.js';
import { createWorkspaceTools } from '../tools/index.js';
import { openWorkspace, type Workspace } from '../tools/workspace.js';
import { BASE_INSTRUCTIONS, environmentContext } from './agent-build.js';
import type { CheckpointStore } from './checkpoints.js';
import { projectInstructions } from './instructions.js';
import { SessionAuthProvider } from './mcp-auth.js';
import { connectServers, mcpConfigs, mcpToolRefresher } from './mcp-servers.js';
import { preparePrivateHome } from './private-home.js';
import { type ChosenProvider, checkReachable, chooseProvider } from './provider.js';
import { chooseSandbox } from './shell-sandbox.js';
import { loadSkills } from './skills.js';
import { SwitchableProvider } from './switchable-provider.js';
import { startTelemetry, type Telemetry } from './telemetry.js';
import { type WorkspaceRouting, workspaceToolsOf } from './tenant-workspaces.js';
import { gateTools, type ReadOnlyTurn } from './tool-gating.js';
import { touchedPathOf, uniqueTools } from './tool-set.js';

/** The runtime's default bound on tool calls and hooks, when the config file does not set toolTimeoutMs. */
const DEFAULT_TOOL_TIMEOUT_MS = 120_000;

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

/** What the host gives every part before any storage opens: the sandbox, the tools' environment, the model. */
interface Host {
  shellSandbox: ShellSandbox;
  toolEnv: Record<string, string>;
  shell: string;
  models: SwitchableProvider;
}

/** What the set-up has started and must stop if a later step fails. */
interface Started {
  mcp?: McpServerSet | undefined;
  telemetry?: Telemetry | undefined;
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
    const builder = agentBuilder({ options, host, storage });
    if (started.telemetry !== undefined) builder.registerPlugin(started.telemetry.plugin);
    for (const plugin of options.plugins ?? []) builder.registerPlugin(plugin);
    for (const tool of tools) builder.registerTool(tool);
    for (const skill of skills) builder.registerSkill(skill);
    const agent = await builder.build();
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
      mcpLoginsNeeded: (mcp?.failures ?? [])
        .filter((failure) => failure.error.code === 'AUTHORIZATION_REQUIRED')
        .map((failure) => failure.name),
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
      withReadOnlyTools: async (reason, work) => {
        readOnly.reason = reason;
        try {
          return await work();
        } finally {
          readOnly.reason = undefined;
        }
      },
      checkpoints: options.checkpoints,
      close: async () => {
        await agent.shutdown();
        // After the agent: its shutdown ends the spans still open, then they are sent.
        await telemetry?.shutdown();
        await mcp?.close();
        await storage.close().catch(() => undefined);
        options.checkpoints?.close();
      },
    };
  } catch (error) {
    await started.telemetry?.shutdown();
    await started.mcp?.close();
    await storage.close().catch(() => undefined);
    throw error;
  }
}

/** The sandbox, the tools' environment and shell, the provider (reachable), and a private home folder. */
async function prepareHost(options: RuntimeOptions<SessionStorage>): Promise<Host> {
  const { settings, warn } = options;
  const shellSandbox = chooseSandbox({ settings, env: options.env, warn });
  const refused = refusedNames(settings.passEnv);
  if (refused.length > 0) {
    warn(
      `passEnv: ${refused.join(', ')} not passed on: names like these hold credentials and never reach tools`,
    );
  }
  const toolEnv = toolEnvironment({ env: options.env, pass: settings.passEnv });
  const shell = findShell(options.env);
  const provider = await chooseProvider(settings);
  if (provider.name === 'compatible' && provider.baseURL !== undefined)
    await checkReachable(provider.baseURL);
  const models = new SwitchableProvider(provider);
  const tightened = preparePrivateHome(settings.home);
  if (tightened.length > 0)
    warn(`others could read ${neutralizeLine(tightened.join(', '))}; made it private`);
  return { shellSandbox, toolEnv, shell, models };
}

/**
 * The workspace and MCP tools, gated by tool-gating.ts (approval, checkpoints), and the options every turn
 * runs with.
 */
async function assembleTools(parts: {
  options: RuntimeOptions<SessionStorage>;
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
  const adapted =
    options.adaptTools === undefined || options.workspaces !== undefined
      ? workspaceTools
      : options.adaptTools(
          workspaceTools,
          openWorkspace(settings.cwd, {
            hiddenPaths: shellSandbox.hiddenPaths,
            readOnly: settings.sandbox.mode === 'read-only',
          }),
        );
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

/** The bound on tool calls and hooks: the config file's toolTimeoutMs, or the runtime's default. */
function toolTimeoutOf(settings: CliSettings): number {
  return settings.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
}

/** The builder with the instructions, the environment, the limits, the model, the storages and the deny rules. */
function agentBuilder(parts: {
  options: RuntimeOptions<SessionStorage>;
  host: Host;
  storage: RuntimeStorage<SessionStorage>;
}): AgentBuilder<HasProvider> {
  const { options, host, storage } = parts;
  const { settings, warn } = options;
  return new AgentBuilder({
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
}
