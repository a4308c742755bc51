import { homedir, release } from 'node:os';
import path from 'node:path';
import {
  type Agent,
  AgentBuilder,
  type AgentError,
  loadSkillsFromDirectories,
  type MemoryStorage,
  type SessionStorage,
  type SkillDefinition,
  type ToolHandler,
  type TurnRunOptions,
} from '@youyou/agent';
// Types only: MCP and SQLite are imported where they are used, so that `--help` does not load them.
import type { McpServerConfig, McpServerSet } from '@youyou/mcp';
import type { SqliteSessionStorage } from '@youyou/sqlite';
import {
  type ApprovalPolicy,
  createApprovalGate,
  createDenyRulesPlugin,
  mutatingToolNames,
  type TouchedPath,
} from '../approval/policy.js';
import { type CliSettings, ConfigError, type McpServerSetting } from '../config/config.js';
import {
  findExecutable,
  findShell,
  probeSandbox,
  type SandboxMode,
  type ShellSandbox,
  sandboxUnavailableText,
} from '../sandbox/sandbox.js';
import { refusedNames, toolEnvironment } from '../sandbox/tool-env.js';
import { neutralizeLine } from '../text/terminal-text.js';
import { answerOnAbort } from '../tools/answer-on-abort.js';
import { createWorkspaceTools, touchedPathResolver } from '../tools/index.js';
import { projectInstructions } from './instructions.js';
import { preparePrivateHome } from './private-home.js';
import { type ChosenProvider, checkReachable, chooseProvider } from './provider.js';
import { SwitchableProvider } from './switchable-provider.js';
import { startTelemetry, type Telemetry } from './telemetry.js';
import { type WorkspaceRouting, workspaceToolsOf } from './tenant-workspaces.js';

/**
 * What the approval rules match a call's path on: the path resolved in the workspace the call will run in —
 * the cwd, or with `routing` its session's own folder (a session without one is never matched by an allow rule).
 */
function touchedPathOf(cwd: string, routing: WorkspaceRouting | undefined): TouchedPath {
  if (routing === undefined) return touchedPathResolver(cwd);
  return async (request, sessionId) => {
    const folder = await routing.workspaceOf(sessionId);
    if (folder === undefined) throw new Error(`session ${sessionId} has no workspace`);
    return touchedPathResolver(folder)(request);
  };
}

/** The CLI's own instructions, before those of the config file. */
const BASE_INSTRUCTIONS = [
  "You are youyou, a coding agent in the user's terminal. You work in the workspace folder through your tools: " +
    'read files before you change them, keep changes small and focused, and run commands only when they help.',
  'Answer in plain text suited to a terminal; be brief, and say what you changed.',
];

/** The runtime's default bound on tool calls and hooks, when the config file does not set toolTimeoutMs. */
const DEFAULT_TOOL_TIMEOUT_MS = 120_000;

/** How long MCP servers may take to connect before the user is told that youyou is waiting for them. */
const CONNECTING_NOTICE_AFTER_MS = 300;

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
  /** Shuts the agent down (closing its session), then MCP servers and the database. Never rejects. */
  close(): Promise<void>;
}

/**
 * The MCP configs of the settings. A stdio server gets the tools' environment (the MCP SDK adds HOME,
 * LOGNAME, PATH, SHELL, TERM and USER itself) and then its own `env` of the config file: values the user
 * wrote for that one server, the way to hand it a token.
 */
function mcpConfigs(options: {
  servers: Record<string, McpServerSetting>;
  toolEnv: Readonly<Record<string, string>>;
  warn: (text: string) => void;
  validateServerConfig: (config: unknown) => void;
}): McpServerConfig[] {
  const sdkDefaults = new Set(['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER']);
  const inherited = Object.fromEntries(
    Object.entries(options.toolEnv).filter(([name]) => !sdkDefaults.has(name)),
  );
  const configs: McpServerConfig[] = [];
  for (const [name, server] of Object.entries(options.servers)) {
    const transport =
      'url' in server
        ? { type: 'http' as const, url: server.url, ...(server.headers ? { headers: server.headers } : {}) }
        : {
            type: 'stdio' as const,
            command: server.command,
            ...(server.args ? { args: server.args } : {}),
            env: { ...inherited, ...server.env },
            ...(server.cwd ? { cwd: server.cwd } : {}),
          };
    const config = {
      name,
      transport,
      ...(server.timeoutMs === undefined ? {} : { timeoutMs: server.timeoutMs }),
    };
    try {
      options.validateServerConfig(config);
      configs.push(config);
    } catch (error) {
      options.warn(`MCP server "${name}" skipped: ${messageOf(error)}`);
    }
  }
  return configs;
}

