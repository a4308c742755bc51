/**
 * The log a fork starts with: the source's context as it stood when the chosen turn ended, written as plain
 * messages (a compaction's summary stays a system message, rewound and summarised turns stay out), with the turn
 * ids of the turns it holds, so the fork lists the same turns and a resume of it rebuilds the same context.
 */

import { INTERRUPTED_MESSAGE_NOTICE } from '../kernel/templates.js';
import type { Message, SessionConfig } from '../kernel/types.js';
import { MetadataKey } from '../log/metadata-keys.js';
import type { SessionEventPayload } from '../ports/storage.js';
import { logPayloadOf } from './context.js';
import { replaySessionEvents, turnIdOf } from './replay.js';
import type { TurnMark } from './turn-marks.js';

/** What a fork's log holds besides its link: the source's session config, and the context's messages. */
export interface ForkLog {
  sessionConfig: SessionConfig | undefined;
  /** The messages of the context, as log payloads, the turns they open marked. */
  messages: SessionEventPayload[];
}

/**
 * Where the source's log is cut for a fork at `atTurnId`: right before the next turn's first message or the next
 * rewind, whichever comes first after the turn's input (the end of the log when neither does). Undefined when the
 * log holds no input of that turn.
 */
function forkCutIndex(payloads: readonly SessionEventPayload[], atTurnId: string): number | undefined {
  let found = false;
  for (let index = 0; index < payloads.length; index += 1) {
    const payload = payloads[index];
    if (payload === undefined) continue;
    const turnId = turnIdOf(payload);
    if (!found) {
      found = payload.type === 'user_message' && turnId === atTurnId;
      continue;
    }
    if (turnId !== undefined && turnId !== atTurnId) return index;
    if (payload.type === 'metadata' && payload.key === MetadataKey.rewind) return index;
  }
  return found ? payloads.length : undefined;
}

/**
 * The log of a fork of the log `payloads` at `atTurnId` (the whole history when undefined); undefined when the log holds no
 * such turn. A turn unfinished at the cut is cut in the fork too: its calls without a result get the interrupted
 * result, as a resume would give them.
 */
export function forkLogOf(
  payloads: readonly SessionEventPayload[],
  atTurnId: string | undefined,
): ForkLog | undefined {
  const cut = atTurnId === undefined ? payloads.length : forkCutIndex(payloads, atTurnId);
  if (cut === undefined) return undefined;
  const replayed = replaySessionEvents(payloads.slice(0, cut));
  const opening = openingTurnIds(replayed.messages, replayed.turns.list);
  const messages: SessionEventPayload[] = [];
  replayed.messages.forEach((message, index) => {
    // The notice after a cut answer is not saved: the replay puts it back after the incomplete message.
    if (isInterruptedNotice(message, replayed.messages[index - 1])) return;
    messages.push(logPayloadOf(message, opening.get(index)));
  });
  return { sessionConfig: replayed.sessionConfig, messages };
}

/** For each message that opens a turn (from its first message through its input), the turn's id. */
function openingTurnIds(messages: readonly Message[], turns: readonly TurnMark[]): Map<number, string> {
  const opening = new Map<number, string>();
  for (const turn of turns) {
    for (let index = turn.start; index < messages.length; index += 1) {
      opening.set(index, turn.turnId);
      if (messages[index]?.type === 'user') break;
    }
  }
  return opening;
}

/** True for the notice the replay adds after an incomplete assistant message. */
function isInterruptedNotice(message: Message, previous: Message | undefined): boolean {
  return (
    message.type === 'system' &&
    message.content === INTERRUPTED_MESSAGE_NOTICE &&
    previous?.type === 'assistant' &&
    previous.status === 'incomplete'
  );
}
