import { parseArgs } from 'node:util';
import { SANDBOX_MODES, type SandboxMode } from '../sandbox/sandbox.js';

/** The providers `--provider` accepts. */
export const PROVIDER_NAMES = ['openai', 'anthropic', 'compatible'] as const;
/** One of PROVIDER_NAMES. */
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** What the command line asks for. */
export type CliCommand =
  | { type: 'help' }
  | { type: 'version' }
  | { type: 'sessions'; search: string | undefined; limit: number; json: boolean }
  /**
   * `youyou serve`: the sessions API over HTTP on `host:port`; sessions in PostgreSQL at `databaseUrl` when
   * given, and without the web chat page when `webChat` is false (--no-web-chat).
   */
  | { type: 'serve'; port: number; host: string; databaseUrl?: string; webChat?: false }
  /** `youyou mcp serve`: youyou as an MCP server, over stdio, or Streamable HTTP on `host:port` when `port` is set. */
  | { type: 'mcp-serve'; port?: number; host: string }
  /** `youyou acp`: the Agent Client Protocol on stdin/stdout, for editors; each session names its folder. */
  | { type: 'acp' }
  /** `youyou mcp login NAME` / `youyou mcp logout NAME`: the saved OAuth login of HTTP MCP server NAME. */
  | { type: 'mcp-login'; server: string }
  | { type: 'mcp-logout'; server: string }
  /**
   * A chat: interactive unless `prompt` is set; `resume` is a session id (or prefix), or 'latest' for --continue;
   * `fork` (`resume ID --fork`): a new session carrying the resumed one's history, which stays as it was.
   */
  | {
      type: 'chat';
      prompt: string | undefined;
      json: boolean;
      resume: string | undefined;
      latest: boolean;
      fork?: boolean;
    };

/** The settings flags can give; undefined = not on the command line. */
export interface FlagSettings {
  provider: ProviderName | undefined;
  model: string | undefined;
  baseURL: string | undefined;
  cwd: string | undefined;
  yes: boolean;
  /** `--sandbox MODE`. */
  sandbox?: SandboxMode | undefined;
  /** `--allow-network`: shell commands may use the network. */
  allowNetwork?: boolean | undefined;
  /** `--max-cost USD`: what a session's model calls may cost in all, its resumes included. */
  maxCostUsd?: number | undefined;
}

/** A parsed command line. */
export interface ParsedArgs {
  command: CliCommand;
  flags: FlagSettings;
}

/** A mistake on the command line: its message is shown with a pointer to --help, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const OPTIONS = {
  print: { type: 'string', short: 'p' },
  json: { type: 'boolean' },
  continue: { type: 'boolean', short: 'c' },
  provider: { type: 'string' },
  model: { type: 'string', short: 'm' },
  'base-url': { type: 'string' },
  cwd: { type: 'string' },
  yes: { type: 'boolean', short: 'y' },
  sandbox: { type: 'string' },
  'allow-network': { type: 'boolean' },
  'max-cost': { type: 'string' },
  search: { type: 'string' },
  limit: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  'database-url': { type: 'string' },
  'no-web-chat': { type: 'boolean' },
  fork: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

/** The port `youyou serve` listens on without --port. */
export const DEFAULT_SERVE_PORT = 8787;

function parsePort(value: string | undefined): number {
  if (value === undefined) return DEFAULT_SERVE_PORT;
  const port = Number(value);
  if (!/^\d+$/.test(value) || !Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new UsageError(`--port must be a whole number from 0 to 65535, got '${value}'`);
  }
  return port;
}

/** How many sessions `youyou sessions` lists without --limit. */
export const DEFAULT_SESSION_LIMIT = 20;

function nonEmpty(flag: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === '') throw new UsageError(`${flag} needs a value`);
  return value;
}

/** parseArgs' own messages name the option well but end with advice about '--' that does not help here. */
function usageErrorFrom(error: unknown): UsageError {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const option = /'([^']+)'/.exec(message)?.[1] ?? message;
    return new UsageError(`unknown option '${option}'`);
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    return new UsageError(message.replace(/\. To specify.*$/s, '').replace(/^Option/, 'option'));
  }
  return new UsageError(message);
}

function parseLimit(value: string | undefined): number {
  if (value === undefined) return DEFAULT_SESSION_LIMIT;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new UsageError(`--limit must be a whole number from 1 to 1000, got '${value}'`);
  }
  return limit;
}

function parseProvider(value: string | undefined): ProviderName | undefined {
  if (value === undefined) return undefined;
  if (!(PROVIDER_NAMES as readonly string[]).includes(value)) {
    throw new UsageError(`--provider must be one of ${PROVIDER_NAMES.join(', ')}, got '${value}'`);
  }
  return value as ProviderName;
}

function parseMaxCost(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const dollars = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !Number.isFinite(dollars)) {
    throw new UsageError(`--max-cost must be an amount of US dollars such as 0.50, got '${value}'`);
  }
  return dollars;
}

function parseSandboxMode(value: string | undefined): SandboxMode | undefined {
  if (value === undefined) return undefined;
  if (!(SANDBOX_MODES as readonly string[]).includes(value)) {
    throw new UsageError(`--sandbox must be one of ${SANDBOX_MODES.join(', ')}, got '${value}'`);
  }
  return value as SandboxMode;
}

