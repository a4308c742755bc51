import type { Agent, SessionStorage } from '@youyou/agent';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import { authenticate, checkAuth, type ServerAuth, tokenResolver } from './http/auth.js';
import type { TenantApp } from './http/context.js';
import { errorResponse, HttpError } from './http/errors.js';
import { type ListeningServer, listen } from './http/listen.js';
import { approvalRoutes } from './routes/approvals.js';
import { elicitationRoutes } from './routes/elicitations.js';
import { logRoutes } from './routes/log.js';
import { type RouteGroup, routeDeps } from './routes/route-deps.js';
import { sessionRoutes } from './routes/sessions.js';
import { turnRoutes } from './routes/turns.js';
import { uiChatRoutes } from './routes/ui-chat.js';
import { mountWebChat, type WebChatOptions } from './routes/web-chat.js';
import type { HeldElicitations } from './sessions/held-elicitations.js';
import { SessionHub } from './sessions/hub.js';
import { tenantTurnOptions } from './sessions/tenant-spend.js';
import { tenantIn } from './sessions/tenants.js';

/** The default of `limits.journalMaxBytes`: 64 MiB of kept events, over every session. */
const DEFAULT_JOURNAL_MAX_BYTES = 64 * 2 ** 20;

/** Limits of one server; every field has a default. */
export interface ServerLimits {
  /** Largest request body in bytes (default 1 MiB); more is 413 PAYLOAD_TOO_LARGE. */
  maxBodyBytes?: number;
  /** A session with no running turn is closed on the agent after this long (default 60 s); it resumes on demand. */
  idleSessionMs?: number;
  /** Events kept per session for reconnecting clients (default 10,000). */
  journalCapacity?: number;
  /** How long a session closed while idle is remembered, its events kept for reconnecting clients (default 15 min). */
  journalRetentionMs?: number;
  /**
   * The bytes all sessions' kept events may take together (default 64 MiB), counted as their sent JSON (two
   * bytes a character when it has one above U+00FF, one otherwise, as V8 keeps it) plus 64 bytes each: past
   * it the finished turns of the session whose last turn ended longest ago are dropped first (a client
   * reconnecting into them gets a `resync`), so a burst of turns cannot grow the memory.
   */
  journalMaxBytes?: number;
  /** Interval of the SSE keep-alive comment (default 15 s). */
  keepAliveMs?: number;
  /**
   * How often `/sessions/:id/log` reads the log again when no notification woke it (default 1 s); with a
   * storage that notifies, an idle tail doubles it up to 8× (a lost notification is rare), back on any event.
   */
  logPollMs?: number;
  /**
   * The `Retry-After` (seconds, default 1) of 429 `SERVER_BUSY`: a request that needs a session slot while
   * every one of the agent's `maxActiveSessions` runs a turn.
   */
  busyRetryAfterSeconds?: number;
  /**
   * What one tenant's model calls may cost per UTC day, in US dollars, counted from `storage` (so every process
   * sharing it sees the same total) at the start of each turn; the turn may spend what is left and no more
   * (`error` BUDGET_EXCEEDED). Default: no limit.
   */
  tenantDailyCostUsd?: number;
}

/** CORS for browsers on other origins; without it no CORS header is sent. */
export interface ServerCors {
  origin: string | string[];
  /** Extra response headers a browser may read. */
  exposeHeaders?: string[];
  maxAgeSeconds?: number;
}

/** What `createServer` takes: an agent built with `maxActiveSessions` N and the storage it was built with. */
export interface ServerOptions {
  agent: Agent;
  /** The agent's session storage: listing, search, and finding the tenant of a session not active here. */
  storage?: SessionStorage;
  auth: ServerAuth;
  limits?: ServerLimits;
  cors?: ServerCors;
  /**
   * A session whose last turn a crash cut (its process was killed): `'auto'` continues that turn as soon as
   * this server takes the session (a request opens it, a client follows its events or UI stream); with
   * `'on-request'` (the default) it waits for `POST /sessions/:id/continue`.
   */
  continueInterrupted?: 'auto' | 'on-request';
  /**
   * Serves the web chat page at `GET /` and `GET /web-chat/*`, without a token: `true` (or `{}`) serves the
   * package's own copy, `{ folder }` a copy of yours; left out or false, no page.
   */
  webChat?: boolean | WebChatOptions;
  /**
   * MCP servers' questions (elicitation) to hold for the sessions' clients: the host's MCP client puts them
   * here (`hold`), clients list and answer them at `/sessions/:id/elicitations`. Without it the list is empty.
   */
  elicitations?: HeldElicitations;
}

/**
 * The server: the hono app itself (`fetch`, `request`, mountable with `route`), plus `listen()` on a port
 * and `close()` that cancels running turns and closes the sessions it opened.
 */
export type YouyouServer = TenantApp & {
  listen(options?: { port?: number; host?: string }): Promise<ListeningServer>;
  close(): Promise<void>;
  /** The tenant that owns a session (saved in its log), or undefined: what a host keys per-tenant data on. */
  tenantOf(sessionId: string): Promise<string | undefined>;
};

