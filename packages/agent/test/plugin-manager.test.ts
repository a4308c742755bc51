import { describe, expect, it } from 'vitest';
import { HookRegistry } from '../src/hooks/hook.js';
import { PluginManager } from '../src/hooks/plugin-manager.js';
import type { AgentError } from '../src/kernel/error.js';
import { isAgentError } from '../src/kernel/error.js';
import type { HookPayload, Plugin, PluginContext } from '../src/ports/plugin.js';

const TIMEOUT_MS = 30;

/** A plugin that logs every call into a shared list, with each step replaceable. */
function fakePlugin(
  id: string,
  log: string[],
  overrides: {
    initialize?: (config: unknown) => Promise<void>;
    apply?: (ctx: PluginContext) => void;
    shutdown?: () => Promise<void>;
  } = {},
): Plugin {
  return {
    id,
    displayName: `Plugin ${id}`,
    description: `does ${id}`,
    async initialize(config) {
      log.push(`init ${id} ${JSON.stringify(config)}`);
      await overrides.initialize?.(config);
    },
    apply(ctx) {
      log.push(`apply ${id}`);
      overrides.apply?.(ctx);
    },
    async shutdown() {
      log.push(`shutdown ${id}`);
      await overrides.shutdown?.();
    },
  };
}

function createManager(plugins: Plugin[], configs: unknown[] = []) {
  const hooks = new HookRegistry();
  const backgroundErrors: AgentError[] = [];
  const manager = new PluginManager({
    plugins: plugins.map((plugin, index) => ({ plugin, config: configs[index] ?? { index } })),
    hooks,
    timeoutMs: TIMEOUT_MS,
    onBackgroundError: (error) => backgroundErrors.push(error),
  });
  return { manager, hooks, backgroundErrors };
}

function tapTurnStart(ctx: PluginContext): void {
  ctx.tap('TurnStart', (payload) => ({
    type: 'continue_with',
    data: [...(payload.data as string[]), `${ctx.pluginId}:${JSON.stringify(payload.pluginConfig)}`],
  }));
}

async function runTurnStart(hooks: HookRegistry) {
  return hooks.dispatch({ event: 'TurnStart', sessionId: 's', turnId: 't', data: [], timeoutMs: TIMEOUT_MS });
}

