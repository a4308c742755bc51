import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { AgentError } from '@youyou/agent';
import { knownSecrets } from './auth.js';

/** Starts the server as a child process and speaks MCP over its stdin/stdout. */
export interface McpStdioTransportConfig {
  type: 'stdio';
  /** The executable, looked up on PATH (`node`, `npx`, `/usr/local/bin/server`). */
  command: string;
  args?: readonly string[];
  /**
   * Added to the few variables the child inherits (HOME, LOGNAME, PATH, SHELL, TERM, USER on POSIX; the MCP
   * SDK's default): the rest of this process's environment, API keys included, is not passed on.
   */
  env?: Readonly<Record<string, string>>;
  /** The child's working directory; default this process's. */
  cwd?: string;
}

/** Speaks MCP's Streamable HTTP transport to a server that is already running. */
export interface McpHttpTransportConfig {
  type: 'http';
  /** The server's MCP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
  url: string;
  /** Sent with every request (e.g. `Authorization`); never shown in an error message. */
  headers?: Readonly<Record<string, string>>;
  /**
   * OAuth for a server that demands it (the MCP authorization spec): the MCP SDK's `OAuthClientProvider`,
   * which stores the client registration and tokens and sends the user to authorize. The SDK discovers the
   * authorization server, registers, refreshes an expired token and retries on its own. When the user must
   * authorize and the provider cannot do it now, any of its methods may throw: the error's message becomes
   * the AUTHORIZATION_REQUIRED message (connect) or the tool result (a call). Tokens never appear in messages.
   */
  authProvider?: OAuthClientProvider;
}

/** Where a server is and how to talk to it. */
export type McpTransportConfig = McpStdioTransportConfig | McpHttpTransportConfig;

/** One MCP server, as `connectMcpServer` and a config file give it. */
export interface McpServerConfig {
  /**
   * Prefixes every tool of the server (`${name}__${tool}`). 1–32 of `a-z A-Z 0-9 _ -`, without `__` and
   * not ending in `_`, so that a prefixed name always tells which server it belongs to.
   */
  name: string;
  transport: McpTransportConfig;
  /**
   * The longest one request may take: connecting (initialise and list tools) and each tool call; default
   * 60,000 ms. The agent's `toolTimeoutMs` applies to calls as well, whichever is shorter.
   */
  timeoutMs?: number;
}

/** How long a request may take when the config does not say (the MCP SDK's own default). */
export const DEFAULT_TIMEOUT_MS = 60_000;

/** What a server name must look like. */
export const SERVER_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,32}$/;

/** The longest timer Node accepts. */
const MAX_TIMER_MS = 2_147_483_647;

function invalid(message: string): AgentError {
  return new AgentError({ code: 'INVALID_CONFIG', message });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function checkStringRecord(value: unknown, where: string): void {
  if (value === undefined) return;
  if (!isRecord(value) || Object.values(value).some((entry) => typeof entry !== 'string')) {
    throw invalid(`${where} must be an object of string values`);
  }
}

/** Throws INVALID_CONFIG naming the first thing wrong with `value` as a server config; config files are unchecked JSON. */
export function validateServerConfig(value: unknown): asserts value is McpServerConfig {
  if (!isRecord(value)) throw invalid('an MCP server config must be an object');
  const { name, transport, timeoutMs } = value;
  if (
    typeof name !== 'string' ||
    !SERVER_NAME_PATTERN.test(name) ||
    name.includes('__') ||
    name.endsWith('_')
  ) {
    throw invalid(
      `MCP server name ${JSON.stringify(name)} must match ${SERVER_NAME_PATTERN}, without "__" and not ending in "_"`,
    );
  }
  const where = `MCP server "${name}"`;
  if (
    timeoutMs !== undefined &&
    (typeof timeoutMs !== 'number' ||
      !Number.isInteger(timeoutMs) ||
      timeoutMs < 1 ||
      timeoutMs > MAX_TIMER_MS)
  ) {
    throw invalid(`${where}: timeoutMs must be an integer from 1 to ${MAX_TIMER_MS}`);
  }
  if (!isRecord(transport)) throw invalid(`${where}: transport must be an object with a type`);
  if (transport.type === 'stdio') {
    if (typeof transport.command !== 'string' || transport.command.trim() === '') {
      throw invalid(`${where}: a stdio transport needs a command`);
    }
    const { args, cwd } = transport;
    if (args !== undefined && (!Array.isArray(args) || args.some((arg) => typeof arg !== 'string'))) {
      throw invalid(`${where}: args must be an array of strings`);
    }
    checkStringRecord(transport.env, `${where}: env`);
    if (cwd !== undefined && typeof cwd !== 'string') throw invalid(`${where}: cwd must be a string`);
    return;
  }
  if (transport.type === 'http') {
    const { url } = transport;
    if (typeof url !== 'string' || !URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
      throw invalid(`${where}: an http transport needs an http(s) url`);
    }
    const parsed = new URL(url);
    if (parsed.username !== '' || parsed.password !== '') {
      throw invalid(`${where}: put credentials in headers (e.g. Authorization), not in the url`);
    }
    checkStringRecord(transport.headers, `${where}: headers`);
    const { authProvider } = transport;
    if (
      authProvider !== undefined &&
      (typeof authProvider !== 'object' ||
        authProvider === null ||
        typeof (authProvider as { tokens?: unknown }).tokens !== 'function' ||
        typeof (authProvider as { saveTokens?: unknown }).saveTokens !== 'function')
    ) {
      throw invalid(`${where}: authProvider must be an OAuthClientProvider (tokens, saveTokens, …)`);
    }
    return;
  }
  throw invalid(`${where}: transport.type must be "stdio" or "http"`);
}

/**
 * Where the server is, for messages: the command without its arguments, or the URL without credentials,
 * query or fragment (arguments and queries are where tokens tend to be put).
 */
export function describeTarget(transport: McpTransportConfig): string {
  if (transport.type === 'stdio') return `command "${transport.command}"`;
  const url = new URL(transport.url);
  return `url ${url.origin}${url.pathname}`;
}

/** Secrets shorter than this are placeholders, and replacing them would mangle ordinary words. */
const MIN_SECRET_LENGTH = 8;

const REDACTED = '[redacted]';

/**
 * Removes from a message about this server what may be secret: the URL's query (the URL is shown as
 * `describeTarget` shows it), header values and env values (each whole value and each word of it, so the
 * token of `Bearer <token>` goes too). A server's stderr may echo any of them.
 */
export function redact(text: string, transport: McpTransportConfig): string {
  let result = text;
  const secrets: string[] = [];
  if (transport.type === 'http') {
    const url = new URL(transport.url);
    const shown = `${url.origin}${url.pathname}`;
    for (const form of [transport.url, url.href]) result = result.split(form).join(shown);
    if (url.search.length > 1) secrets.push(url.search.slice(1), ...url.searchParams.values());
    secrets.push(...Object.values(transport.headers ?? {}), ...knownSecrets(transport.authProvider));
  } else {
    secrets.push(...Object.values(transport.env ?? {}));
  }
  const words = secrets.flatMap((secret) => [secret, ...secret.split(/\s+/)]);
  // Longest first, so that a whole value goes before a word of it would leave the rest behind.
  for (const secret of [...new Set(words)].sort((a, b) => b.length - a.length)) {
    if (secret.length >= MIN_SECRET_LENGTH) result = result.split(secret).join(REDACTED);
  }
  return result;
}
