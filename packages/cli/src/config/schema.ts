/** The config file's schema: what `config.json` may hold, checked key by key into a FileConfig. */
import { type ApprovalRule, type ApprovalRules, parseRule } from '../approval/rules.js';
import { PROVIDER_NAMES, type ProviderName } from './args.js';
import { type CheckpointFileConfig, parseCheckpointConfig } from './checkpoints.js';
import { parseSandboxConfig, type SandboxFileConfig } from './sandbox.js';
import { parseServerConfig, type ServerFileConfig } from './server.js';
import { ConfigError, isRecord, type Json, optionalString } from './values.js';

/**
 * An MCP server of the config file: a command to start (stdio) or a URL (Streamable HTTP); `timeoutMs`
 * bounds connecting and each call (default 60000).
 */
export type McpServerSetting = (
  | { command: string; args?: string[]; env?: Record<string, string>; cwd?: string }
  | { url: string; headers?: Record<string, string> }
) & { timeoutMs?: number };

/** The longest timer Node accepts, so the largest MCP timeout. */
const MAX_TIMER_MS = 2_147_483_647;

function parseServerTimeout(where: string, value: unknown): { timeoutMs?: number } {
  if (value === undefined) return {};
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_TIMER_MS) {
    throw new ConfigError(
      `${where}.timeoutMs must be a whole number of milliseconds from 1 to ${MAX_TIMER_MS}`,
    );
  }
  return { timeoutMs: value };
}

/** `~/.youyou/config.json` after validation. */
export interface FileConfig {
  provider?: ProviderName;
  model?: string;
  baseUrl?: string;
  apiKey?: string;
  contextWindow?: number;
  openaiApi?: 'responses' | 'chat';
  systemInstructions?: string[];
  toolTimeoutMs?: number;
  mcpServers?: Record<string, McpServerSetting>;
  sandbox?: SandboxFileConfig;
  /** Names of variables of this process passed to the shell and stdio MCP servers besides the allowlist. */
  passEnv?: string[];
  approval?: ApprovalRules;
  /** The config's "approval.quietMs". */
  approvalQuietMs?: number;
  server?: ServerFileConfig;
  /** What one session may spend on model calls, in US dollars. */
  maxCostUsd?: number;
  /** Workspace checkpoints: off, or their size limits. */
  checkpoints?: CheckpointFileConfig;
}

const FILE_KEYS = new Set([
  'sandbox',
  'passEnv',
  'provider',
  'model',
  'baseUrl',
  'apiKey',
  'contextWindow',
  'openaiApi',
  'systemInstructions',
  'toolTimeoutMs',
  'mcpServers',
  'approval',
  'server',
  'maxCostUsd',
  'checkpoints',
]);

function isStringRecord(value: unknown): value is Record<string, string> {
  return isRecord(value) && Object.values(value).every((item) => typeof item === 'string');
}

function parseMcpServer(file: string, name: string, value: unknown): McpServerSetting {
  const where = `${file}: mcpServers.${name}`;
  if (!isRecord(value)) throw new ConfigError(`${where} must be an object with "command" or "url"`);
  const timeout = parseServerTimeout(where, value.timeoutMs);
  if (typeof value.url === 'string') {
    try {
      new URL(value.url);
    } catch {
      throw new ConfigError(`${where}.url is not a valid URL: '${value.url}'`);
    }
    if (value.headers !== undefined && !isStringRecord(value.headers)) {
      throw new ConfigError(`${where}.headers must map header names to strings`);
    }
    return {
      url: value.url,
      ...(value.headers === undefined ? {} : { headers: value.headers }),
      ...timeout,
    };
  }
  if (typeof value.command !== 'string' || value.command === '') {
    throw new ConfigError(
      `${where} needs "command" (a program to start) or "url" (a Streamable HTTP endpoint)`,
    );
  }
  if (
    value.args !== undefined &&
    !(Array.isArray(value.args) && value.args.every((arg) => typeof arg === 'string'))
  ) {
    throw new ConfigError(`${where}.args must be an array of strings`);
  }
  if (value.env !== undefined && !isStringRecord(value.env)) {
    throw new ConfigError(`${where}.env must map variable names to strings`);
  }
  if (value.cwd !== undefined && typeof value.cwd !== 'string')
    throw new ConfigError(`${where}.cwd must be a string`);
  const server: McpServerSetting = { command: value.command, ...timeout };
  if (value.args !== undefined) server.args = value.args as string[];
  if (value.env !== undefined) server.env = value.env;
  if (typeof value.cwd === 'string') server.cwd = value.cwd;
  return server;
}

function parseRuleList(file: string, list: unknown, key: string): ApprovalRule[] {
  if (list === undefined) return [];
  if (!Array.isArray(list) || !list.every((item) => typeof item === 'string')) {
    throw new ConfigError(`${file}: "approval.${key}" must be an array of rules such as "shell(git status)"`);
  }
  return list.map((text: string) => {
    const rule = parseRule(text);
    if (typeof rule === 'string') throw new ConfigError(`${file}: approval.${key}: ${rule}`);
    return rule;
  });
}

function parseApproval(file: string, value: unknown): ApprovalRules {
  if (!isRecord(value))
    throw new ConfigError(`${file}: "approval" must be an object with "allow" and "deny" lists`);
  for (const key of Object.keys(value)) {
    if (key !== 'allow' && key !== 'deny' && key !== 'quietMs') {
      throw new ConfigError(`${file}: "approval.${key}" is not a setting; use "allow", "deny" and "quietMs"`);
    }
  }
  return { allow: parseRuleList(file, value.allow, 'allow'), deny: parseRuleList(file, value.deny, 'deny') };
}

