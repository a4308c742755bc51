import {
  type Agent,
  AgentBuilder,
  type AgentError,
  type HasProvider,
  type MemoryStorage,
  type SessionStorage,
  type SkillDefinition,
  type ToolHandler,
  type TurnRunOptions,
} from '@youyou/agent';
// Types only: MCP and SQLite are imported where they are used, so that `--help` does not load them.
import type { McpServerSet } from '@youyou/mcp';
import type { SqliteSessionStorage } from '@youyou/sqlite';
import {
  type ApprovalPolicy,
  createApprovalGate,
  createDenyRulesPlugin,
  mutatingToolNames,
} from '../approval/policy.js';
import type { CliSettings } from '../config/config.js';
import { findShell, type SandboxMode, type ShellSandbox } from '../sandbox/sandbox.js';
import { refusedNames, toolEnvironment } from '../sandbox/tool-env.js';
import { neutralizeLine } from '../text/terminal-text.js';
import { answerOnAbort } from '../tools/answer-on-abort.js';
import { createWorkspaceTools } from '../tools/index.js';
import { BASE_INSTRUCTIONS, environmentContext } from './agent-build.js';
import type { CheckpointStore } from './checkpoints.js';
import { projectInstructions } from './instructions.js';
import { connectServers, mcpConfigs } from './mcp-servers.js';
import { preparePrivateHome } from './private-home.js';
import { type ChosenProvider, checkReachable, chooseProvider } from './provider.js';
import { chooseSandbox } from './shell-sandbox.js';
import { loadSkills } from './skills.js';
import { SwitchableProvider } from './switchable-provider.js';
import { startTelemetry, type Telemetry } from './telemetry.js';
import { type WorkspaceRouting, workspaceToolsOf } from './tenant-workspaces.js';
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
  tools: ToolHandler[];
  /** How the shell really runs: the mode in force (danger-full-access after a chosen fallback too). */
  sandbox: { mode: SandboxMode; network: boolean };
  /** The options of every turn: the approver that decides the calls needing approval (none in `serve`). */
  turnOptions: TurnRunOptions;
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
  try {
    started.telemetry = await startTelemetry({ env: options.env, warn: options.warn });
    const { tools, turnOptions } = await assembleTools({ options, host, started });
    const skills = await loadSkills({ settings: options.settings, tools, warn: options.warn });
    const builder = agentBuilder({ options, host, storage });
    if (started.telemetry !== undefined) builder.registerPlugin(started.telemetry.plugin);
    for (const tool of tools) builder.registerTool(tool);
    for (const skill of skills) builder.registerSkill(skill);
    const agent = await builder.build();
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
      tools,
      sandbox: { mode: host.shellSandbox.mode, network: host.shellSandbox.network },
      turnOptions,
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
 * The workspace and MCP tools, each asking the approval gate whether a call needs approval (or, in `serve`,
 * marked for the client's approval), and the options every turn runs with.
 */
async function assembleTools(parts: {
  options: RuntimeOptions<SessionStorage>;
  host: Host;
  started: Started;
}): Promise<{ tools: ToolHandler[]; turnOptions: TurnRunOptions }> {
  const { options, host, started } = parts;
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
  if (Object.keys(settings.mcpServers).length > 0) {
    const { validateServerConfig } = await import('@youyou/mcp');
    const configs = mcpConfigs({
      servers: settings.mcpServers,
      toolEnv: host.toolEnv,
      warn,
      validateServerConfig,
    });
    if (configs.length > 0) {
      started.mcp = await connectServers({ configs, notice: options.notice ?? warn, warn });
    }
  }
  const toolTimeoutMs = toolTimeoutOf(settings);
  const unique = uniqueTools({ tools: [...workspaceTools, ...(started.mcp?.tools ?? [])], warn }).map(
    answerOnAbort,
  );
  const held = options.mutatingNeedApproval !== undefined;
  const gate = createApprovalGate({
    mutating: mutatingToolNames(unique),
    policy: options.approval,
    rules: settings.approvalRules,
    touchedPath: touchedPathOf(settings.cwd, options.workspaces),
    // Leave the runtime's window a margin, so the model is told nobody answered, in the gate's words.
    answerWithinMs: Math.max(500, toolTimeoutMs - Math.min(5000, toolTimeoutMs / 10)),
  });
  const approved = unique.map((tool): ToolHandler => {
    if (held)
      return options.mutatingNeedApproval === true && tool.isMutating
        ? { ...tool, needsApproval: true }
        : tool;
    return { ...tool, needsApproval: (args: unknown) => gate.needsApproval(tool.name, args) };
  });
  const { checkpoints } = options;
  const tools = checkpoints === undefined ? approved : approved.map((tool) => checkpoints.wrap(tool, warn));
  return { tools, turnOptions: held ? {} : { approve: gate.approve, approvalTimeoutMs: toolTimeoutMs } };
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