/** The subcommands of `youyou mcp`. */
const MCP_SUBCOMMANDS = ['serve', 'login', 'logout'];

/** `youyou mcp SUBCOMMAND …`: a group each MCP command adds its case to. */
function parseMcpCommand(rest: readonly string[], values: ParsedValues): CliCommand {
  const [subcommand, ...operands] = rest;
  if (values.print !== undefined || values.continue === true || values.json === true) {
    throw new UsageError("'mcp' cannot be combined with -p, --continue or --json");
  }
  if (values['database-url'] !== undefined || values['no-web-chat'] !== undefined) {
    throw new UsageError("--database-url and --no-web-chat belong to 'youyou serve'");
  }
  switch (subcommand) {
    case 'serve':
      return parseMcpServe(operands, values);
    case 'login':
    case 'logout': {
      if (values.port !== undefined || values.host !== undefined) {
        throw new UsageError("--port and --host belong to 'youyou serve' and 'youyou mcp serve'");
      }
      const [server] = operands;
      if (operands.length !== 1 || server === undefined || server === '') {
        throw new UsageError(`'mcp ${subcommand}' takes one server name: youyou mcp ${subcommand} NAME`);
      }
      return { type: subcommand === 'login' ? 'mcp-login' : 'mcp-logout', server };
    }
    default:
      throw new UsageError(
        subcommand === undefined
          ? `'mcp' needs a subcommand: ${MCP_SUBCOMMANDS.join(', ')}`
          : `unknown subcommand 'mcp ${subcommand}'; one of ${MCP_SUBCOMMANDS.join(', ')}`,
      );
  }
}

/** `youyou mcp serve [--port N] [--host ADDR]`: stdio unless a port is given. */
function parseMcpServe(operands: readonly string[], values: ParsedValues): CliCommand {
  if (operands.length > 0)
    throw new UsageError(`'mcp serve' takes no arguments, got '${operands.join(' ')}'`);
  if (values.port === undefined && values.host !== undefined) {
    throw new UsageError("--host needs --port: without it 'mcp serve' speaks over stdio");
  }
  return {
    type: 'mcp-serve',
    ...(values.port === undefined ? {} : { port: parsePort(values.port) }),
    host: nonEmpty('--host', values.host) ?? '127.0.0.1',
  };
}

/** Parses the arguments after `node bin.js`; throws UsageError for anything it does not understand. */
export function parseCommandLine(argv: readonly string[]): ParsedArgs {
  const { values, positionals } = (() => {
    try {
      return parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
    } catch (error) {
      throw usageErrorFrom(error);
    }
  })();
  const flags: FlagSettings = {
    provider: parseProvider(values.provider),
    model: nonEmpty('--model', values.model),
    baseURL: nonEmpty('--base-url', values['base-url']),
    cwd: nonEmpty('--cwd', values.cwd),
    yes: values.yes === true,
    sandbox: parseSandboxMode(values.sandbox),
    allowNetwork: values['allow-network'],
    maxCostUsd: parseMaxCost(values['max-cost']),
  };
  if (values.help === true) return { command: { type: 'help' }, flags };
  if (values.version === true) return { command: { type: 'version' }, flags };

  const [name, ...rest] = positionals;
  const json = values.json === true;
  const prompt = values.print;
  if (prompt !== undefined && prompt.trim() === '') throw new UsageError('-p needs a prompt');

  if (name !== 'serve' && name !== 'mcp') {
    if (values.port !== undefined || values.host !== undefined) {
      throw new UsageError("--port and --host belong to 'youyou serve'");
    }
    if (values['database-url'] !== undefined || values['no-web-chat'] !== undefined) {
      throw new UsageError("--database-url and --no-web-chat belong to 'youyou serve'");
    }
  }
  if (name === 'sessions') {
    if (rest.length > 0) throw new UsageError(`'sessions' takes no arguments, got '${rest.join(' ')}'`);
    if (prompt !== undefined || values.continue === true) {
      throw new UsageError("'sessions' cannot be combined with -p or --continue");
    }
    return {
      command: {
        type: 'sessions',
        search: nonEmpty('--search', values.search),
        limit: parseLimit(values.limit),
        json,
      },
      flags,
    };
  }
  if (name === 'serve') {
    if (rest.length > 0) throw new UsageError(`'serve' takes no arguments, got '${rest.join(' ')}'`);
    if (prompt !== undefined || values.continue === true || json) {
      throw new UsageError("'serve' cannot be combined with -p, --continue or --json");
    }
    // The URL is never quoted back: it may hold a password.
    const databaseUrl = nonEmpty('--database-url', values['database-url']);
    return {
      command: {
        type: 'serve',
        port: parsePort(values.port),
        host: nonEmpty('--host', values.host) ?? '127.0.0.1',
        ...(databaseUrl === undefined ? {} : { databaseUrl }),
        ...(values['no-web-chat'] === true ? { webChat: false as const } : {}),
      },
      flags,
    };
  }
  if (name === 'acp') {
    if (rest.length > 0) throw new UsageError(`'acp' takes no arguments, got '${rest.join(' ')}'`);
    if (prompt !== undefined || values.continue === true || json) {
      throw new UsageError("'acp' cannot be combined with -p, --continue or --json");
    }
    if (values.search !== undefined || values.limit !== undefined) {
      throw new UsageError("--search and --limit belong to 'youyou sessions'");
    }
    return { command: { type: 'acp' }, flags };
  }
  if (values.search !== undefined) throw new UsageError("--search belongs to 'youyou sessions'");
  if (values.limit !== undefined) throw new UsageError("--limit belongs to 'youyou sessions'");
  if (name === 'mcp') return { command: parseMcpCommand(rest, values), flags };
  if (json && prompt === undefined) throw new UsageError('--json needs -p (or the sessions command)');

  let resume: string | undefined;
  if (name === 'resume') {
    if (rest.length !== 1) throw new UsageError("'resume' takes one session id: youyou resume ID");
    resume = rest[0];
    if (values.continue === true) throw new UsageError("'resume' and --continue cannot be combined");
  } else if (name !== undefined) {
    throw new UsageError(`unknown command '${name}'; to send a prompt, use youyou -p "${name}"`);
  }
  const fork = values.fork === true;
  if (fork && resume === undefined) throw new UsageError("--fork belongs to 'youyou resume ID'");
  return {
    command: {
      type: 'chat',
      prompt,
      json,
      resume,
      latest: values.continue === true,
      ...(fork ? { fork } : {}),
    },
    flags,
  };
}

