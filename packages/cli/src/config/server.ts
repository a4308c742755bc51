import { ConfigError, isRecord } from './values.js';

/** The config file's "server": what `youyou serve` runs with. */
export interface ServerFileConfig {
  /** Bearer token → tenant. */
  tokens?: Record<string, string>;
  /** How many sessions the agent holds at once (default 16). */
  maxActiveSessions?: number;
  /** How long a session with no running turn stays open on the agent (default 60 s); on PostgreSQL, how long this process keeps its lease. */
  idleSessionMs?: number;
  /** How long a closed session's events stay in memory for streams that reconnect (default 15 min). */
  journalRetentionMs?: number;
  /** The bytes all sessions' kept events may take together (default 64 MiB); past it the oldest finished turns go. */
  journalMaxBytes?: number;
  /** `postgres://…`: sessions and memories in PostgreSQL instead of youyou.db (YOUYOU_DATABASE_URL and --database-url win). */
  databaseUrl?: string;
  /** The PostgreSQL schema of the tables (default "public"); created when missing. */
  databaseSchema?: string;
  /** Serve the web chat page at / (default true). */
  webChat?: boolean;
  /** How long a call waiting for approval over HTTP may wait; then it is denied (default: until decided). */
  approvalWindowMs?: number;
  /**
   * Whose files a session's tools work on: `tenant` (default) a folder per tenant under `workspaceRoot`,
   * `session` a folder per session inside its tenant's, `shared` the folder serve runs in, for every tenant.
   */
  workspaces?: 'tenant' | 'session' | 'shared';
  /** The folder of the tenants' workspace folders (default: `workspaces` in the youyou home). */
  workspaceRoot?: string;
  /** What one tenant's model calls may cost per UTC day, in US dollars, counted from the session storage. */
  tenantDailyCostUsd?: number;
  /**
   * A session whose last turn a crash cut: `auto` continues that turn as soon as this server takes the session,
   * `on-request` (default) when a client asks (`POST /sessions/:id/continue`).
   */
  continueInterrupted?: 'auto' | 'on-request';
}

/** The keys "server" takes. */
const SERVER_KEYS = [
  'tokens',
  'maxActiveSessions',
  'idleSessionMs',
  'journalRetentionMs',
  'journalMaxBytes',
  'databaseUrl',
  'databaseSchema',
  'webChat',
  'approvalWindowMs',
  'workspaces',
  'workspaceRoot',
  'tenantDailyCostUsd',
  'continueInterrupted',
];

/** A plain SQL identifier, as @youyou/postgres takes for a schema. */
const SCHEMA = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

const TENANT = /^[A-Za-z0-9._:@-]{1,128}$/;

function checkTokens(where: string, tokens: Record<string, unknown>): Record<string, string> {
  const checked: Record<string, string> = {};
  for (const [token, tenant] of Object.entries(tokens)) {
    // Tokens are never quoted back: a message names the tenant only.
    if (token.length < 16 || /\s/.test(token)) {
      throw new ConfigError(
        `${where}: a token of ${String(tenant)} is shorter than 16 characters or has spaces`,
      );
    }
    if (typeof tenant !== 'string' || !TENANT.test(tenant)) {
      throw new ConfigError(`${where}: every token must map to a tenant name of 1-128 of [A-Za-z0-9._:@-]`);
    }
    checked[token] = tenant;
  }
  return checked;
}

/** The numbers of the "server" object: how many sessions at once, how long one idles, how long a call waits. */
/** The limits of "server" that are whole numbers in a range. */
type ServerLimits = Pick<
  ServerFileConfig,
  'maxActiveSessions' | 'idleSessionMs' | 'journalRetentionMs' | 'journalMaxBytes' | 'approvalWindowMs'
>;

/** The largest `server.journalMaxBytes`: 16 GiB. */
const MAX_JOURNAL_BYTES = 16 * 2 ** 30;

function parseServerLimits(file: string, value: Record<string, unknown>): ServerLimits {
  const limits: ServerLimits = {};
  const max = value.maxActiveSessions;
  if (max !== undefined) {
    if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > 10_000) {
      throw new ConfigError(`${file}: "server.maxActiveSessions" must be a whole number from 1 to 10000`);
    }
    limits.maxActiveSessions = max;
  }
  const idle = value.idleSessionMs;
  if (idle !== undefined) {
    if (typeof idle !== 'number' || !Number.isInteger(idle) || idle < 100 || idle > 86_400_000) {
      throw new ConfigError(
        `${file}: "server.idleSessionMs" must be a whole number of milliseconds from 100 to 86400000`,
      );
    }
    limits.idleSessionMs = idle;
  }
  const retention = value.journalRetentionMs;
  if (retention !== undefined) {
    if (
      typeof retention !== 'number' ||
      !Number.isInteger(retention) ||
      retention < 1_000 ||
      retention > 86_400_000
    ) {
      throw new ConfigError(
        `${file}: "server.journalRetentionMs" must be a whole number of milliseconds from 1000 to 86400000`,
      );
    }
    limits.journalRetentionMs = retention;
  }
  const journalBytes = value.journalMaxBytes;
  if (journalBytes !== undefined) {
    if (
      typeof journalBytes !== 'number' ||
      !Number.isInteger(journalBytes) ||
      journalBytes < 0 ||
      journalBytes > MAX_JOURNAL_BYTES
    ) {
      throw new ConfigError(
        `${file}: "server.journalMaxBytes" must be a whole number of bytes from 0 to ${MAX_JOURNAL_BYTES} (16 GiB)`,
      );
    }
    limits.journalMaxBytes = journalBytes;
  }
  const window = value.approvalWindowMs;
  if (window !== undefined) {
    if (
      typeof window !== 'number' ||
      !Number.isInteger(window) ||
      window < 1_000 ||
      window > 31_536_000_000
    ) {
      throw new ConfigError(
        `${file}: "server.approvalWindowMs" must be a whole number of milliseconds from 1000 to 31536000000 (a year)`,
      );
    }
    limits.approvalWindowMs = window;
  }
  return limits;
}