/** The route groups behind the auth middleware, each a module of routes/ mounted the same way. */
const ROUTE_GROUPS: readonly RouteGroup[] = [
  sessionRoutes,
  turnRoutes,
  logRoutes,
  approvalRoutes,
  elicitationRoutes,
  uiChatRoutes,
];

/** Puts an Agent behind HTTP: the sessions API (SSE turns, tails, approvals, steering) per tenant. */
export function createServer(options: ServerOptions): YouyouServer {
  const resolveToken = tokenResolver(checkAuth(options.auth));
  const busyRetryAfterSeconds = options.limits?.busyRetryAfterSeconds ?? 1;
  if (!Number.isInteger(busyRetryAfterSeconds) || busyRetryAfterSeconds < 0) {
    throw new TypeError('limits.busyRetryAfterSeconds must be a whole number of seconds, 0 or more');
  }
  const journalMaxBytes = options.limits?.journalMaxBytes ?? DEFAULT_JOURNAL_MAX_BYTES;
  if (!Number.isInteger(journalMaxBytes) || journalMaxBytes < 0) {
    throw new TypeError('limits.journalMaxBytes must be a whole number of bytes, 0 or more');
  }
  const turnOptionsOf = tenantTurnOptions({
    dailyCostUsd: options.limits?.tenantDailyCostUsd,
    storage: options.storage,
    tenantIn,
  });
  const hub = new SessionHub({
    agent: options.agent,
    turnOptionsOf,
    storage: options.storage,
    idleMs: options.limits?.idleSessionMs ?? 60_000,
    journalCapacity: options.limits?.journalCapacity ?? 10_000,
    journalRetentionMs: options.limits?.journalRetentionMs ?? 15 * 60_000,
    journalMaxBytes,
    busyRetryAfterSeconds,
    autoContinue: checkContinueMode(options.continueInterrupted) === 'auto',
  });
  const app: TenantApp = new Hono();
  useCommonMiddleware(app, options);
  if (options.webChat !== undefined && options.webChat !== false) {
    mountWebChat(app, options.webChat === true ? {} : options.webChat);
  }
  app.use('*', async (context, next) => {
    context.set('tenant', await authenticate(resolveToken, context));
    await next();
  });
  const deps = routeDeps({
    hub,
    turnOptionsOf,
    storage: options.storage,
    keepAliveMs: options.limits?.keepAliveMs ?? 15_000,
    logPollMs: options.limits?.logPollMs ?? 1_000,
    elicitations: options.elicitations,
  });
  for (const group of ROUTE_GROUPS) group(app, deps);
  const stopAnnouncing = options.elicitations?.onChange((change) => hub.announceElicitation(change));

  const close = (): Promise<void> => {
    options.elicitations?.close();
    stopAnnouncing?.();
    return hub.close();
  };
  return Object.assign(app, {
    close,
    tenantOf: (sessionId: string) => hub.ownerOf(sessionId),
    listen: (listenOptions?: { port?: number; host?: string }) =>
      listen({ fetch: app.fetch, close }, listenOptions ?? {}),
  });
}

/** The error answers, CORS and the body limit, in front of every route (the web chat's too). */
function useCommonMiddleware(app: TenantApp, options: ServerOptions): void {
  const maxBodyBytes = options.limits?.maxBodyBytes ?? 1024 * 1024;
  app.onError((error, context) => errorResponse(context, error));
  app.notFound((context) =>
    errorResponse(context, new HttpError({ status: 404, code: 'NOT_FOUND', message: 'no such route' })),
  );
  if (options.cors !== undefined) {
    app.use(
      '*',
      cors({
        origin: options.cors.origin,
        allowHeaders: ['Authorization', 'Content-Type', 'Last-Event-ID'],
        allowMethods: ['GET', 'POST', 'OPTIONS'],
        exposeHeaders: options.cors.exposeHeaders ?? [],
        ...(options.cors.maxAgeSeconds === undefined ? {} : { maxAge: options.cors.maxAgeSeconds }),
      }),
    );
  }
  app.use(
    '*',
    bodyLimit({
      maxSize: maxBodyBytes,
      onError: (context) =>
        errorResponse(
          context,
          new HttpError({
            status: 413,
            code: 'PAYLOAD_TOO_LARGE',
            message: `the request body is larger than ${maxBodyBytes} bytes`,
          }),
        ),
    }),
  );
}

/** The `continueInterrupted` option, checked: a host's typo must not silently turn automatic continuing off. */
function checkContinueMode(mode: unknown): 'auto' | 'on-request' {
  if (mode === undefined) return 'on-request';
  if (mode === 'auto' || mode === 'on-request') return mode;
  throw new TypeError(
    `continueInterrupted must be 'auto' or 'on-request', got ${JSON.stringify(String(mode))}`,
  );
}
