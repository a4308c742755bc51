/**
 * The follow-up queue of a session: messages that start the next turn once the running one ended, the steered
 * messages a turn did not take put at its head, and the refusal of them all once the session closes.
 */
import { AgentError } from '../kernel/error.js';
import type { ContentBlock } from '../kernel/types.js';
import type { RunningTurn } from '../turn/running-turn.js';
import type { SteeringInbox } from '../turn/steering-inbox.js';

/** A message given to `followUp`, waiting for the running turn to end. */
export interface FollowUp {
  content: ContentBlock[];
  /** Steered messages that go in right after `content`, each as its own user message. */
  steered?: ContentBlock[][];
  /** Receives the turn the message starts; undefined for steered messages the turn did not take. */
  started?: { resolve: (turn: RunningTurn) => void; reject: (error: unknown) => void };
}

/**
 * Puts the steered messages a turn did not take (it ended or was cancelled first) at the head of the queue: the
 * first is the next turn's input, the others enter it as steered messages, before its model call.
 */
export function requeueUntakenSteering(followUps: FollowUp[], inbox: SteeringInbox): void {
  const [first, ...others] = inbox.take();
  if (first !== undefined) followUps.unshift({ content: first, steered: others });
}

/** Rejects `next` and every queued follow-up with SESSION_CLOSED, emptying the queue. */
export function refuseFollowUps(followUps: FollowUp[], next: FollowUp, sessionId: string): void {
  const refused = new AgentError({
    code: 'SESSION_CLOSED',
    message: `session '${sessionId}' closed before the follow-up message could start a turn`,
  });
  for (const followUp of [next, ...followUps.splice(0)]) followUp.started?.reject(refused);
}
