/** Helpers every test file of the core shares: deferred promises, reading a turn, checking a rejection. */
import { expect } from 'vitest';
import { type AgentEvent, isAgentError, type RunningTurn } from '../../src/index.js';

/** A promise with its resolve and reject functions, for a test to settle when it chooses. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

/** Makes a Deferred. */
export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((onResolve, onReject) => {
    resolve = onResolve;
    reject = onReject;
  });
  return { promise, resolve, reject };
}

/** Reads a turn's events to its end. */
export async function collect(turn: RunningTurn): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of turn) events.push(event);
  return events;
}

/** Reads a turn's events up to the first one of `type`. */
export async function readUntil(turn: RunningTurn, type: AgentEvent['payload']['type']): Promise<void> {
  for await (const event of turn) if (event.payload.type === type) return;
  throw new Error(`the turn ended without a ${type} event`);
}

/** Expects `promise` to reject with an AgentError of `code`. */
export async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(isAgentError(error), `expected a rejection with ${code}`).toBe(true);
  expect(error).toMatchObject({ code });
}