/** Checks the config file's "server" object. */
export function parseServerConfig(file: string, value: unknown): ServerFileConfig {
  if (!isRecord(value)) throw new ConfigError(`${file}: "server" must be an object`);
  const config: ServerFileConfig = {};
  for (const key of Object.keys(value)) {
    if (!SERVER_KEYS.includes(key)) {
      throw new ConfigError(
        `${file}: "server" takes ${SERVER_KEYS.map((name) => `"${name}"`).join(', ')}, not "${key}"`,
      );
    }
  }
  if (value.tokens !== undefined) {
    if (!isRecord(value.tokens)) throw new ConfigError(`${file}: "server.tokens" must map tokens to tenants`);
    config.tokens = checkTokens(`${file}: "server.tokens"`, value.tokens);
  }
  Object.assign(config, parseServerLimits(file, value));
  // The URL itself is checked when serve starts (databaseTarget), and never quoted: it may hold a password.
  if (value.databaseUrl !== undefined) {
    if (typeof value.databaseUrl !== 'string' || value.databaseUrl.trim() === '') {
      throw new ConfigError(`${file}: "server.databaseUrl" must be a postgres:// URL`);
    }
    config.databaseUrl = value.databaseUrl;
  }
  if (value.databaseSchema !== undefined) {
    if (typeof value.databaseSchema !== 'string' || !SCHEMA.test(value.databaseSchema)) {
      throw new ConfigError(
        `${file}: "server.databaseSchema" must be a plain identifier (letters, digits, _; at most 63)`,
      );
    }
    config.databaseSchema = value.databaseSchema;
  }
  const daily = value.tenantDailyCostUsd;
  if (daily !== undefined) {
    if (typeof daily !== 'number' || !Number.isFinite(daily) || daily < 0) {
      throw new ConfigError(`${file}: "server.tenantDailyCostUsd" must be a number of US dollars, 0 or more`);
    }
    config.tenantDailyCostUsd = daily;
  }
  const workspaces = value.workspaces;
  if (workspaces !== undefined) {
    if (workspaces !== 'tenant' && workspaces !== 'session' && workspaces !== 'shared') {
      throw new ConfigError(`${file}: "server.workspaces" must be "tenant", "session" or "shared"`);
    }
    config.workspaces = workspaces;
  }
  if (value.workspaceRoot !== undefined) {
    if (
      typeof value.workspaceRoot !== 'string' ||
      value.workspaceRoot.trim() === '' ||
      value.workspaceRoot.includes('\0')
    ) {
      throw new ConfigError(`${file}: "server.workspaceRoot" must be a folder path`);
    }
    config.workspaceRoot = value.workspaceRoot;
  }
  const continueMode = value.continueInterrupted;
  if (continueMode !== undefined) {
    if (continueMode !== 'auto' && continueMode !== 'on-request') {
      throw new ConfigError(`${file}: "server.continueInterrupted" must be "auto" or "on-request"`);
    }
    config.continueInterrupted = continueMode;
  }
  if (value.webChat !== undefined) {
    if (typeof value.webChat !== 'boolean') {
      throw new ConfigError(`${file}: "server.webChat" must be true or false`);
    }
    config.webChat = value.webChat;
  }
  return config;
}

/** The tokens of `YOUYOU_SERVER_TOKENS` (`token=tenant,token=tenant`); an empty or absent variable gives none. */
export function tokensFromEnv(value: string | undefined): Record<string, string> {
  if (value === undefined || value.trim() === '') return {};
  const tokens: Record<string, unknown> = {};
  for (const pair of value.split(',')) {
    const separator = pair.lastIndexOf('=');
    if (separator <= 0) {
      throw new ConfigError('YOUYOU_SERVER_TOKENS must be token=tenant pairs separated by commas');
    }
    tokens[pair.slice(0, separator).trim()] = pair.slice(separator + 1).trim();
  }
  return checkTokens('YOUYOU_SERVER_TOKENS', tokens);
}
