import type { UserInput } from '@youyou/agent';
import { onlyKeys, parseCursor, readJsonObject } from '../http/body.js';
import type { TenantContext } from '../http/context.js';
import type { RouteDeps, RouteGroup } from './route-deps.js';
import { streamJournal } from './sse.js';

/** The turns of a session: send a message, tail its events, cancel, steer, follow up. */
export const turnRoutes: RouteGroup = (app, deps) => {
  const { hub } = deps;

  app.post('/sessions/:id/messages', async (context) => {
    const sessionId = await deps.ownedSession(context);
    const body = await readJsonObject(context);
    onlyKeys(body, ['content']);
    const session = await hub.session(sessionId);
    const content = body.content as UserInput | string;
    const turnOptions = await deps.turnOptionsOf(context.get('tenant'));
    // A message sent while the server continues a cut turn on its own comes after it, not as TURN_BUSY.
    const start = hub.isContinuation(session.currentTurn)
      ? () => session.followUp(content)
      : () => session.sendMessage(content, turnOptions);
    return deps.streamTurn(context, sessionId, start);
  });

  app.get('/sessions/:id/events', (context) => tailEvents(context, deps));

  app.post('/sessions/:id/cancel', async (context) => {
    const sessionId = await deps.ownedSession(context);
    const turn = hub.activeSession(sessionId)?.currentTurn;
    turn?.cancel();
    return context.json({ cancelled: turn !== undefined });
  });

  app.post('/sessions/:id/steer', async (context) => {
    const sessionId = await deps.ownedSession(context);
    const body = await readJsonObject(context);
    onlyKeys(body, ['content']);
    const session = await hub.session(sessionId);
    const turn = await session.steer(body.content as UserInput | string);
    hub.track(sessionId, turn);
    return context.json({ turnId: turn.turnId }, 202);
  });

  app.post('/sessions/:id/follow-up', async (context) => {
    const sessionId = await deps.ownedSession(context);
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
};

/** `GET /sessions/:id/events`: the session's events after the cursor, then live ones, until the client leaves. */
async function tailEvents(context: TenantContext, deps: RouteDeps): Promise<Response> {
  const { hub } = deps;
  const sessionId = await deps.ownedSession(context);
  const after =
    parseCursor(context.req.header('last-event-id'), 'Last-Event-ID') ??
    parseCursor(context.req.query('after'), 'after') ??
    0;
  await hub.takeForFollower(sessionId);
  const watchEvents = deps.eventLog?.watchEvents;
  return streamJournal({
    context,
    journal: hub.journal(sessionId),
    after,
    keepAliveMs: deps.keepAliveMs,
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
}
