/**
 * The event side of a turn the controller starts: the emitter every part of the turn reports through, and the
 * `turn_start` the observers see. Plain values in, on the turn path: no object is made for the call.
 */
import type { AgentEventPayload } from '../kernel/event.js';
import type { ContentBlock } from '../kernel/types.js';
import type { Observers } from '../model/observation.js';
import type { EventChannel } from '../turn/running-turn.js';
import type { SessionState } from '../turn/session-state.js';

/** The emitter of one turn: numbers each payload as the session's next event, queues it, shows it to observers. */
export function turnEmitter(
  state: SessionState,
  turnId: string,
  channel: EventChannel,
  observers: Observers | undefined,
): (payload: AgentEventPayload) => void {
  let ended = false;
  return (payload: AgentEventPayload): void => {
    // Nothing comes after the terminal event, not even a follow_up_queued given in the last moment.
    if (ended) return;
    if (payload.type === 'turn_complete' || payload.type === 'turn_cancelled') ended = true;
    const event = state.nextEvent(turnId, payload);
    channel.push(event);
    observers?.notify({ type: 'agent_event', event });
  };
}

/** Tells the observers a turn starts, with the model it talks to and its input. */
export function notifyTurnStart(
  observers: Observers,
  state: SessionState,
  turnId: string,
  content: ContentBlock[],
): void {
  const { provider, info } = state.model;
  observers.notify({
    type: 'turn_start',
    sessionId: state.id,
    turnId,
    providerId: provider.id,
    modelId: info.id,
    input: content,
  });
}
