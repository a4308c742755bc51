/**
 * Steering a running turn (issue 16): messages the user adds while a turn runs. A steered message waits in the
 * turn's inbox and enters the context at the turn's next step boundary, before its next model call: never
 * between a tool call and its result, since a whole batch's results are in before the loop comes back.
 */

import type { Message } from '../kernel/types.js';
import type { TurnOptions } from './turn-options.js';

/** True when the turn has steered messages waiting: its loop calls the model again rather than end. */
export function hasSteering(options: TurnOptions): boolean {
  return options.steering?.hasPending === true && !options.signal.aborted;
}

/**
 * Puts the waiting steered messages into the context, each saved as a user message as it enters (write-ahead)
 * and announced by a `steered` event. A cancelled turn takes none: they stay for the session to start a
 * turn with once this one has ended.
 */
export async function deliverSteering(options: TurnOptions): Promise<void> {
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
