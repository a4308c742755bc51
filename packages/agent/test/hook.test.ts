import { describe, expect, it } from 'vitest';
import { HookRegistry } from '../src/hooks/hook.js';
import { deadlines } from '../src/kernel/deadlines.js';
import { isAgentError } from '../src/kernel/error.js';
import { settleWithin } from '../src/kernel/settle.js';
import type { HookHandler, HookPayload, HookResult } from '../src/ports/plugin.js';

const TIMEOUT_MS = 30;

function tap(registry: HookRegistry, pluginId: string, handler: HookHandler, pluginConfig: unknown = {}) {
  return registry.tap('BeforeToolUse', { pluginId, pluginConfig, handler });
}

function dispatch(registry: HookRegistry, data: unknown = { n: 0 }) {
  return registry.dispatch({
    event: 'BeforeToolUse',
    sessionId: 'session-1',
    turnId: 'turn-1',
    data,
    timeoutMs: TIMEOUT_MS,
  });
}

describe('HookRegistry.dispatch', () => {
  it('returns the data unchanged when no handler is tapped', async () => {
    const registry = new HookRegistry();
    const data = { n: 1 };
    expect(registry.has('BeforeToolUse')).toBe(false);
    const result = await dispatch(registry, data);
    expect(result).toEqual({ data, abortReason: undefined, errors: [] });
    expect(result.data).toBe(data);
  });

  it('runs handlers in registration order and chains continue_with data', async () => {
    const registry = new HookRegistry();
    const seen: string[] = [];
    tap(registry, 'a', (payload) => {
      seen.push(`a:${JSON.stringify(payload.data)}`);
      return { type: 'continue_with', data: { n: 1 } };
    });
    tap(registry, 'b', async (payload) => {
      seen.push(`b:${JSON.stringify(payload.data)}`);
      return { type: 'continue' };
    });
    tap(registry, 'c', (payload) => {
      seen.push(`c:${JSON.stringify(payload.data)}`);
      return { type: 'continue_with', data: { n: (payload.data as { n: number }).n + 1 } };
    });
    const result = await dispatch(registry);
    expect(seen).toEqual(['a:{"n":0}', 'b:{"n":1}', 'c:{"n":1}']);
    expect(result).toEqual({ data: { n: 2 }, abortReason: undefined, errors: [] });
  });

  it('treats a handler that returns nothing as continue', async () => {
    const registry = new HookRegistry();
    tap(registry, 'a', () => undefined);
    tap(registry, 'b', async () => undefined);
    const result = await dispatch(registry, 'same');
    expect(result).toEqual({ data: 'same', abortReason: undefined, errors: [] });
  });

  it('stops the chain at abort and keeps the data reached so far', async () => {
    const registry = new HookRegistry();
    let laterRan = false;
    tap(registry, 'a', () => ({ type: 'continue_with', data: 'changed' }));
    tap(registry, 'b', async () => ({ type: 'abort', reason: 'not allowed' }));
    tap(registry, 'c', () => {
      laterRan = true;
    });
    const result = await dispatch(registry);
    expect(result).toEqual({ data: 'changed', abortReason: 'not allowed', errors: [] });
    expect(laterRan).toBe(false);
  });

  it('gives each handler a payload with its own plugin config', async () => {
    const registry = new HookRegistry();
    const payloads: HookPayload[] = [];
    tap(registry, 'a', (payload) => void payloads.push(payload), { for: 'a' });
    tap(registry, 'b', (payload) => void payloads.push(payload), { for: 'b' });
    await dispatch(registry, 'data');
    expect(payloads.map((payload) => payload.pluginConfig)).toEqual([{ for: 'a' }, { for: 'b' }]);
    const first = payloads[0]!;
    expect(first.event).toBe('BeforeToolUse');
    expect(first.sessionId).toBe('session-1');
    expect(first.turnId).toBe('turn-1');
    expect(first.data).toBe('data');
    expect(first.timestamp).toBeInstanceOf(Date);
  });

  it('leaves turnId out of the payload when there is no turn', async () => {
    const registry = new HookRegistry();
    const payloads: HookPayload[] = [];
    tap(registry, 'a', (payload) => void payloads.push(payload));
    await registry.dispatch({
      event: 'BeforeToolUse',
      sessionId: 'session-1',
      data: 'data',
      timeoutMs: TIMEOUT_MS,
    });
    expect(payloads).toHaveLength(1);
    expect('turnId' in payloads[0]!).toBe(false);
  });

  it('reports a throwing handler as PLUGIN_ERROR and goes on as continue', async () => {
    const registry = new HookRegistry();
    const boom = new Error('boom');
    tap(registry, 'audit', () => {
      throw boom;
    });
    tap(registry, 'async-audit', async () => {
      throw new Error('async boom');
    });
    tap(registry, 'after', () => ({ type: 'continue_with', data: 'after ran' }));
    const result = await dispatch(registry);
    expect(result.data).toBe('after ran');
    expect(result.abortReason).toBeUndefined();
    expect(result.errors).toHaveLength(2);
    const [first, second] = result.errors;
    expect(isAgentError(first)).toBe(true);
    expect(first?.code).toBe('PLUGIN_ERROR');
    expect(first?.sourceComponent).toBe('plugin');
    expect(first?.message).toBe("[PLUGIN_ERROR] plugin 'audit' failed in BeforeToolUse: boom");
    expect(first?.cause).toBe(boom);
    expect(second?.message).toContain("plugin 'async-audit' failed in BeforeToolUse: async boom");
  });

  it('reports a handler that does not answer in time and goes on as continue', async () => {
    const registry = new HookRegistry();
    tap(registry, 'slow', () => new Promise<undefined>(() => undefined));
    tap(registry, 'after', () => ({ type: 'continue_with', data: 'after ran' }));
    const result = await dispatch(registry);
    expect(result.data).toBe('after ran');
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]?.code).toBe('PLUGIN_ERROR');
    expect(result.errors[0]?.message).toContain("plugin 'slow'");
    expect(result.errors[0]?.message).toContain('BeforeToolUse');
    expect(result.errors[0]?.message).toContain(`did not answer within ${TIMEOUT_MS}ms`);
  });

  it('ignores what a timed-out handler answers later', async () => {
    const registry = new HookRegistry();
    let answer: (value: HookResult) => void = () => undefined;
    tap(
      registry,
      'slow',
      () =>
        new Promise<HookResult>((resolve) => {
          answer = resolve;
        }),
    );
    const result = await dispatch(registry, 'original');
    answer({ type: 'continue_with', data: 'too late' });
    await Promise.resolve();
    expect(result.data).toBe('original');
    expect(result.errors).toHaveLength(1);
  });

  it.each([
    ['null', null],
    ['a string', 'continue'],
    ['an unknown type', { type: 'stop' }],
    ['continue_with without data', { type: 'continue_with' }],
    ['abort without a reason', { type: 'abort' }],
  ])('reports a handler that answers %s and goes on as continue', async (_label, answer) => {
    const registry = new HookRegistry();
    tap(registry, 'odd', (() => answer) as unknown as HookHandler);
    const result = await dispatch(registry, 'original');
    expect(result.data).toBe('original');
    expect(result.abortReason).toBeUndefined();
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]?.message).toContain("plugin 'odd' failed in BeforeToolUse: returned an invalid");
  });

  it('only runs handlers of the dispatched event', async () => {
    const registry = new HookRegistry();
    let ran = false;
    registry.tap('AfterToolUse', {
      pluginId: 'a',
      pluginConfig: {},
      handler: () => {
        ran = true;
      },
    });
    expect(registry.has('AfterToolUse')).toBe(true);
    expect(registry.has('BeforeToolUse')).toBe(false);
    await dispatch(registry);
    expect(ran).toBe(false);
  });
});

