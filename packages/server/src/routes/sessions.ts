import type { SessionSummary } from '@youyou/agent';
import { onlyKeys, optionalString, readJsonObject } from '../http/body.js';
import type { TenantContext } from '../http/context.js';
import { HttpError } from '../http/errors.js';
import type { RouteDeps, RouteGroup } from './route-deps.js';

/** The sessions themselves: `POST /sessions`, the tenant's listing and search, a session's state and messages. */
export const sessionRoutes: RouteGroup = (app, deps) => {
  const { hub } = deps;

  app.post('/sessions', async (context) => {
    const body = await readJsonObject(context);
    onlyKeys(body, ['modelId']);
    const modelId = optionalString(body, 'modelId');
    const sessionId = await hub.create(context.get('tenant'), modelId === undefined ? {} : { modelId });
    return context.json({ sessionId }, 201);
  });

  app.get('/sessions', (context) => listSessions(context, deps));

  app.get('/sessions/:id', async (context) => {
    const sessionId = await deps.ownedSession(context);
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
    const sessionId = await deps.ownedSession(context);
    return context.json(await hub.history(sessionId));
  });
};

/** `GET /sessions[?q=][&limit=][&cursor=]`: the tenant's sessions, newest first, or those that mention `q`. */
async function listSessions(context: TenantContext, deps: RouteDeps): Promise<Response> {
  const tenant = context.get('tenant');
  const query = context.req.query('q');
  const storage = deps.storage;
  if (storage === undefined) return context.json({ sessions: [], nextCursor: null });
  const owned = async (summaries: SessionSummary[]): Promise<SessionSummary[]> => {
    const owners = await Promise.all(summaries.map((summary) => deps.hub.ownerOf(summary.sessionId)));
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
}
