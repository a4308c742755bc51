/**
 * Forking a session: a new session whose log starts with the source's context as it stood when a turn ended
 * (context/fork-log.ts), linked to its source both ways (`forked_from` in the fork, `fork` in the source). Only
 * the storage port is used, so it works on every storage.
 */

import type { ForkLog } from '../context/fork-log.js';
import { AgentError } from '../kernel/error.js';
import type { ForkOptions, SessionConfig } from '../kernel/types.js';
import { describeKind, isPlainObject, shownId } from '../kernel/value-kind.js';
import { forkLinkRecord } from '../log/fork-links.js';
import { MetadataKey } from '../log/metadata-keys.js';
import { storageError } from '../log/session-log.js';
import type { SessionEventPayload, SessionStorage } from '../ports/storage.js';

/** The turn id of `forkSession(id, options)` (undefined: the whole history); INVALID_INPUT for bad arguments. */
export function checkForkArguments(sessionId: unknown, options: unknown): string | undefined {
  if (typeof sessionId !== 'string' || sessionId === '') {
    throw new AgentError({ code: 'INVALID_INPUT', message: 'forkSession takes a non-empty session id' });
  }
  if (options === undefined) return undefined;
  if (!isPlainObject(options)) {
    throw new AgentError({
      code: 'INVALID_INPUT',
      message: `forkSession's options are { atTurnId? }, got ${describeKind(options)}`,
    });
  }
  for (const key of Object.keys(options)) {
    if (key !== 'atTurnId') {
      throw new AgentError({
        code: 'INVALID_INPUT',
        message: `forkSession takes { atTurnId? }; '${key}' is not one of its options`,
      });
    }
  }
  const { atTurnId } = options as Partial<ForkOptions>;
  if (atTurnId !== undefined && (typeof atTurnId !== 'string' || atTurnId === '')) {
    throw new AgentError({
      code: 'INVALID_INPUT',
      message: `forkSession's atTurnId must be a non-empty turn id, got ${describeKind(atTurnId)}`,
    });
  }
  return atTurnId;
}

/** TURN_NOT_FOUND for a fork at a turn the source's log does not hold. */
export function forkTurnNotFound(sessionId: string, atTurnId: string): AgentError {
  return new AgentError({
    code: 'TURN_NOT_FOUND',
    message: `session '${sessionId}' has no turn ${shownId(atTurnId)} to fork at: use a turn id from its events or session.turns()`,
  });
}

/**
 * Writes the fork's log under `forkId` (its config, the source's; the link to the source; the context's
 * messages), then the link in the source's log, through `appendToSource` when the source is open here. Rejects
 * with STORAGE_ERROR, having deleted the fork again as far as the storage lets it: a fork its source does not
 * link to is no fork.
 */
export async function writeFork(options: {
  storage: SessionStorage;
  forkId: string;
  sourceId: string;
  atTurnId: string | undefined;
  log: ForkLog;
  appendToSource: ((payload: SessionEventPayload) => Promise<void>) | undefined;
}): Promise<void> {
  const { storage, forkId, sourceId, atTurnId, log } = options;
  const config: SessionConfig = log.sessionConfig ?? {};
  const payloads: SessionEventPayload[] = [
    { type: 'metadata', key: MetadataKey.sessionConfig, value: config },
    forkLinkRecord(MetadataKey.forkedFrom, withTurn({ sessionId: sourceId }, atTurnId)),
    ...log.messages,
  ];
  const sourceLink = forkLinkRecord(MetadataKey.fork, withTurn({ sessionId: forkId }, atTurnId));
  try {
    for (const payload of payloads) await storage.saveEvent(forkId, { timestamp: new Date(), payload });
    if (options.appendToSource !== undefined) await options.appendToSource(sourceLink);
    else await storage.saveEvent(sourceId, { timestamp: new Date(), payload: sourceLink });
  } catch (error) {
    await storage.deleteSession(forkId).catch(() => {});
    throw storageError(error, `writing fork '${forkId}' of session '${sourceId}' failed`);
  }
}

function withTurn(link: { sessionId: string }, atTurnId: string | undefined) {
  return atTurnId === undefined ? link : { ...link, atTurnId };
}
