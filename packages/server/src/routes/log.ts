import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import { parseCursor } from '../http/body.js';
import { HttpError } from '../http/errors.js';
import type { LoggedSessionEvent, SessionEventLog } from '../sessions/event-log.js';
import type { RouteGroup } from './route-deps.js';

/** How far an idle tail's safety poll backs off, as a multiple of `logPollMs`, when notifications wake it. */
const IDLE_POLL_BACKOFF = 8;

/** How many events one read of the log asks for; a full page is followed by the next read at once. */
const LOG_PAGE_SIZE = 500;

/** The JSON of a logged event: Errors as `{ code, message }` only (never a stack), Dates ISO strings. */
function loggedEventJson(event: LoggedSessionEvent): string {
  return JSON.stringify(
    { sequence: event.sequence, timestamp: event.timestamp, payload: event.payload },
    (_key, value: unknown) =>
      value instanceof Error
        ? { code: 'code' in value ? value.code : 'ERROR', message: value.message }
        : value,
  );
}

/**
 * Streams a session's committed log after `after` as SSE (`id:` = the log position, `event:` = the payload
 * type), then each new committed event as any process saves it, until the client goes away. Every event is
 * read from the storage at the cursor, so nothing is missed or sent twice whichever process wrote it.
 */
export function streamLog(options: {
  context: Context;
  log: SessionEventLog;
  sessionId: string;
  after: number;
  keepAliveMs: number;
  /** How often the log is read again without a wake-up (a lost or disabled notification). */
  pollMs: number;
}): Response {
  const { context, log, sessionId } = options;
  return streamSSE(context, async (stream) => {
    let cursor = options.after;
    let wake: (() => void) | undefined;
    let woken = false;
    const rouse = () => {
      woken = true;
      wake?.();
    };
    let aborted = false;
    stream.onAbort(() => {
      aborted = true;
      wake?.();
    });
    // Listen before the first read, so an event committed in between wakes the loop instead of waiting a poll.
    const unwatch = await log.watchEvents?.(sessionId, rouse).catch(() => undefined);
    const stopWatching = unwatch ?? (() => undefined);
    // With notifications the poll only covers a lost one, so an idle tail polls less and less often.
    const maxPollMs = unwatch === undefined ? options.pollMs : options.pollMs * IDLE_POLL_BACKOFF;
    let pollMs = options.pollMs;
    const keepAlive = setInterval(() => {
      stream.write(': keep-alive\n\n').catch(() => undefined);
    }, options.keepAliveMs);
    try {
      while (!aborted) {
        woken = false;
        const events = await log.readEventsAfter(sessionId, cursor, LOG_PAGE_SIZE);
        if (events.length > 0) pollMs = options.pollMs;
        for (const event of events) {
          if (aborted) break;
          await stream.writeSSE({
            id: String(event.sequence),
            event: event.payload.type,
            data: loggedEventJson(event),
          });
          cursor = event.sequence;
        }
        // A full page may have more behind it; a wake-up during the read or the writes means there may be
        // more now. Otherwise everything committed before the read was sent: reading again at once would
        // only find nothing (one wasted query per event under load), so wait for the next wake-up.
        if (events.length === LOG_PAGE_SIZE || woken) continue;
        const polled = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(true), pollMs);
          timer.unref();
          wake = () => {
            clearTimeout(timer);
            resolve(false);
          };
        });
        wake = undefined;
        if (polled) pollMs = Math.min(pollMs * 2, maxPollMs);
      }
    } finally {
      clearInterval(keepAlive);
      stopWatching();
    }
  });
}

/**
 * `GET /sessions/:id/log`: the cross-process tail. The cursor is `Last-Event-ID` or `?after=`
 * (a log position; 0 = from the start). 501 NOT_SUPPORTED when the storage cannot read its log by position.
 */
export const logRoutes: RouteGroup = (app, deps) => {
  app.get('/sessions/:id/log', async (context) => {
    const sessionId = await deps.ownedSession(context);
    const log = deps.eventLog;
    if (log === undefined) {
      throw new HttpError({
        status: 501,
        code: 'NOT_SUPPORTED',
        message: "this server's storage cannot tail a log by position; use /sessions/:id/events",
      });
    }
    const after =
      parseCursor(context.req.header('last-event-id'), 'Last-Event-ID') ??
      parseCursor(context.req.query('after'), 'after') ??
      0;
    return streamLog({
      context,
      log,
      sessionId,
      after,
      keepAliveMs: deps.keepAliveMs,
      pollMs: deps.logPollMs,
    });
  });
};
