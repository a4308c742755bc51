import { AgentError, describeError } from '../kernel/error.js';
import { settleWithin } from '../kernel/settle.js';
import type { PluginDescriptor } from '../kernel/types.js';
import { ObserverRegistry } from '../model/observation.js';
import type {
  HookEvent,
  HookHandler,
  HookTapOptions,
  ObserveOptions,
  Observer,
  Plugin,
  PluginContext,
} from '../ports/plugin.js';
import type { HookRegistry } from './hook.js';

/** One registered plugin with the config it was registered with. */
interface PluginRecord {
  plugin: Plugin;
  config: unknown;
  /** Removes every hook and observer the plugin registered. */
  untaps: (() => void)[];
}

function runSafely(run: () => unknown): Promise<unknown> {
  try {
    return Promise.resolve(run());
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Owns the plugins' life: initialises them in registration order at build and shuts them down in reverse
 * order. Initialisation failures reject (they are programmer mistakes caught at build); shutdown failures go to
 * `onBackgroundError` and never reject.
 */
export class PluginManager {
  /** The id, display name and description of every registered plugin, in registration order. */
  readonly descriptors: readonly PluginDescriptor[];
  readonly #records: readonly PluginRecord[];
  readonly #hooks: HookRegistry;
  /** Where `observe` registers; the runtime reads the same registry. */
  readonly observers: ObserverRegistry;
  readonly #timeoutMs: number;
  readonly #onBackgroundError: (error: AgentError) => void;
  /** Plugins whose `initialize` succeeded and that are not shut down yet, in registration order. */
  #initialized: PluginRecord[] = [];
  #initializing: Promise<void> | undefined;
  #shuttingDown: Promise<void> | undefined;

  constructor(options: {
    plugins: readonly { plugin: Plugin; config: unknown }[];
    hooks: HookRegistry;
    /** Defaults to a registry of the manager's own, reporting to `onBackgroundError`. */
    observers?: ObserverRegistry;
    timeoutMs: number;
    onBackgroundError: (error: AgentError) => void;
  }) {
    this.#records = options.plugins.map(({ plugin, config }) => ({ plugin, config, untaps: [] }));
    this.descriptors = Object.freeze(
      options.plugins.map(({ plugin }) => ({
        id: plugin.id,
        displayName: plugin.displayName,
        description: plugin.description,
      })),
    );
    this.#hooks = options.hooks;
    this.observers = options.observers ?? new ObserverRegistry(options.onBackgroundError);
    this.#timeoutMs = options.timeoutMs;
    this.#onBackgroundError = options.onBackgroundError;
  }

  /**
   * Initialises and applies every plugin in registration order, each `initialize` bounded by the timeout.
   * On the first failure, the plugins already initialised are shut down in reverse order, their hooks removed,
   * and the call rejects with PLUGIN_INIT_FAILED. A second call returns the first call's promise.
   */
  initializeAll(): Promise<void> {
    this.#initializing ??= this.#initializeInOrder();
    return this.#initializing;
  }

  /** Shuts down every initialised plugin in reverse order, each bounded by the timeout; never rejects, runs once. */
  shutdownAll(): Promise<void> {
    this.#shuttingDown ??= this.#shutDownInReverse();
    return this.#shuttingDown;
  }

  async #initializeInOrder(): Promise<void> {
    for (const record of this.#records) {
      const failure = await this.#initializeOne(record);
      if (failure === undefined) continue;
      await this.#shutDownInReverse();
      throw failure;
    }
  }

  /** Initialises and applies one plugin; returns the PLUGIN_INIT_FAILED to reject with, or undefined. */
  async #initializeOne(record: PluginRecord): Promise<AgentError | undefined> {
    const { plugin } = record;
    const failed = (message: string, cause: unknown): AgentError =>
      new AgentError({ code: 'PLUGIN_INIT_FAILED', message: `plugin '${plugin.id}' ${message}`, cause });
    const initialized = await settleWithin(
      runSafely(() => plugin.initialize(record.config)),
      this.#timeoutMs,
    );
    if (initialized.status === 'timeout') {
      // The plugin may still finish later; it is not counted as initialised, so it is not shut down.
      const message = `did not finish initialize within ${this.#timeoutMs}ms`;
      return failed(message, new Error(message));
    }
    if (initialized.status === 'rejected') {
      return failed(`failed to initialize: ${describeError(initialized.error)}`, initialized.error);
    }
    // Its initialize succeeded, so it is shut down with the others should apply fail.
    this.#initialized.push(record);
    const context: PluginContext = {
      pluginId: plugin.id,
      pluginConfig: record.config,
      tap: (event: HookEvent, handler: HookHandler, options?: HookTapOptions) => {
        const onTimeout = readOnTimeout(plugin.id, options);
        const untap = this.#hooks.tap(event, {
          pluginId: plugin.id,
          pluginConfig: record.config,
          handler,
          onTimeout,
        });
        record.untaps.push(untap);
        return untap;
      },
      observe: (observer: Observer, options?: ObserveOptions) => {
        const remove = this.observers.add({ pluginId: plugin.id, observer, enabled: options?.enabled });
        record.untaps.push(remove);
        return remove;
      },
    };
    // apply is synchronous by contract; a plugin written as async still gets its failure reported.
    const applied = await settleWithin(
      runSafely(() => plugin.apply(context)),
      this.#timeoutMs,
    );
    if (applied.status === 'timeout') {
      const message = `did not finish apply within ${this.#timeoutMs}ms`;
      return failed(message, new Error(message));
    }
    if (applied.status === 'rejected') {
      return failed(`failed in apply: ${describeError(applied.error)}`, applied.error);
    }
    return undefined;
  }

  async #shutDownInReverse(): Promise<void> {
    const records = this.#initialized.reverse();
    this.#initialized = [];
    for (const record of records) {
      // A plugin that is shut down must not be called again, so its hooks go first.
      for (const untap of record.untaps.splice(0)) untap();
      const { plugin } = record;
      const settled = await settleWithin(
        runSafely(() => plugin.shutdown()),
        this.#timeoutMs,
      );
      if (settled.status === 'fulfilled') continue;
      const error =
        settled.status === 'timeout'
          ? new AgentError({
              code: 'PLUGIN_ERROR',
              message: `plugin '${plugin.id}' did not shut down within ${this.#timeoutMs}ms`,
            })
          : new AgentError({
              code: 'PLUGIN_ERROR',
              message: `plugin '${plugin.id}' failed to shut down: ${describeError(settled.error)}`,
              cause: settled.error,
            });
      this.#report(error);
    }
  }

  /** Hands an error to the host; a throwing handler must not turn shutdown into a rejection. */
  #report(error: AgentError): void {
    try {
      this.#onBackgroundError(error);
    } catch {
      // The host's handler failed; there is nowhere left to report to.
    }
  }
}

/** A tap's `onTimeout`, checked: a plugin that asks for something else fails its build rather than fail open. */
function readOnTimeout(pluginId: string, options: unknown): 'continue' | 'abort' {
  if (options === undefined) return 'continue';
  const value =
    typeof options === 'object' && options !== null ? (options as HookTapOptions).onTimeout : null;
  if (value === undefined || value === 'continue' || value === 'abort') return value ?? 'continue';
  throw new AgentError({
    code: 'INVALID_CONFIG',
    message: `plugin '${pluginId}': tap options must be { onTimeout?: 'continue' | 'abort' }`,
  });
}
