import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { type ApprovalRules, NO_RULES } from '../approval/rules.js';
import { type FlagSettings, PROVIDER_NAMES, type ProviderName } from './args.js';
import type { CheckpointFileConfig } from './checkpoints.js';
import { resolveSandbox, type SandboxSettings } from './sandbox.js';
import { checkUrl, type FileConfig, type McpServerSetting, validateFileConfig } from './schema.js';
import type { ServerFileConfig } from './server.js';
import { ConfigError } from './values.js';

export { ConfigError, isRecord, type Json, optionalString } from './values.js';

/** Where a compatible server is looked for when nothing else is configured: a local Ollama. */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:11434/v1';
/** The model asked of a compatible server when none is configured. */
export const DEFAULT_COMPATIBLE_MODEL = 'llama3.2';
/** The context window assumed for a compatible server's model when the config does not say. */
export const DEFAULT_COMPATIBLE_CONTEXT_WINDOW = 32_768;

/** Everything the CLI runs with: flags over environment over config file over defaults. */
export interface CliSettings {
  /** `$YOUYOU_HOME` or `~/.youyou`. */
  home: string;
  configPath: string;
  databasePath: string;
  historyPath: string;
  provider: ProviderName;
  /** Undefined: the provider's default model. */
  model: string | undefined;
  /** Undefined: the provider's default URL. */
  baseURL: string | undefined;
  apiKey: string | undefined;
  contextWindow: number | undefined;
  openaiApi: 'responses' | 'chat';
  systemInstructions: string[];
  toolTimeoutMs: number | undefined;
  mcpServers: Record<string, McpServerSetting>;
  /** The allow and deny rules of the config file's "approval". */
  approvalRules: ApprovalRules;
  /** How long the keyboard must be quiet before an approval question takes a key (ms); undefined: 800. */
  approvalQuietMs: number | undefined;
  /** The workspace root, absolute. */
  cwd: string;
  yes: boolean;
  sandbox: SandboxSettings;
  /** The config's passEnv: extra variable names for tools and MCP servers (secret-looking ones are refused). */
  passEnv: string[];
  /** The config file's "server", for `youyou serve`. */
  server?: ServerFileConfig;
  /** `--max-cost`, else the config file's `maxCostUsd`: the budget of each session; undefined = none. */
  maxCostUsd?: number;
  /** The config file's "checkpoints": false turns them off; undefined: on, with the default limits. */
  checkpoints?: CheckpointFileConfig;
}

/** Reads and validates the config file; a missing file is an empty config. */
export function readFileConfig(options: { file: string; warn: (text: string) => void }): FileConfig {
  let text: string;
  try {
    text = readFileSync(options.file, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return {};
    throw new ConfigError(
      `cannot read ${options.file}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(
      `${options.file} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return validateFileConfig({ file: options.file, data, warn: options.warn });
}

/** The home folder: `$YOUYOU_HOME`, else `~/.youyou`. */
export function youyouHome(env: NodeJS.ProcessEnv): string {
  const home = env.YOUYOU_HOME;
  return home !== undefined && home !== '' ? path.resolve(home) : path.join(homedir(), '.youyou');
}

/** One source of settings, in precedence order. */
interface Layer {
  provider: ProviderName | undefined;
  model: string | undefined;
  baseURL: string | undefined;
}

function envProvider(value: string | undefined): ProviderName | undefined {
  if (value === undefined || value === '') return undefined;
  if (!(PROVIDER_NAMES as readonly string[]).includes(value)) {
    throw new ConfigError(`YOUYOU_PROVIDER must be one of ${PROVIDER_NAMES.join(', ')}, got '${value}'`);
  }
  return value as ProviderName;
}

function emptyToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function workspaceRoot(cwd: string | undefined): string {
  const root = path.resolve(cwd ?? process.cwd());
  let isDirectory = false;
  try {
    isDirectory = statSync(root).isDirectory();
  } catch {
    throw new ConfigError(`the workspace folder ${root} does not exist`);
  }
  if (!isDirectory) throw new ConfigError(`the workspace ${root} is not a folder`);
  return root;
}

/**
 * Merges flags, environment, config file and defaults. A layer that names a different provider than the one
 * chosen does not lend its model or base URL: `--provider openai` must not inherit the config file's Ollama model.
 */
export function resolveSettings(options: {
  flags: FlagSettings;
  env: NodeJS.ProcessEnv;
  warn: (text: string) => void;
}): CliSettings {
  const { flags, env, warn } = options;
  const home = youyouHome(env);
  const configPath = path.join(home, 'config.json');
  const file = readFileConfig({ file: configPath, warn });
  const envBaseURL = emptyToUndefined(env.YOUYOU_BASE_URL);
  const layers: Layer[] = [
    {
      provider: flags.provider,
      model: flags.model,
      baseURL: flags.baseURL && checkUrl(flags.baseURL, '--base-url'),
    },
    {
      provider: envProvider(env.YOUYOU_PROVIDER),
      model: emptyToUndefined(env.YOUYOU_MODEL),
      baseURL: envBaseURL && checkUrl(envBaseURL, 'YOUYOU_BASE_URL'),
    },
    { provider: file.provider, model: file.model, baseURL: file.baseUrl },
  ];
  // With no provider named anywhere it is a compatible server (a local Ollama, or whatever --base-url says).
  const provider = layers.find((layer) => layer.provider !== undefined)?.provider ?? 'compatible';
  const applies = (layer: Layer): boolean => layer.provider === undefined || layer.provider === provider;
  const model = layers.find((layer) => applies(layer) && layer.model !== undefined)?.model;
  const baseURL = layers.find((layer) => applies(layer) && layer.baseURL !== undefined)?.baseURL;
  const fileApplies = file.provider === undefined || file.provider === provider;
  const keyFromEnv =
    provider === 'openai'
      ? env.OPENAI_API_KEY
      : provider === 'anthropic'
        ? env.ANTHROPIC_API_KEY
        : env.YOUYOU_API_KEY;
  return {
    home,
    configPath,
    databasePath: path.join(home, 'youyou.db'),
    historyPath: path.join(home, 'history'),
    provider,
    model,
    baseURL,
    apiKey: emptyToUndefined(keyFromEnv) ?? (fileApplies ? file.apiKey : undefined),
    contextWindow: fileApplies ? file.contextWindow : undefined,
    openaiApi: file.openaiApi ?? 'responses',
    systemInstructions: file.systemInstructions ?? [],
    toolTimeoutMs: file.toolTimeoutMs,
    mcpServers: file.mcpServers ?? {},
    approvalRules: file.approval ?? NO_RULES,
    approvalQuietMs: file.approvalQuietMs,
    cwd: workspaceRoot(flags.cwd),
    yes: flags.yes,
    sandbox: resolveSandbox({
      flags,
      file: file.sandbox ?? {},
      userHome: emptyToUndefined(env.HOME) ?? homedir(),
      youyouHome: home,
    }),
    passEnv: file.passEnv ?? [],
    ...(file.server === undefined ? {} : { server: file.server }),
    ...((flags.maxCostUsd ?? file.maxCostUsd) === undefined
      ? {}
      : { maxCostUsd: flags.maxCostUsd ?? file.maxCostUsd }),
    ...(file.checkpoints === undefined ? {} : { checkpoints: file.checkpoints }),
  };
}
