import type { AgentError, SessionStorage } from '@youyou/agent';
import type { ElicitationHandler } from '@youyou/mcp';
import type { HeldElicitations } from '@youyou/server';
import { plainMessage } from '../../chat/style.js';
import type { CliSettings } from '../../config/config.js';
import { tokensFromEnv } from '../../config/server.js';
import { ConfigError } from '../../config/values.js';
import type { CliIo } from '../../runtime/cli-io.js';
import { type CliRuntime, openHomeStorage, type RuntimeStorage, setUpRuntime } from '../../runtime/setup.js';
import { type ServeWorkspaces, serveWorkspaces } from '../../runtime/tenant-workspaces.js';
import { countOf } from '../../text/plural.js';
import { neutralizeLine } from '../../text/terminal-text.js';
import { type DatabaseTarget, databaseTarget, openServeDatabase, redacted } from './database.js';
import { moveTenantMemories } from './tenant-memories.js';

/** How long an MCP server's question waits for a client without "server.approvalWindowMs" (then it is declined). */
const DEFAULT_ELICITATION_WINDOW_MS = 5 * 60_000;

/** How many sessions `youyou serve` holds at once without "server.maxActiveSessions". */
const DEFAULT_MAX_ACTIVE_SESSIONS = 16;

/** The PostgreSQL URL serve runs on, if any: --database-url, else YOUYOU_DATABASE_URL, else server.databaseUrl. */
function chooseDatabase(options: {
  flag: string | undefined;
  env: NodeJS.ProcessEnv;
  settings: CliSettings;
}): DatabaseTarget | undefined {
  if (options.flag !== undefined) return databaseTarget(options.flag, '--database-url');
  const fromEnv = options.env.YOUYOU_DATABASE_URL;
  if (fromEnv !== undefined && fromEnv.trim() !== '') return databaseTarget(fromEnv, 'YOUYOU_DATABASE_URL');
  const fromConfig = options.settings.server?.databaseUrl;
  return fromConfig === undefined ? undefined : databaseTarget(fromConfig, 'server.databaseUrl');
}

/**
 * Opens the storages, then moves the memories that older versions saved from tenants' sessions into the
 * shared namespace to their tenants' (see `moveTenantMemories`), before any session can read them.
 */
async function withTenantMemoriesMoved(options: {
  open: () => Promise<RuntimeStorage<SessionStorage>>;
  io: CliIo;
}): Promise<RuntimeStorage<SessionStorage>> {
  const storage = await options.open();
  try {
    const { TENANT_METADATA_KEY, tenantMemoryNamespace } = await import('@youyou/server');
    const moved = await moveTenantMemories({
      memories: storage.memories,
      sessions: storage.sessions,
      tenantKey: TENANT_METADATA_KEY,
      namespaceOf: tenantMemoryNamespace,
    });
    if (moved > 0)
      options.io.stderr.write(
        `youyou: ${countOf(moved, 'memory', 'memories')} of tenants' sessions moved to their tenants\n`,
      );
    return storage;
  } catch (error) {
    await storage.close().catch(() => undefined);
    throw error;
  }
}

/**
 * `youyou serve`: the CLI's providers, tools and config behind the sessions API of @youyou/server, with the
 * web chat page at / (unless `webChat` is false), until SIGINT or SIGTERM. Sessions and memories are in
 * youyou.db, or in PostgreSQL when a database URL is given (then several serve processes can share it).
 * Refuses to start without a token. Resolves with the exit code.
 */
