/**
 * Rewinding a session: its context returns to the state before a turn, and a `rewind` marker in the log makes a
 * resume rebuild the same context (the log itself stays append-only). Only the turns still in the context can be
 * rewound to (`Session.turns()`): a turn a compaction summarised has no place of its own to return to. Usage is
 * not rewound: what the dropped turns cost was spent.
 */

import { randomUUID } from 'node:crypto';
import { turnEndedRecord } from '../approvals/interrupted-turn.js';
import { rewindRecord } from '../context/replay.js';
import { AgentError } from '../kernel/error.js';
import type { RewindOptions } from '../kernel/types.js';
import { describeKind, isPlainObject, shownId } from '../kernel/value-kind.js';
import type { SessionState } from '../turn/session-state.js';

/** The turn id of `rewind(options)`; INVALID_INPUT for anything but `{ toTurnId: non-empty string }`. */
export function checkRewindOptions(options: unknown): string {
  if (!isPlainObject(options)) {
    throw new AgentError({
      code: 'INVALID_INPUT',
      message: `rewind takes { toTurnId }, got ${describeKind(options)}`,
    });
  }
  for (const key of Object.keys(options)) {
    if (key !== 'toTurnId') {
      throw new AgentError({
        code: 'INVALID_INPUT',
        message: `rewind takes { toTurnId }; '${key}' is not one of its options`,
      });
    }
  }
  const { toTurnId } = options as Partial<RewindOptions>;
  if (typeof toTurnId !== 'string' || toTurnId === '') {
    throw new AgentError({
      code: 'INVALID_INPUT',
      message: `rewind's toTurnId must be a non-empty turn id (one of session.turns()), got ${describeKind(toTurnId)}`,
    });
  }
  return toTurnId;
}

/**
 * Cuts the session's context before the turn `toTurnId`, then saves the marker. The cut holds here even when the
 * save fails (STORAGE_ERROR): the marker stays queued and is written before the session's next event. A turn a
 * crash cut is given up, and the log says so, as a new message would.
 */
export async function rewindSession(state: SessionState, toTurnId: string): Promise<void> {
  if (!state.context.turns.list.some((turn) => turn.turnId === toTurnId)) {
    throw new AgentError({
      code: 'TURN_NOT_FOUND',
      message: `turn ${shownId(toTurnId)} is not in the context of session '${state.id}' (unknown, rewound away or summarised by a compaction): rewind to one of session.turns()`,
    });
  }
  const saved: Promise<void>[] = [];
  if (state.interrupted !== undefined) {
    state.interrupted = undefined;
    saved.push(state.log.append(turnEndedRecord(randomUUID(), 'abandoned')));
  }
  state.rewindTo(toTurnId);
  saved.push(state.log.append(rewindRecord(toTurnId)));
  await Promise.all(saved);
}
