/**
 * The turn's cancel scope: one listener on the signal from the first watch until close; every watcher still
 * watching is called once when the signal fires, also when an earlier one threw; nothing stays on the signal.
 */
import { getEventListeners } from 'node:events';
import { expect, test } from 'vitest';
import { CancelScope, TurnAbortController } from '../src/kernel/cancel-scope.js';

test('many waits, one listener: watchers come and go without touching the signal, close removes it', () => {
  const controller = new AbortController();
  const scope = new CancelScope(controller.signal);
  expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  for (let wait = 0; wait < 50; wait++) {
    const onCancel = (): void => {};
    scope.watch(onCancel);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    scope.unwatch(onCancel);
  }
  scope.close();
  expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  const late: string[] = [];
  scope.watch(() => late.push('after close'));
  controller.abort();
  expect(late).toEqual([]);
  expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
});

test('the abort calls each watcher still watching once, in order, even past one that throws', async () => {
  const controller = new AbortController();
  const scope = new CancelScope(controller.signal);
  const called: string[] = [];
  const gone = (): void => {
    called.push('gone');
  };
  scope.watch(() => called.push('model call'));
  scope.watch(gone);
  scope.watch(() => {
    called.push('thrower');
    throw new Error('a watcher failed');
  });
  scope.watch(() => called.push('tool batch'));
  scope.unwatch(gone);
  const reported: unknown[] = [];
  const onUncaught = (error: unknown): void => {
    reported.push(error);
  };
  // An EventTarget reports a listener's throw as an uncaught exception, on the next tick.
  process.prependListener('uncaughtException', onUncaught);
  try {
    controller.abort();
    controller.abort();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.removeListener('uncaughtException', onUncaught);
  }
  expect(reported).toMatchObject([{ message: 'a watcher failed' }]);
  expect(called).toEqual(['model call', 'thrower', 'tool batch']);
  expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  // A signal that fired already is not watched.
  scope.watch(() => called.push('after the abort'));
  expect(called).toHaveLength(3);
});

test("a turn's own controller tells its scope with no listener; watchers run once, a throw is still reported", async () => {
  const controller = new TurnAbortController();
  const { scope, signal } = controller;
  const called: string[] = [];
  const heard: string[] = [];
  signal.addEventListener('abort', () => heard.push(`signal aborted: ${signal.aborted}`));
  scope.watch(() => called.push(`model call, signal aborted: ${signal.aborted}`));
  scope.watch(() => {
    called.push('thrower');
    throw new Error('a watcher failed');
  });
  scope.watch(() => called.push('tool batch'));
  // Only the test's own listener is on the signal.
  expect(getEventListeners(signal, 'abort')).toHaveLength(1);
  const reported: unknown[] = [];
  const onUncaught = (error: unknown): void => {
    reported.push(error);
  };
  process.prependListener('uncaughtException', onUncaught);
  try {
    controller.abort('stop');
    controller.abort('again');
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.removeListener('uncaughtException', onUncaught);
  }
  expect(signal.reason).toBe('stop');
  expect(heard).toEqual(['signal aborted: true']);
  expect(called).toEqual(['model call, signal aborted: true', 'thrower', 'tool batch']);
  expect(reported).toMatchObject([{ message: 'a watcher failed' }]);
  // Closed, or aborted already: nothing more is called.
  scope.watch(() => called.push('after the abort'));
  expect(called).toHaveLength(3);
  const closed = new TurnAbortController();
  closed.scope.watch(() => called.push('after close'));
  closed.scope.close();
  closed.abort();
  expect(called).toHaveLength(3);
  expect(closed.signal.aborted).toBe(true);
});

test('`cancelled` follows the signal: a told scope from its own flag, as the signal aborts and after close', () => {
  const controller = new TurnAbortController();
  const { scope, signal } = controller;
  const seen: string[] = [];
  // A listener of the signal (a provider's, a tool's) already sees the scope cancelled.
  signal.addEventListener('abort', () => seen.push(`listener: cancelled ${scope.cancelled}`));
  expect(scope.cancelled).toBe(false);
  scope.close();
  controller.abort();
  expect(signal.aborted).toBe(true);
  expect(scope.cancelled).toBe(true);
  expect(seen).toEqual(['listener: cancelled true']);

  const plain = new AbortController();
  const listening = new CancelScope(plain.signal);
  expect(listening.cancelled).toBe(false);
  plain.abort();
  expect(listening.cancelled).toBe(true);
});