/** The options of the parsed command line, as parseArgs gives them. */
type ParsedValues = ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>['values'];

/** The text of `youyou --help`. */
export function usageText(): string {
  return `youyou — a terminal agent for the current directory

Usage:
  youyou [options]                   interactive chat
  youyou -p "prompt" [--json]        one turn: the answer on stdout, tool activity on stderr
  youyou --continue [-p "prompt"]    continue the latest session
  youyou resume ID [-p "prompt"]     resume a session (an id or a unique prefix of one)
  youyou resume ID --fork            continue in a new session with that session's history (it stays as it was)
  youyou sessions [--search TEXT] [--limit N] [--json]
                                     list sessions, newest first
  youyou serve [--port N] [--host ADDR] [--database-url URL] [--no-web-chat]
                                     the sessions API over HTTP (default 127.0.0.1:8787) and the web chat
                                     page at /; bearer tokens from config.json "server.tokens" or
                                     YOUYOU_SERVER_TOKENS. Sessions and memories go to youyou.db, or with
                                     --database-url postgres://… to PostgreSQL, where several serve
                                     processes can share one database
  youyou mcp serve [--port N] [--host ADDR] [--yes]
                                     youyou as an MCP server: a tool that runs a turn in this workspace;
                                     over stdio, or Streamable HTTP at /mcp with --port (same tokens as
                                     serve). Mutating tools ask the MCP client (elicitation), else need --yes
  youyou acp                         the Agent Client Protocol on stdin/stdout, for editors such as Zed
                                     (each session works in the folder the editor names)
  youyou mcp login NAME              log in to HTTP MCP server NAME of config.json (OAuth in the browser;
                                     the URL is printed too); the login is kept in YOUYOU_HOME/mcp-auth/
  youyou mcp logout NAME             delete the saved login of MCP server NAME

Options:
  -p, --print PROMPT      run one turn without the interactive prompt
      --json              with -p: print every event as one JSON line
  -c, --continue          resume the latest session
      --provider NAME     openai | anthropic | compatible (default: compatible, a local Ollama)
  -m, --model ID          the model (default: llama3.2 for compatible, the provider's first model otherwise)
      --base-url URL      the server's base URL (default for compatible: http://127.0.0.1:11434/v1)
      --cwd DIR           the workspace root (default: the current directory)
  -y, --yes               run mutating tools without asking
      --sandbox MODE      how the shell is confined: workspace-write (default: bubblewrap, only the workspace
                          and a private /tmp writable, no network, credential folders hidden), read-only,
                          or danger-full-access (no sandbox at all)
      --allow-network     let shell commands use the network inside the sandbox
      --max-cost USD      what one session may spend on model calls, resumes included; a call that could
                          pass it is not made (default: config.json "maxCostUsd", else no limit). Needs a
                          model with known prices: a local model without them is refused
  -h, --help              show this help
  -v, --version           show the version

Environment:
  OPENAI_API_KEY, ANTHROPIC_API_KEY   API keys of the openai and anthropic providers
  YOUYOU_API_KEY                      API key sent to a compatible server (most local ones need none)
  YOUYOU_PROVIDER, YOUYOU_MODEL, YOUYOU_BASE_URL   defaults for the flags above
  YOUYOU_SERVER_TOKENS                for serve: token=tenant pairs, comma-separated
  YOUYOU_DATABASE_URL                 for serve: the PostgreSQL URL, kept out of ps (--database-url wins)
  YOUYOU_HOME                         replaces ~/.youyou (config.json, youyou.db, history, skills/)
  NO_COLOR                            turns colours off

`;
}
