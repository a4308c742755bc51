import type { Agent, RunningTurn, SessionStorage, SessionSummary, UserInput } from '@youyou/agent';
import { type Context, Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import { authenticate, checkAuth, type ServerAuth, tokenResolver } from './http/auth.js';
import { onlyKeys, optionalString, parseCursor, readJsonObject } from './http/body.js';
import { errorResponse, HttpError } from './http/errors.js';
import { type ListeningServer, listen } from './http/listen.js';
import { isTerminal, streamJournal } from './http/sse.js';
import { eventLogOf, mountLogRoute } from './routes/log.js';
import { mountUiChat } from './routes/ui-chat.js';
import { mountWebChat, type WebChatOptions } from './routes/web-chat.js';
import { SessionHub } from './sessions/hub.js';

/** Limits of one server; every field has a default. */
export interface ServerLimits {
  /** Largest request body in bytes (default 1 MiB); more is 413 PAYLOAD_TOO_LARGE. */
  maxBodyBytes?: number;
  /** A session with no running turn is closed on the agent after this long (default 60 s); it resumes on demand. */
  idleSessionMs?: number;
  /** Events kept per session for reconnecting clients (default 10,000). */
  journalCapacity?: number;
  /** How long the events of a session closed while idle are kept for reconnecting clients (default 15 min). */
  journalRetentionMs?: number;
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
   * Serves the web chat page at `GET /` and `GET /web-chat/*`, without a token: `true` (or `{}`) serves the
   * package's own copy, `{ folder }` a copy of yours; left out or false, no page.
   */
  webChat?: boolean | WebChatOptions;
}

/**
 * The server: the hono app itself (`fetch`, `request`, mountable with `route`), plus `listen()` on a port
 * and `close()` that cancels running turns and closes the sessions it opened.
 */
export type YouyouServer = Hono<{ Variables: { tenant: string } }> & {
  listen(options?: { port?: number; host?: string }): Promise<ListeningServer>;
  close(): Promise<void>;
  /** The tenant that owns a session (saved in its log), or undefined: what a host keys per-tenant data on. */
  tenantOf(sessionId: string): Promise<string | undefined>;
};

const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** Puts an Agent behind HTTP: the sessions API (SSE turns, tails, approvals, steering) per tenant. */
export function createServer(options: ServerOptions): YouyouServer {
  const resolveToken = tokenResolver(checkAuth(options.auth));
  const maxBodyBytes = options.limits?.maxBodyBytes ?? 1024 * 1024;
  const keepAliveMs = options.limits?.keepAliveMs ?? 15_000;
  const busyRetryAfterSeconds = options.limits?.busyRetryAfterSeconds ?? 1;
  if (!Number.isInteger(busyRetryAfterSeconds) || busyRetryAfterSeconds < 0) {
    throw new TypeError('limits.busyRetryAfterSeconds must be a whole number of seconds, 0 or more');
  }
  const hub = new SessionHub({
    agent: options.agent,
    storage: options.storage,
    idleMs: options.limits?.idleSessionMs ?? 60_000,
    journalCapacity: options.limits?.journalCapacity ?? 10_000,
    journalRetentionMs: options.limits?.journalRetentionMs ?? 15 * 60_000,
    busyRetryAfterSeconds,
  });
  const eventLog = eventLogOf(options.storage);
  const app = new Hono<{ Variables: { tenant: string } }>();

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
  if (options.webChat !== undefined && options.webChat !== false) {
    mountWebChat(app, options.webChat === true ? {} : options.webChat);
  }
  app.use('*', async (context, next) => {
    context.set('tenant', await authenticate(resolveToken, context));
    await next();
  });

  /** The owned session id of the route, or SESSION_NOT_FOUND (404) for a bad, unknown or foreign one. */
  const ownedSession = async (context: Context<{ Variables: { tenant: string } }>): Promise<string> => {
    const sessionId = context.req.param('id') ?? '';
    if (!SESSION_ID.test(sessionId)) {
      throw new HttpError({ status: 404, code: 'SESSION_NOT_FOUND', message: 'no such session' });
    }
    await hub.authorize(context.get('tenant'), sessionId);
    return sessionId;
  };

  app.post('/sessions', async (context) => {
    const body = await readJsonObject(context);
    onlyKeys(body, ['modelId']);
    const modelId = optionalString(body, 'modelId');
    const sessionId = await hub.create(context.get('tenant'), modelId === undefined ? {} : { modelId });
    return context.json({ sessionId }, 201);
  });

  app.get('/sessions', async (context) => {
    const tenant = context.get('tenant');
    const query = context.req.query('q');
    const storage = options.storage;
    if (storage === undefined) return context.json({ sessions: [], nextCursor: null });
    const owned = async (summaries: SessionSummary[]): Promise<SessionSummary[]> => {
      const owners = await Promise.all(summaries.map((summary) => hub.ownerOf(summary.sessionId)));
      return summaries.filter((_summary, index) => owners[index] === tenant);
    };
    if (query !== undefined && query !== '') {
      return context.json({ sessions: await owned(await storage.findSession(query)), nextCursor: null });
    }
    const limitText = context.req.query('limit');
    const limit = limitText === undefined ? 50 : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 200) {
      throw new HttpError({
        status: 400,
        code: 'INVALID_INPUT',
        message: 'limit must be an integer from 1 to 200',
      });
    }
    // Other tenants' sessions are skipped page by page until this tenant's page is full.
    let cursor = context.req.query('cursor');
    const sessions: SessionSummary[] = [];
    for (;;) {
      const page = await storage.listSessions(cursor === '' ? undefined : cursor, limit);
      sessions.push(...(await owned(page.sessions)));
      cursor = page.nextCursor ?? undefined;
      if (sessions.length >= limit || cursor === undefined) break;
    }
    return context.json({ sessions, nextCursor: cursor ?? null });
  });

  app.get('/sessions/:id', async (context) => {
    const sessionId = await ownedSession(context);
    const session = hub.activeSession(sessionId);
    // A cheap status: a session not open here shows no pending calls (GET …/messages reads them from the log).
    return context.json({
      sessionId,
      active: session !== undefined,
      turnRunning: session?.isTurnRunning ?? false,
      pendingApprovals: session?.pendingApprovals() ?? [],
      lastSequence: hub.journal(sessionId).lastSequence,
    });
  });

  app.get('/sessions/:id/messages', async (context) => {
    const sessionId = await ownedSession(context);
    return context.json(await hub.history(sessionId));
  });

  /**
   * Starts a turn with `start` and answers the SSE stream of that turn's events: a tail from the sequence
   * before it started, relayed by the hub and ended by the turn's terminal event.
   */
  const streamTurn = async (
    context: Context<{ Variables: { tenant: string } }>,
    sessionId: string,
    start: () => Promise<RunningTurn>,
  ): Promise<Response> => {
    const journal = hub.journal(sessionId);
    const after = journal.lastSequence;
    const turn = await start();
    hub.track(sessionId, turn);
    return streamJournal({
      context,
      journal,
      after,
      keepAliveMs,
      turnId: turn.turnId,
      until: (entry) => entry.event.turnId === turn.turnId && isTerminal(entry),
    });
  };

  app.post('/sessions/:id/messages', async (context) => {
    const sessionId = await ownedSession(context);
    const body = await readJsonObject(context);
    onlyKeys(body, ['content']);
    const session = await hub.session(sessionId);
    return streamTurn(context, sessionId, () => session.sendMessage(body.content as UserInput | string));
  });

  app.get('/sessions/:id/events', async (context) => {
    const sessionId = await ownedSession(context);
    const after =
      parseCursor(context.req.header('last-event-id'), 'Last-Event-ID') ??
      parseCursor(context.req.query('after'), 'after') ??
      0;
    const watchEvents = eventLog?.watchEvents;
    return streamJournal({
      context,
      journal: hub.journal(sessionId),
      after,
      keepAliveMs,
      // While this process does not hold the session, its commits come from a turn running elsewhere.
      ...(watchEvents === undefined
        ? {}
        : {
            changedElsewhere: async (listener: () => void) => {
              const heldElsewhere = () => hub.activeSession(sessionId) === undefined;
              const stop = await watchEvents(sessionId, () => {
                if (heldElsewhere()) listener();
              });
              // What was committed before the LISTEN took hold is unknown here: one resync covers it.
              if (heldElsewhere()) listener();
              return stop;
            },
          }),
    });
  });

  mountLogRoute(app, {
    storage: options.storage,
    ownedSession,
    keepAliveMs,
    pollMs: options.limits?.logPollMs ?? 1_000,
  });

  app.post('/sessions/:id/cancel', async (context) => {
    const sessionId = await ownedSession(context);
    const turn = hub.activeSession(sessionId)?.currentTurn;
    turn?.cancel();
    return context.json({ cancelled: turn !== undefined });
  });

  app.post('/sessions/:id/approvals/:callId', async (context) => {
    const sessionId = await ownedSession(context);
    const body = await readJsonObject(context);
    onlyKeys(body, ['approved', 'reason']);
    if (typeof body.approved !== 'boolean') {
      throw new HttpError({
        status: 400,
        code: 'INVALID_INPUT',
        message: "'approved' must be true or false",
      });
    }
    const reason = optionalString(body, 'reason');
    const session = await hub.session(sessionId);
    const callId = context.req.param('callId');
    if (body.approved) await session.approve(callId);
    else await session.deny(callId, reason);
    try {
      return await streamTurn(context, sessionId, () => session.continue());
    } catch {
      // Other calls of the batch still wait for a decision: the turn continues after the last one.
      return context.json({ continued: false }, 202);
    }
  });

  app.post('/sessions/:id/continue', async (context) => {
    const sessionId = await ownedSession(context);
    const body = await readJsonObject(context);
    onlyKeys(body, []);
    const session = await hub.session(sessionId);
    // INVALID_INPUT while a pending call is undecided and its approval window is still open.
    return streamTurn(context, sessionId, () => session.continue());
  });

  app.post('/sessions/:id/steer', async (context) => {
    const sessionId = await ownedSession(context);
    const body = await readJsonObject(context);
    onlyKeys(body, ['content']);
    const session = await hub.session(sessionId);
    const turn = await session.steer(body.content as UserInput | string);
    hub.track(sessionId, turn);
    return context.json({ turnId: turn.turnId }, 202);
  });

  app.post('/sessions/:id/follow-up', async (context) => {
    const sessionId = await ownedSession(context);
    const body = await readJsonObject(context);
    onlyKeys(body, ['content']);
    const session = await hub.session(sessionId);
    const running = session.currentTurn;
    const started = session.followUp(body.content as UserInput | string);
    if (running === undefined) {
      // No turn runs: the follow-up starts now (or its input is refused now).
      const turn = await started;
      hub.track(sessionId, turn);
      return context.json({ turnId: turn.turnId, queued: false }, 202);
    }
    // Queued behind the running turn; the hub relays the follow-up turn when it starts.
    started.then((turn) => hub.track(sessionId, turn)).catch(() => undefined);
    return context.json({ queued: true }, 202);
  });

  mountUiChat({ app, hub, keepAliveMs });

  const close = (): Promise<void> => hub.close();
  return Object.assign(app, {
    close,
    tenantOf: (sessionId: string) => hub.ownerOf(sessionId),
    listen: (listenOptions?: { port?: number; host?: string }) =>
      listen({ fetch: app.fetch, close }, listenOptions ?? {}),
  });
}
