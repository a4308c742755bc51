/**
 * Steering a running turn (issue 16): messages the user adds while a turn runs. A steered message waits in the
 * turn's inbox and enters the context at the turn's next step boundary, before its next model call: never
 * between a tool call and its result, since a whole batch's results are in before the loop comes back.
 */

import type { AgentEventPayload } from '../kernel/event.js';
import type { Message } from '../kernel/types.js';
import type { SteeringInbox } from './steering-inbox.js';

/** What steering reads of a turn: its inbox, its cancellation, its stream and where a message is committed. */
interface SteeredTurn {
  readonly steering?: SteeringInbox | undefined;
  readonly signal: AbortSignal;
  readonly emit: (payload: AgentEventPayload) => void;
  readonly session: {
    commit(message: Message): Promise<void>;
    countTurn(kind: 'input' | 'steered'): void;
  };
}

/** True when the turn has steered messages waiting: its loop calls the model again rather than end. */
export function hasSteering(options: SteeredTurn): boolean {
  return options.steering?.hasPending === true && !options.signal.aborted;
}

/**
 * Puts the waiting steered messages into the context, each saved as a user message as it enters (write-ahead)
 * and announced by a `steered` event. A cancelled turn takes none: they stay for the session to start a
 * turn with once this one has ended.
 */
export async function deliverSteering(options: SteeredTurn): Promise<void> {
  const { session, signal, emit, steering } = options;
  if (steering === undefined || !steering.hasPending || signal.aborted) return;
  for (const content of steering.take()) {
    const message: Message = { type: 'user', content };
    const saved = session.commit(message);
    session.countTurn('steered');
    await saved;
    emit({ type: 'steered', content });
  }
}
