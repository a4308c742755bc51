import type { RunningTurn, SessionStorage, TurnRunOptions } from '@youyou/agent';
import type { TenantApp, TenantContext } from '../http/context.js';
import { HttpError } from '../http/errors.js';
import { eventLogOf, type SessionEventLog } from '../sessions/event-log.js';
import type { HeldElicitations } from '../sessions/held-elicitations.js';
import type { SessionHub } from '../sessions/hub.js';
import { isTerminal } from '../sessions/journal.js';
import { streamJournal } from './sse.js';

/** What every route group is handed: the sessions, the storage, the stream settings and the shared steps. */
export interface RouteDeps {
  hub: SessionHub;
  /** The run options of a tenant's turns: its spend limit, when the server has one. */
  turnOptionsOf: (tenant: string) => Promise<TurnRunOptions | undefined>;
  /** The agent's session storage, if the host passed it: listing, search, the committed log. */
  storage: SessionStorage | undefined;
  /** The storage as a log readable by position, when it is one (PostgreSQL). */
  eventLog: SessionEventLog | undefined;
  keepAliveMs: number;
  logPollMs: number;
  /** MCP servers' questions held for clients, when the host hands them to the server. */
  elicitations: HeldElicitations | undefined;
  /** The owned session id of the route's `:id`, or SESSION_NOT_FOUND (404) for a bad, unknown or foreign one. */
  ownedSession(context: TenantContext): Promise<string>;
  /**
   * Starts a turn with `start` and answers the SSE stream of that turn's events: a tail from the sequence
   * before it started, relayed by the hub and ended by the turn's terminal event.
   */
  streamTurn(context: TenantContext, sessionId: string, start: () => Promise<RunningTurn>): Promise<Response>;
}

/** A group of routes: each module mounts its own on the app, behind the auth middleware, the same way. */
export type RouteGroup = (app: TenantApp, deps: RouteDeps) => void;

/** The id of a session as a route may name it. */
export const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** The deps of the route groups over one hub. */
export function routeDeps(options: {
  hub: SessionHub;
  turnOptionsOf: (tenant: string) => Promise<TurnRunOptions | undefined>;
  storage: SessionStorage | undefined;
  keepAliveMs: number;
  logPollMs: number;
  elicitations?: HeldElicitations | undefined;
}): RouteDeps {
  const { hub, keepAliveMs } = options;
  return {
    ...options,
    elicitations: options.elicitations,
    eventLog: eventLogOf(options.storage),
    ownedSession: async (context) => {
      const sessionId = context.req.param('id') ?? '';
      if (!SESSION_ID.test(sessionId)) {
        throw new HttpError({ status: 404, code: 'SESSION_NOT_FOUND', message: 'no such session' });
      }
      await hub.authorize(context.get('tenant'), sessionId);
      return sessionId;
    },
    streamTurn: async (context, sessionId, start) => {
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
        until: (entry) => entry.turnId === turn.turnId && isTerminal(entry),
      });
    },
  };
}
