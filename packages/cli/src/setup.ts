import { release } from 'node:os';
import path from 'node:path';
import {
  type Agent,
  AgentBuilder,
  type AgentError,
  loadSkillsFromDirectories,
  type SessionStorage,
  type SkillDefinition,
  type ToolHandler,
} from '@youyou/agent';
import {
  connectMcpServers,
  type McpServerConfig,
  type McpServerSet,
  validateServerConfig,
} from '@youyou/mcp';
import { openSqliteStorage, type SqliteStorage } from '@youyou/sqlite';
import { type ApprovalPolicy, createApprovalPlugin, mutatingToolNames } from './approval.js';
import type { CliSettings, McpServerSetting } from './config.js';
import { preparePrivateHome } from './private-home.js';
import { type ChosenProvider, checkReachable, chooseProvider } from './provider.js';
import { neutralizeLine } from './terminal-text.js';
import { answerOnAbort } from './tools/answer-on-abort.js';
import { createWorkspaceTools } from './tools/index.js';

/** The CLI's own instructions, before those of the config file. */
const BASE_INSTRUCTIONS = [
  "You are youyou, a coding agent in the user's terminal. You work in the workspace folder through your tools: " +
    'read files before you change them, keep changes small and focused, and run commands only when they help.',
  'Answer in plain text suited to a terminal; be brief, and say what you changed.',
];

/** The runtime's default bound on tool calls and hooks, when the config file does not set toolTimeoutMs. */
const DEFAULT_TOOL_TIMEOUT_MS = 120_000;

/** Everything a chat runs with, and how to tear it down. */
export interface CliRuntime {
  agent: Agent;
  sessions: SessionStorage;
  provider: ChosenProvider;
  skills: SkillDefinition[];
  tools: ToolHandler[];
  /** Shuts the agent down (closing its session), then MCP servers and the database. Never rejects. */
  close(): Promise<void>;
}

function mcpConfigs(options: {
  servers: Record<string, McpServerSetting>;
  warn: (text: string) => void;
}): McpServerConfig[] {
  const configs: McpServerConfig[] = [];
  for (const [name, server] of Object.entries(options.servers)) {
    const transport =
      'url' in server
        ? { type: 'http' as const, url: server.url, ...(server.headers ? { headers: server.headers } : {}) }
        : {
            type: 'stdio' as const,
            command: server.command,
            ...(server.args ? { args: server.args } : {}),
            ...(server.env ? { env: server.env } : {}),
            ...(server.cwd ? { cwd: server.cwd } : {}),
          };
    const config = { name, transport };
    try {
      validateServerConfig(config);
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

/** Where the agent runs, for the dynamic part of the system prompt. */
function environmentContext(settings: CliSettings, env: NodeJS.ProcessEnv) {
  const now = new Date();
  const pad = (value: number): string => String(value).padStart(2, '0');
  return {
    cwd: settings.cwd,
    platform: `${process.platform} ${release()}`,
    shell: env.SHELL ?? env.ComSpec ?? 'sh',
    date: `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`,
    timezone: Intl.DateTimeFormat().resolvedOptions().timeZone,
  };
}

/**
 * Builds the agent from the settings: provider (checked reachable when it is a local server), workspace and
 * MCP tools, skills from disk, the approval plugin and the SQLite storages. Problems that leave a part out
 * (a skill file, an MCP server) are warnings; a missing provider or database rejects.
 */
export async function setUpRuntime(options: {
  settings: CliSettings;
  env: NodeJS.ProcessEnv;
  approval: ApprovalPolicy;
  warn: (text: string) => void;
  onBackgroundError: (error: AgentError) => void;
}): Promise<CliRuntime> {
  const { settings, warn } = options;
  const provider = chooseProvider(settings);
  if (provider.name === 'compatible' && provider.baseURL !== undefined)
    await checkReachable(provider.baseURL);
  const tightened = preparePrivateHome(settings.home);
  if (tightened.length > 0)
    warn(`others could read ${neutralizeLine(tightened.join(', '))}; made it private`);
  const storage: SqliteStorage = await openSqliteStorage(settings.databasePath);
  let mcp: McpServerSet | undefined;
  try {
    const workspaceTools = createWorkspaceTools({ root: settings.cwd });
    const configs = mcpConfigs({ servers: settings.mcpServers, warn });
    if (configs.length > 0) {
      mcp = await connectMcpServers(configs);
      for (const failure of mcp.failures) warn(messageOf(failure.error));
    }
    const tools = uniqueTools({ tools: [...workspaceTools, ...(mcp?.tools ?? [])], warn }).map(answerOnAbort);
    const loaded = await loadSkillsFromDirectories({
      directories: [path.join(settings.cwd, '.youyou', 'skills'), path.join(settings.home, 'skills')],
    });
    for (const problem of loaded.problems) warn(`skill ${problem.path}: ${problem.message}`);
    const skills = usableSkills({
      skills: loaded.skills,
      toolNames: new Set(tools.map((tool) => tool.name)),
      warn,
    });

    const toolTimeoutMs = settings.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    const builder = new AgentBuilder({
      defaultModel: provider.modelId,
      systemInstructions: [...BASE_INSTRUCTIONS, ...settings.systemInstructions],
      environmentContext: environmentContext(settings, options.env),
      toolTimeoutMs,
      onBackgroundError: options.onBackgroundError,
    })
      .registerModelProvider(provider.provider)
      .registerSessionStorage(storage.sessions)
      .registerMemoryStorage(storage.memories)
      .registerPlugin(
        createApprovalPlugin({
          mutating: mutatingToolNames(tools),
          policy: options.approval,
          // Leave the runtime's hook bound a margin, so a slow answer is a denial and never a silent approval.
          answerWithinMs: Math.max(500, toolTimeoutMs - Math.min(5000, toolTimeoutMs / 10)),
        }),
      );
    for (const tool of tools) builder.registerTool(tool);
    for (const skill of skills) builder.registerSkill(skill);
    const agent = await builder.build();
    const servers = mcp;
    return {
      agent,
      sessions: storage.sessions,
      provider,
      skills,
      tools,
      close: async () => {
        await agent.shutdown();
        await servers?.close();
        await storage.close().catch(() => undefined);
      },
    };
  } catch (error) {
    await mcp?.close();
    await storage.close().catch(() => undefined);
    throw error;
  }
}