function messageOf(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/^\[[A-Z_]+\] /, '');
}

/** Skills whose required tools are missing, or whose name is taken, are left out with a warning. */
function usableSkills(options: {
  skills: readonly SkillDefinition[];
  toolNames: ReadonlySet<string>;
  warn: (text: string) => void;
}): SkillDefinition[] {
  const seen = new Set<string>();
  const usable: SkillDefinition[] = [];
  for (const skill of options.skills) {
    if (seen.has(skill.name)) {
      options.warn(
        `skill '${skill.name}' is defined more than once; the first one (workspace before home) is used`,
      );
      continue;
    }
    const missing = (skill.requiredTools ?? []).filter((tool) => !options.toolNames.has(tool));
    if (missing.length > 0) {
      options.warn(
        `skill '${skill.name}' skipped: it needs the tool(s) ${missing.join(', ')}, which are not available`,
      );
      continue;
    }
    seen.add(skill.name);
    usable.push(skill);
  }
  return usable;
}

/** Tools of MCP servers whose names clash with a workspace tool are left out with a warning. */
function uniqueTools(options: {
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

/** Where the agent runs, for the dynamic part of the system prompt; `shell` is the one the shell tool runs. */
function environmentContext(settings: CliSettings, shell: string) {
  const now = new Date();
  const pad = (value: number): string => String(value).padStart(2, '0');
  return {
    cwd: settings.cwd,
    platform: `${process.platform} ${release()}`,
    shell,
    date: `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`,
    timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
  };
}

/**
 * The sandbox the shell runs in. When bubblewrap cannot start, this throws a ConfigError of one line saying
 * how to fix it, unless the user chose to run unconfined then (`sandbox.allowUnconfined`): a warning then.
 */
function chooseSandbox(options: {
  settings: CliSettings;
  env: NodeJS.ProcessEnv;
  warn: (text: string) => void;
}): ShellSandbox {
  const { sandbox } = options.settings;
  // A bare name is looked up on the user's PATH once, so that the probe and every command run the same file.
  const bwrap = sandbox.bwrapPath.includes('/')
    ? path.resolve(sandbox.bwrapPath)
    : findExecutable({ name: sandbox.bwrapPath, env: options.env });
  const chosen: ShellSandbox = {
    mode: sandbox.mode,
    network: sandbox.mode === 'danger-full-access' || sandbox.network,
    bwrapPath: bwrap ?? sandbox.bwrapPath,
    hiddenPaths: sandbox.hiddenPaths,
    limits: sandbox.limits,
  };
  if (chosen.mode === 'danger-full-access') {
    options.warn('sandbox mode danger-full-access: the shell runs unconfined, with network access');
    return chosen;
  }
  const probe =
    bwrap === undefined
      ? { ok: false as const, reason: `${sandbox.bwrapPath} is not installed (not found on PATH)` }
      : probeSandbox({ sandbox: chosen, workspaceRoot: options.settings.cwd });
  if (probe.ok) return chosen;
  if (!sandbox.allowUnconfined) throw new ConfigError(sandboxUnavailableText(probe.reason));
  options.warn(`${probe.reason}; the shell runs unconfined (sandbox.allowUnconfined is set in config.json)`);
  return { ...chosen, mode: 'danger-full-access', network: true };
}

/**
 * Connects the MCP servers; when they take longer than a moment (a server that hangs waits its
 * `timeoutMs`), `notice` says so first, so the terminal never sits silent.
 */
async function connectServers(options: {
  configs: McpServerConfig[];
  notice: (text: string) => void;
  warn: (text: string) => void;
}): Promise<McpServerSet> {
  const { connectMcpServers } = await import('@youyou/mcp');
  const names = options.configs.map((config) => config.name).join(', ');
  const timer = setTimeout(
    () => options.notice(`connecting to MCP server${options.configs.length === 1 ? '' : 's'} ${names}…`),
    CONNECTING_NOTICE_AFTER_MS,
  );
  try {
    const set = await connectMcpServers(options.configs);
    for (const failure of set.failures) options.warn(messageOf(failure.error));
    return set;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Builds the agent from the settings: provider (checked reachable when it is a local server), workspace and
 * MCP tools, skills from disk, the approval plugin and the storages `openStorage` opens. Problems that leave a part out
 * (a skill file, an MCP server) are warnings; a missing provider or database rejects.
 */
export async function setUpRuntime<Sessions extends SessionStorage = SqliteSessionStorage>(options: {
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
}): Promise<CliRuntime<Sessions>> {
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
  const storage = await options.openStorage();
  let mcp: McpServerSet | undefined;
  let telemetry: Telemetry | undefined;
  try {
    telemetry = await startTelemetry({ env: options.env, warn });
    const workspaceTools = workspaceToolsOf({
      cwd: settings.cwd,
      routing: options.workspaces,
      create: (root, hidden) =>
        createWorkspaceTools({
          root,
          shellSandbox: { ...shellSandbox, hiddenPaths: [...shellSandbox.hiddenPaths, ...hidden] },
          readOnly: settings.sandbox.mode === 'read-only',
          shellEnv: toolEnv,
          shell,
        }),
    });
    if (Object.keys(settings.mcpServers).length > 0) {
      const { validateServerConfig } = await import('@youyou/mcp');
      const configs = mcpConfigs({ servers: settings.mcpServers, toolEnv, warn, validateServerConfig });
      if (configs.length > 0) mcp = await connectServers({ configs, notice: options.notice ?? warn, warn });
    }
    const toolTimeoutMs = settings.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    const unique = uniqueTools({ tools: [...workspaceTools, ...(mcp?.tools ?? [])], warn }).map(
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
    const tools = unique.map((tool): ToolHandler => {
      if (held)
        return options.mutatingNeedApproval === true && tool.isMutating
          ? { ...tool, needsApproval: true }
          : tool;
      return { ...tool, needsApproval: (args: unknown) => gate.needsApproval(tool.name, args) };
    });
    const loaded = await loadSkillsFromDirectories({
      directories: [
        path.join(settings.cwd, '.youyou', 'skills'),
        // Agent Skills' shared locations, read by other agents too.
        path.join(settings.cwd, '.agents', 'skills'),
        path.join(settings.home, 'skills'),
        path.join(homedir(), '.agents', 'skills'),
      ],
    });
    for (const problem of loaded.problems) warn(`skill ${problem.path}: ${problem.message}`);
    const skills = usableSkills({
      skills: loaded.skills,
      toolNames: new Set(tools.map((tool) => tool.name)),
      warn,
    });

    const builder = new AgentBuilder({
      defaultModel: provider.modelId,
      systemInstructions: [
        ...BASE_INSTRUCTIONS,
        ...settings.systemInstructions,
        ...projectInstructions({ workspace: settings.cwd, warn }),
      ],
      // With a workspace per session the server's own folder is not where the model works: paths are relative.
      environmentContext: environmentContext(
        options.workspaces === undefined ? settings : { ...settings, cwd: '.' },
        shell,
      ),
      toolTimeoutMs,
      ...(options.maxActiveSessions === undefined ? {} : { maxActiveSessions: options.maxActiveSessions }),
      ...(options.approvalWindowMs === undefined ? {} : { approvalWindowMs: options.approvalWindowMs }),
      onBackgroundError: (error) => {
        // The memory request skipped after a failed turn: that failure was reported already.
        if (error !== models.skippedMemoryError) options.onBackgroundError(error);
      },
    })
      .registerModelProvider(models)
      .registerSessionStorage(storage.sessions)
      .registerMemoryStorage(storage.memories)
      .registerPlugin(
        createDenyRulesPlugin(settings.approvalRules, touchedPathOf(settings.cwd, options.workspaces)),
      );
    if (telemetry !== undefined) builder.registerPlugin(telemetry.plugin);
    for (const tool of tools) builder.registerTool(tool);
    for (const skill of skills) builder.registerSkill(skill);
    const agent = await builder.build();
    const servers = mcp;
    const exporting = telemetry;
    return {
      agent,
      sessions: storage.sessions,
      get provider() {
        return models.current;
      },
      switchModel: async (name) => {
        const next = await chooseProvider({ ...settings, model: name });
        models.switchTo(next);
        return next;
      },
      skills,
      tools,
      sandbox: { mode: shellSandbox.mode, network: shellSandbox.network },
      turnOptions: held ? {} : { approve: gate.approve, approvalTimeoutMs: toolTimeoutMs },
      close: async () => {
        await agent.shutdown();
        // After the agent: its shutdown ends the spans still open, then they are sent.
        await exporting?.shutdown();
        await servers?.close();
        await storage.close().catch(() => undefined);
      },
    };
  } catch (error) {
    await telemetry?.shutdown();
    await mcp?.close();
    await storage.close().catch(() => undefined);
    throw error;
  }
}
