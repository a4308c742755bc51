import type { SessionEvent, SessionStorage } from '@youyou/agent';

/** A committed event of a session's log with its position in the log (the same in every process). */
export interface LoggedSessionEvent extends SessionEvent {
  sequence: number;
}

/**
 * What a storage offers beyond the port so that any server process can tail any session (the PostgreSQL
 * storage has both): `readEventsAfter` reads committed events after a log position, oldest first;
 * `watchEvents`, optional, wakes a reader when another process saves an event (without it the reader polls).
 */
export interface SessionEventLog {
  readEventsAfter(sessionId: string, after: number, limit?: number): Promise<LoggedSessionEvent[]>;
  watchEvents?(sessionId: string, listener: () => void): Promise<() => void>;
}

/** The storage as a SessionEventLog, or undefined when it cannot read its log by position (SQLite today). */
export function eventLogOf(storage: SessionStorage | undefined): SessionEventLog | undefined {
  const candidate = storage as Partial<SessionEventLog> | undefined;
  if (candidate === undefined || typeof candidate.readEventsAfter !== 'function') return undefined;
  const log: SessionEventLog = {
    readEventsAfter: candidate.readEventsAfter.bind(storage),
  };
  if (typeof candidate.watchEvents === 'function') log.watchEvents = candidate.watchEvents.bind(storage);
  return log;
}