describe('PluginManager', () => {
  it('describes the plugins in registration order', () => {
    const { manager } = createManager([fakePlugin('a', []), fakePlugin('b', [])]);
    expect(manager.descriptors).toEqual([
      { id: 'a', displayName: 'Plugin a', description: 'does a' },
      { id: 'b', displayName: 'Plugin b', description: 'does b' },
    ]);
  });

  it('initializes then applies each plugin in registration order, with its own config', async () => {
    const log: string[] = [];
    const { manager } = createManager(
      [fakePlugin('a', log), fakePlugin('b', log)],
      [{ level: 1 }, { level: 2 }],
    );
    await manager.initializeAll();
    expect(log).toEqual(['init a {"level":1}', 'apply a', 'init b {"level":2}', 'apply b']);
  });

  it('gives apply a context whose tap registers hooks under the plugin id and config', async () => {
    const contexts: PluginContext[] = [];
    const apply = (ctx: PluginContext) => {
      contexts.push(ctx);
      tapTurnStart(ctx);
    };
    const { manager, hooks } = createManager(
      [fakePlugin('a', [], { apply }), fakePlugin('b', [], { apply })],
      [{ level: 1 }, { level: 2 }],
    );
    await manager.initializeAll();
    expect(contexts.map((ctx) => [ctx.pluginId, ctx.pluginConfig])).toEqual([
      ['a', { level: 1 }],
      ['b', { level: 2 }],
    ]);
    const result = await runTurnStart(hooks);
    expect(result.data).toEqual(['a:{"level":1}', 'b:{"level":2}']);
  });

  it('lets a plugin remove its own hook with the function tap returns', async () => {
    let untap: () => void = () => undefined;
    const { manager, hooks } = createManager([
      fakePlugin('a', [], {
        apply: (ctx) => {
          untap = ctx.tap('TurnEnd', () => undefined);
        },
      }),
    ]);
    await manager.initializeAll();
    expect(hooks.has('TurnEnd')).toBe(true);
    untap();
    expect(hooks.has('TurnEnd')).toBe(false);
  });

  it('on an initialize failure, shuts down the earlier plugins in reverse order and rejects PLUGIN_INIT_FAILED', async () => {
    const log: string[] = [];
    const cause = new Error('no database');
    const { manager, hooks } = createManager([
      fakePlugin('a', log, { apply: tapTurnStart }),
      fakePlugin('b', log, { apply: tapTurnStart }),
      fakePlugin('c', log, {
        initialize: async () => {
          throw cause;
        },
      }),
      fakePlugin('d', log),
    ]);
    const error = await manager.initializeAll().catch((thrown: unknown) => thrown);
    expect(isAgentError(error)).toBe(true);
    expect((error as AgentError).code).toBe('PLUGIN_INIT_FAILED');
    expect((error as AgentError).sourceComponent).toBe('plugin');
    expect((error as AgentError).message).toContain("plugin 'c'");
    expect((error as AgentError).message).toContain('no database');
    expect((error as AgentError).cause).toBe(cause);
    expect(log).toEqual([
      'init a {"index":0}',
      'apply a',
      'init b {"index":1}',
      'apply b',
      'init c {"index":2}',
      'shutdown b',
      'shutdown a',
    ]);
    expect(hooks.has('TurnStart')).toBe(false);
  });

  it('on an apply failure, shuts that plugin down too and removes the hooks it tapped before throwing', async () => {
    const log: string[] = [];
    const { manager, hooks } = createManager([
      fakePlugin('a', log),
      fakePlugin('b', log, {
        apply: (ctx) => {
          tapTurnStart(ctx);
          throw new Error('bad apply');
        },
      }),
    ]);
    await expect(manager.initializeAll()).rejects.toMatchObject({
      code: 'PLUGIN_INIT_FAILED',
      message: expect.stringMatching(/plugin 'b'.*bad apply/),
    });
    expect(log.slice(-2)).toEqual(['shutdown b', 'shutdown a']);
    expect(hooks.has('TurnStart')).toBe(false);
  });

  it('rejects PLUGIN_INIT_FAILED when initialize does not settle in time', async () => {
    const log: string[] = [];
    const { manager } = createManager([
      fakePlugin('a', log),
      fakePlugin('hung', log, { initialize: () => new Promise(() => undefined) }),
    ]);
    await expect(manager.initializeAll()).rejects.toMatchObject({
      code: 'PLUGIN_INIT_FAILED',
      message: expect.stringMatching(new RegExp(`plugin 'hung'.*${TIMEOUT_MS}ms`)),
    });
    expect(log.at(-1)).toBe('shutdown a');
    expect(log).not.toContain('shutdown hung');
  });

  it('reports shutdown errors during an init failure to onBackgroundError', async () => {
    const { manager, backgroundErrors } = createManager([
      fakePlugin('a', [], {
        shutdown: async () => {
          throw new Error('cannot close');
        },
      }),
      fakePlugin('b', [], {
        initialize: async () => {
          throw new Error('no');
        },
      }),
    ]);
    await expect(manager.initializeAll()).rejects.toMatchObject({ code: 'PLUGIN_INIT_FAILED' });
    expect(backgroundErrors).toHaveLength(1);
    expect(backgroundErrors[0]?.code).toBe('PLUGIN_ERROR');
    expect(backgroundErrors[0]?.message).toContain("plugin 'a'");
    expect(backgroundErrors[0]?.message).toContain('cannot close');
  });

  it('shuts down in reverse order, reports failures and hangs, and goes on past them', async () => {
    const log: string[] = [];
    const { manager, backgroundErrors } = createManager([
      fakePlugin('a', log),
      fakePlugin('b', log, {
        shutdown: async () => {
          throw new Error('b broke');
        },
      }),
      fakePlugin('c', log, { shutdown: () => new Promise(() => undefined) }),
    ]);
    await manager.initializeAll();
    log.length = 0;
    await expect(manager.shutdownAll()).resolves.toBeUndefined();
    expect(log).toEqual(['shutdown c', 'shutdown b', 'shutdown a']);
    expect(backgroundErrors.map((error) => error.code)).toEqual(['PLUGIN_ERROR', 'PLUGIN_ERROR']);
    expect(backgroundErrors[0]?.message).toContain("plugin 'c' did not shut down within");
    expect(backgroundErrors[1]?.message).toContain("plugin 'b' failed to shut down: b broke");
  });

  it('shuts down once, and removes the hooks of shut-down plugins', async () => {
    const log: string[] = [];
    const { manager, hooks } = createManager([fakePlugin('a', log, { apply: tapTurnStart })]);
    await manager.initializeAll();
    expect(hooks.has('TurnStart')).toBe(true);
    await manager.shutdownAll();
    await manager.shutdownAll();
    expect(log.filter((line) => line.startsWith('shutdown'))).toEqual(['shutdown a']);
    expect(hooks.has('TurnStart')).toBe(false);
  });

  it('never rejects shutdown even when onBackgroundError throws', async () => {
    const hooks = new HookRegistry();
    const manager = new PluginManager({
      plugins: [
        {
          plugin: fakePlugin('a', [], {
            shutdown: async () => {
              throw new Error('x');
            },
          }),
          config: {},
        },
      ],
      hooks,
      timeoutMs: TIMEOUT_MS,
      onBackgroundError: () => {
        throw new Error('handler broke');
      },
    });
    await manager.initializeAll();
    await expect(manager.shutdownAll()).resolves.toBeUndefined();
  });

  it('hands the hook handler the payload of the dispatch', async () => {
    const payloads: HookPayload[] = [];
    const { manager, hooks } = createManager(
      [
        fakePlugin('a', [], {
          apply: (ctx) => {
            ctx.tap('SessionStart', (payload) => void payloads.push(payload));
          },
        }),
      ],
      [{ secret: 1 }],
    );
    await manager.initializeAll();
    await hooks.dispatch({
      event: 'SessionStart',
      sessionId: 's',
      data: { modelId: 'm' },
      timeoutMs: TIMEOUT_MS,
    });
    expect(payloads).toHaveLength(1);
    expect(payloads[0]).toMatchObject({
      event: 'SessionStart',
      pluginConfig: { secret: 1 },
      data: { modelId: 'm' },
    });
  });
});
