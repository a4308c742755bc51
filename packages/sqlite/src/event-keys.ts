import { AgentError } from '@youyou/agent';

/**
 * An event's id is `sessionKey * 2^24 + sequence`: the row key of its session, then its 1-based position
 * in the session's log. The events of a session are then one contiguous range of the table's B-tree, in
 * save order. Both parts are bounded so that every id stays a safe JavaScript integer (below 2^53).
 */
const SEQUENCE_BITS = 24;
const SEQUENCE_SPAN = 2 ** SEQUENCE_BITS;

/** The most events one session can hold. */
export const MAX_EVENTS_PER_SESSION = SEQUENCE_SPAN - 1;
/** The largest session row key (SQLite gives them in increasing order from 1). */
export const MAX_SESSION_KEY = 2 ** (53 - SEQUENCE_BITS) - 1;

/** `(id >> SEQUENCE_BITS)` is the session key of an event id, `(key << SEQUENCE_BITS)` its first id - 1. */
export const SQL_SEQUENCE_BITS = String(SEQUENCE_BITS);

/** The id of the `sequence`-th event of a session; STORAGE_ERROR beyond the limits. */
export function eventId(options: { sessionKey: number; sequence: number; sessionId: string }): number {
  const { sessionKey, sequence, sessionId } = options;
  if (sessionKey > MAX_SESSION_KEY) {
    throw new AgentError({
      code: 'STORAGE_ERROR',
      message: `the database holds too many sessions (row key ${sessionKey} is above ${MAX_SESSION_KEY}): start a new database file`,
    });
  }
  if (sequence > MAX_EVENTS_PER_SESSION) {
    throw new AgentError({
      code: 'STORAGE_ERROR',
      message: `session '${sessionId}' holds the most events a session can (${MAX_EVENTS_PER_SESSION}): start a new session`,
    });
  }
  return sessionKey * SEQUENCE_SPAN + sequence;
}

/** The first and last possible event ids of a session. */
export function eventRange(sessionKey: number): { first: number; last: number } {
  return { first: sessionKey * SEQUENCE_SPAN + 1, last: sessionKey * SEQUENCE_SPAN + MAX_EVENTS_PER_SESSION };
}
