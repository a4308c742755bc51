import { describe, expect, it } from 'vitest';
import { HookRegistry, hookRunner } from '../src/hooks/hook.js';
import { deadlines } from '../src/kernel/deadlines.js';
import type { AgentError } from '../src/kernel/error.js';
import type { HookHandler, HookPayload } from '../src/ports/plugin.js';

const TIMEOUT_MS = 30;

function registryWith(...handlers: HookHandler[]): HookRegistry {
  const registry = new HookRegistry();
  handlers.forEach((handler, index) => {
    registry.tap('BeforeToolUse', { pluginId: `p${index}`, pluginConfig: { index }, handler });
  });
  return registry;
}

function dispatch(registry: HookRegistry, data: unknown) {
  return registry.dispatch({
    event: 'BeforeToolUse',
    sessionId: 's',
    turnId: 't',
    data,
    timeoutMs: TIMEOUT_MS,
  });
}

describe('a dispatch through handlers that answer at once and later', () => {
  it('chains data through synchronous and asynchronous handlers in order', async () => {
    const seen: unknown[] = [];
    const registry = registryWith(
      (payload) => {
        seen.push(payload.data);
        return { type: 'continue_with', data: 'sync' };
      },
      async (payload) => {
        seen.push(payload.data);
        return { type: 'continue_with', data: 'async' };
      },
      (payload) => {
        seen.push(payload.data);
        return undefined;
      },
    );
    const result = await dispatch(registry, 'start');
    expect(seen).toEqual(['start', 'sync', 'async']);
    expect(result).toEqual({ data: 'async', abortReason: undefined, errors: [] });
    expect(deadlines.pending).toBe(0);
  });

  it('gives each handler its own payload: one handler changing its payload does not change the next one', async () => {
    const payloads: HookPayload[] = [];
    const registry = registryWith(
      async (payload) => {
        payloads.push(payload);
        const writable = payload as { data: unknown; pluginConfig: unknown; sessionId: string };
        writable.data = 'overwritten';
        writable.pluginConfig = 'overwritten';
        writable.sessionId = 'overwritten';
        return undefined;
      },
      (payload) => void payloads.push(payload),
    );
    const result = await dispatch(registry, 'start');
    expect(payloads[0]).not.toBe(payloads[1]);
    expect(payloads[1]?.data).toBe('start');
    expect(payloads[1]?.pluginConfig).toEqual({ index: 1 });
    expect(payloads[1]?.sessionId).toBe('s');
    expect(payloads[0]?.timestamp).not.toBe(payloads[1]?.timestamp);
    expect(result.data).toBe('start');
  });

  it('records a thenable whose then cannot be read as a failure and goes on', async () => {
    const hostile = {
      // biome-ignore lint/suspicious/noThenProperty: a hostile thenable is what this test hands the chain
      get then(): never {
        throw new Error('no then for you');
      },
    };
    const registry = registryWith((() => hostile) as unknown as HookHandler, () => ({
      type: 'continue_with',
      data: 'after',
    }));
    const result = await dispatch(registry, 'start');
    expect(result.data).toBe('after');
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]?.message).toContain("plugin 'p0' failed in BeforeToolUse: no then for you");
  });

  it('waits for a promise with a then of its own as for any promise: its own then is never called', async () => {
    let ownThenCalls = 0;
    let laterRuns = 0;
    const odd = Promise.resolve({ type: 'continue_with', data: 'real answer' });
    Object.defineProperty(odd, 'then', {
      value: (resolve: (value: unknown) => void) => {
        ownThenCalls += 1;
        resolve({ type: 'continue_with', data: 'first' });
        resolve({ type: 'continue_with', data: 'second' });
      },
    });
    const registry = registryWith((() => odd) as unknown as HookHandler, () => {
      laterRuns += 1;
      return undefined;
    });
    const result = await dispatch(registry, 'start');
    await new Promise((resolve) => setImmediate(resolve));
    expect(result.data).toBe('real answer');
    expect(ownThenCalls).toBe(0);
    expect(laterRuns).toBe(1);
  });

  it('records a promise whose constructor cannot be read as a failure and goes on', async () => {
    const hostile = new Promise(() => undefined);
    Object.defineProperty(hostile, 'constructor', {
      get() {
        throw new Error('no constructor for you');
      },
    });
    const registry = registryWith((() => hostile) as unknown as HookHandler, () => ({
      type: 'continue_with',
      data: 'after',
    }));
    const result = await dispatch(registry, 'start');
    expect(result.data).toBe('after');
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]?.message).toContain('no constructor for you');
    expect(deadlines.pending).toBe(0);
  });

  it('swallows a late rejection of a timed-out handler: not recorded, not unhandled', async () => {
    let reject: (error: Error) => void = () => undefined;
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const registry = registryWith(
        () =>
          new Promise<undefined>((_resolve, rejectLater) => {
            reject = rejectLater;
          }),
      );
      const result = await dispatch(registry, 'start');
      expect(result.errors).toHaveLength(1);
      expect(result.errors[0]?.message).toContain(`did not answer within ${TIMEOUT_MS}ms`);
      reject(new Error('too late'));
      await new Promise((resolve) => setImmediate(resolve));
      expect(result.errors).toHaveLength(1);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it("a hook runner's failures reach reportError before its result is handed back", async () => {
    const reported: AgentError[] = [];
    const registry = registryWith(async () => {
      throw new Error('async boom');
    });
    const run = hookRunner(registry, 'BeforeToolUse', {
      sessionId: 's',
      timeoutMs: TIMEOUT_MS,
      reportError: (error) => reported.push(error),
    });
    const result = await run('data');
    expect(reported).toHaveLength(1);
    expect(result?.errors).toEqual(reported);
    expect(reported[0]?.code).toBe('PLUGIN_ERROR');
    expect(
      hookRunner(new HookRegistry(), 'BeforeToolUse', {
        sessionId: 's',
        timeoutMs: 1,
        reportError: () => undefined,
      })('x'),
    ).toBeUndefined();
  });

  it("stops the chain at an onTimeout: 'abort' handler's time-out", async () => {
    const registry = new HookRegistry();
    let laterRan = false;
    registry.tap('BeforeToolUse', {
      pluginId: 'guard',
      pluginConfig: undefined,
      handler: () => new Promise<undefined>(() => undefined),
      onTimeout: 'abort',
    });
    registry.tap('BeforeToolUse', {
      pluginId: 'later',
      pluginConfig: undefined,
      handler: () => {
        laterRan = true;
        return undefined;
      },
    });
    const result = await dispatch(registry, 'start');
    expect(result.abortReason).toBe(`plugin 'guard' did not answer within ${TIMEOUT_MS}ms`);
    expect(result.errors).toHaveLength(1);
    expect(laterRan).toBe(false);
    expect(deadlines.pending).toBe(0);
  });
});