describe('HookRegistry.tap', () => {
  it('returns an untap that removes only that handler, and is harmless when called twice', async () => {
    const registry = new HookRegistry();
    const ran: string[] = [];
    const untapA = tap(registry, 'a', () => void ran.push('a'));
    tap(registry, 'b', () => void ran.push('b'));
    untapA();
    untapA();
    await dispatch(registry);
    expect(ran).toEqual(['b']);
  });

  it('reports no handler once every handler is untapped', () => {
    const registry = new HookRegistry();
    const untap = tap(registry, 'a', () => undefined);
    expect(registry.has('BeforeToolUse')).toBe(true);
    untap();
    expect(registry.has('BeforeToolUse')).toBe(false);
  });

  it('keeps a running dispatch intact when a handler untaps itself or another', async () => {
    const registry = new HookRegistry();
    const ran: string[] = [];
    const untaps: (() => void)[] = [];
    untaps.push(
      tap(registry, 'a', () => {
        ran.push('a');
        for (const untap of untaps) untap();
      }),
    );
    untaps.push(tap(registry, 'b', () => void ran.push('b')));
    await dispatch(registry);
    expect(ran).toEqual(['a', 'b']);
    await dispatch(registry);
    expect(ran).toEqual(['a', 'b']);
    expect(registry.has('BeforeToolUse')).toBe(false);
  });

  it('taps the same handler twice as two entries', async () => {
    const registry = new HookRegistry();
    let count = 0;
    const handler: HookHandler = () => {
      count += 1;
    };
    const untapFirst = tap(registry, 'a', handler);
    tap(registry, 'a', handler);
    untapFirst();
    await dispatch(registry);
    expect(count).toBe(1);
  });
});

describe('timers', () => {
  it('cancels the bound as soon as a handler answers, and leaves no timer after the turn', async () => {
    const registry = new HookRegistry();
    tap(registry, 'a', async () => ({ type: 'continue' }));
    const result = await registry.dispatch({
      event: 'BeforeToolUse',
      sessionId: 's',
      data: 1,
      timeoutMs: 60_000,
    });
    expect(result.errors).toEqual([]);
    // The bound's deadline is cancelled; the shared timer, if still armed, goes at the end of the turn.
    expect(deadlines.pending).toBe(0);
    expect(deadlines.timerState).not.toBe('armed');
    await new Promise((resolve) => setImmediate(resolve));
    expect(deadlines.timerState).toBe('none');
  });
});

describe('settleWithin', () => {
  it('reports a value, a rejection and a time-out', async () => {
    await expect(settleWithin(Promise.resolve(1), TIMEOUT_MS)).resolves.toEqual({
      status: 'fulfilled',
      value: 1,
    });
    const error = new Error('no');
    await expect(settleWithin(Promise.reject(error), TIMEOUT_MS)).resolves.toEqual({
      status: 'rejected',
      error,
    });
    await expect(settleWithin(new Promise(() => undefined), TIMEOUT_MS)).resolves.toEqual({
      status: 'timeout',
    });
  });
});