/** The longest quiet time a question may wait for before it takes keys: more would feel broken. */
const MAX_QUIET_MS = 10_000;

/** The config's "approval.quietMs": how long the keyboard must be quiet before a question takes a key. */
function parseQuietMs(file: string, value: unknown): number | undefined {
  if (!isRecord(value) || value.quietMs === undefined) return undefined;
  const quiet = value.quietMs;
  if (typeof quiet !== 'number' || !Number.isInteger(quiet) || quiet < 0 || quiet > MAX_QUIET_MS) {
    throw new ConfigError(
      `${file}: "approval.quietMs" must be a whole number of milliseconds from 0 to ${MAX_QUIET_MS}`,
    );
  }
  return quiet;
}

function optionalInteger(file: string, data: Json, key: string, min: number): number | undefined {
  const value = data[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new ConfigError(`${file}: "${key}" must be a whole number of at least ${min}`);
  }
  return value;
}

/** Checks the parsed JSON of a config file; `warn` hears about keys it does not know. */
export function validateFileConfig(options: {
  file: string;
  data: unknown;
  warn: (text: string) => void;
}): FileConfig {
  const { file, data, warn } = options;
  if (!isRecord(data)) throw new ConfigError(`${file} must hold a JSON object`);
  for (const key of Object.keys(data)) {
    if (!FILE_KEYS.has(key))
      warn(`${file}: unknown key "${key}" ignored (known: ${[...FILE_KEYS].join(', ')})`);
  }
  const config: FileConfig = {};
  const provider = optionalString(file, data, 'provider');
  if (provider !== undefined) {
    if (!(PROVIDER_NAMES as readonly string[]).includes(provider)) {
      throw new ConfigError(
        `${file}: "provider" must be one of ${PROVIDER_NAMES.join(', ')}, got "${provider}"`,
      );
    }
    config.provider = provider as ProviderName;
  }
  const model = optionalString(file, data, 'model');
  if (model !== undefined) config.model = model;
  const baseUrl = optionalString(file, data, 'baseUrl');
  if (baseUrl !== undefined) config.baseUrl = checkUrl(baseUrl, `${file}: "baseUrl"`);
  const apiKey = optionalString(file, data, 'apiKey');
  if (apiKey !== undefined) config.apiKey = apiKey;
  const contextWindow = optionalInteger(file, data, 'contextWindow', 1024);
  if (contextWindow !== undefined) config.contextWindow = contextWindow;
  const toolTimeoutMs = optionalInteger(file, data, 'toolTimeoutMs', 1000);
  if (toolTimeoutMs !== undefined) config.toolTimeoutMs = toolTimeoutMs;
  const maxCostUsd = data.maxCostUsd;
  if (maxCostUsd !== undefined) {
    if (typeof maxCostUsd !== 'number' || !Number.isFinite(maxCostUsd) || maxCostUsd < 0) {
      throw new ConfigError(`${file}: "maxCostUsd" must be a number of US dollars, 0 or more`);
    }
    config.maxCostUsd = maxCostUsd;
  }
  const openaiApi = data.openaiApi;
  if (openaiApi !== undefined) {
    if (openaiApi !== 'responses' && openaiApi !== 'chat') {
      throw new ConfigError(`${file}: "openaiApi" must be "responses" or "chat"`);
    }
    config.openaiApi = openaiApi;
  }
  const instructions = data.systemInstructions;
  if (instructions !== undefined) {
    if (!Array.isArray(instructions) || !instructions.every((line) => typeof line === 'string')) {
      throw new ConfigError(`${file}: "systemInstructions" must be an array of strings`);
    }
    config.systemInstructions = instructions as string[];
  }
  const servers = data.mcpServers;
  if (servers !== undefined) {
    if (!isRecord(servers)) throw new ConfigError(`${file}: "mcpServers" must be an object of named servers`);
    config.mcpServers = {};
    for (const [name, value] of Object.entries(servers)) {
      config.mcpServers[name] = parseMcpServer(file, name, value);
    }
  }
  const sandbox = data.sandbox;
  if (sandbox !== undefined) config.sandbox = parseSandboxConfig(file, sandbox);
  const passEnv = data.passEnv;
  if (passEnv !== undefined) {
    if (!Array.isArray(passEnv) || !passEnv.every((name) => typeof name === 'string' && /^\w+$/.test(name))) {
      throw new ConfigError(`${file}: "passEnv" must be an array of variable names`);
    }
    config.passEnv = passEnv as string[];
  }
  if (data.approval !== undefined) {
    config.approval = parseApproval(file, data.approval);
    const quietMs = parseQuietMs(file, data.approval);
    if (quietMs !== undefined) config.approvalQuietMs = quietMs;
  }
  if (data.server !== undefined) config.server = parseServerConfig(file, data.server);
  if (data.checkpoints !== undefined) config.checkpoints = parseCheckpointConfig(file, data.checkpoints);
  return config;
}

/** An http(s) URL of the config, flags or environment, without trailing slashes; ConfigError naming `where` else. */
export function checkUrl(value: string, where: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${where} is not a valid URL: '${value}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${where} must be an http:// or https:// URL, got '${value}'`);
  }
  return value.replace(/\/+$/, '');
}