export async function runServe(options: {
  settings: CliSettings;
  port: number;
  host: string;
  /** --database-url; YOUYOU_DATABASE_URL and the config's server.databaseUrl are read when it is absent. */
  databaseUrl?: string | undefined;
  /** False for --no-web-chat; otherwise the config's server.webChat decides (default on). */
  webChat?: boolean | undefined;
  io: CliIo;
}): Promise<number> {
  const { settings, io } = options;
  const tokens = { ...(settings.server?.tokens ?? {}), ...tokensFromEnv(io.env.YOUYOU_SERVER_TOKENS) };
  if (Object.keys(tokens).length === 0) {
    throw new ConfigError(
      `youyou serve needs at least one bearer token: "server": { "tokens": { "<token>": "<tenant>" } } in ${settings.configPath}, or YOUYOU_SERVER_TOKENS=token=tenant`,
    );
  }
  const database = chooseDatabase({ flag: options.databaseUrl, env: io.env, settings });
  const webChat = options.webChat !== false && settings.server?.webChat !== false;
  const workspaces = await serveWorkspaces(settings);
  const { createServer, listen, HeldElicitations } = await import('@youyou/server');
  const elicitations = new HeldElicitations({
    windowMs: settings.server?.approvalWindowMs ?? DEFAULT_ELICITATION_WINDOW_MS,
  });
  const runtime = await serveRuntime({ settings, io, database, workspaces, elicitations });
  try {
    const idleSessionMs = settings.server?.idleSessionMs;
    const tenantDailyCostUsd = settings.server?.tenantDailyCostUsd;
    const journalRetentionMs = settings.server?.journalRetentionMs;
    const journalMaxBytes = settings.server?.journalMaxBytes;
    const server = createServer({
      agent: runtime.agent,
      storage: runtime.sessions,
      auth: { tokens },
      webChat,
      elicitations,
      limits: {
        ...(idleSessionMs === undefined ? {} : { idleSessionMs }),
        ...(tenantDailyCostUsd === undefined ? {} : { tenantDailyCostUsd }),
        ...(journalRetentionMs === undefined ? {} : { journalRetentionMs }),
        ...(journalMaxBytes === undefined ? {} : { journalMaxBytes }),
      },
      ...(settings.server?.continueInterrupted === undefined
        ? {}
        : { continueInterrupted: settings.server.continueInterrupted }),
    });
    workspaces.knowTenants((sessionId) => server.tenantOf(sessionId));
    const listening = await listen(server, { port: options.port, host: options.host });
    // One write: whoever waits for the banner (a supervisor, a test) reads all of it at once.
    const banner = [
      `youyou: serving on ${listening.url} (${Object.keys(tokens).length} token(s))`,
      database === undefined
        ? `youyou: sessions in ${neutralizeLine(settings.databasePath)}`
        : `youyou: sessions in PostgreSQL at ${neutralizeLine(database.where)}`,
      `youyou: ${workspaces.description}`,
      ...(webChat ? [`youyou: web chat at ${listening.url}/ (it asks for a token)`] : []),
    ];
    io.stdout.write(`${banner.join('\n')}\n`);
    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    });
    io.stderr.write(`youyou: ${signal}, stopping\n`);
    await listening.close();
    return 0;
  } catch (error) {
    if ((error as { code?: unknown }).code === 'EADDRINUSE') {
      throw new ConfigError(
        `${neutralizeLine(options.host)}:${options.port} is in use; choose another --port`,
      );
    }
    throw error;
  } finally {
    await runtime.close();
  }
}

/**
 * The runtime of `youyou serve`: sessions and memories in youyou.db or the database, approvals held for a
 * client (unless --yes), many sessions at once, a workspace per tenant when the config asks for it.
 */
async function serveRuntime(options: {
  settings: CliSettings;
  io: CliIo;
  database: DatabaseTarget | undefined;
  workspaces: ServeWorkspaces;
  elicitations: HeldElicitations;
}): Promise<CliRuntime<SessionStorage>> {
  const { settings, io, database, workspaces } = options;
  // Texts of the database's background failures could quote its URL: its password is cut out first.
  const onBackgroundError = (error: AgentError): void => {
    const text = plainMessage(error.message);
    io.warn(database === undefined ? text : redacted(text, database));
  };
  const openStorage = (): Promise<RuntimeStorage<SessionStorage>> =>
    withTenantMemoriesMoved({
      io,
      open: () =>
        database === undefined
          ? openHomeStorage({ settings, onBackgroundError })
          : openServeDatabase({
              target: database,
              schema: settings.server?.databaseSchema ?? 'public',
              onBackgroundError,
            }),
    });
  return setUpRuntime({
    settings,
    env: io.env,
    openStorage,
    // Mutating calls wait for a client's approve/deny (durable: they survive a restart), unless --yes.
    approval: { type: 'allow_all' },
    mutatingNeedApproval: !settings.yes,
    maxActiveSessions: settings.server?.maxActiveSessions ?? DEFAULT_MAX_ACTIVE_SESSIONS,
    ...(settings.server?.approvalWindowMs === undefined
      ? {}
      : { approvalWindowMs: settings.server.approvalWindowMs }),
    ...(workspaces.routing === undefined ? {} : { workspaces: workspaces.routing }),
    warn: io.warn,
    notice: (text) => io.stderr.write(`youyou: ${text}\n`),
    onBackgroundError,
    onElicitation: await heldForClients(options.elicitations),
  });
}

/**
 * MCP servers' questions held for the client of the session whose tool call asks (like an approval). A
 * question asked while calls of several sessions (or none) run on that server cannot be told apart over
 * MCP: it is declined rather than shown to the wrong tenant.
 */
async function heldForClients(elicitations: HeldElicitations): Promise<ElicitationHandler> {
  const { fieldProblem } = await import('@youyou/mcp');
  return async (request) => {
    const sessions = [...new Set(request.callsInFlight.map((call) => call.sessionId))];
    const [sessionId] = sessions;
    if (sessionId === undefined || sessions.length > 1) return { action: 'decline' };
    const turns = [...new Set(request.callsInFlight.map((call) => call.turnId))];
    return elicitations.hold({
      sessionId,
      ...(turns.length === 1 && turns[0] !== undefined ? { turnId: turns[0] } : {}),
      server: request.server,
      message: request.message,
      fields: request.fields,
      signal: request.signal,
      problemWith: (content) => {
        for (const field of request.fields) {
          const value = content[field.name];
          if (value === undefined) {
            if (field.required) return `'${field.name}' is required`;
            continue;
          }
          const problem = fieldProblem(field, value);
          if (problem !== undefined) return `'${field.name}': ${problem}`;
        }
        return undefined;
      },
    });
  };
}
