/**
 * The observers of an agent (`PluginContext.observe`): they see every turn's start and end, every AgentEvent
 * and every model call, and can change nothing. Delivery is synchronous and guarded: an observer that throws
 * (or returns a promise that rejects) is reported to `onBackgroundError` as PLUGIN_ERROR and the turn goes on.
 * With no observer registered, each delivery point costs one property read. How a model call is observed is in
 * observed-provider.ts.
 */

import { AgentError, describeError } from '../kernel/error.js';
import { isThenable } from '../kernel/settle.js';
import type { Observation, Observer } from '../ports/plugin.js';

/** One registered observer, with the plugin it belongs to. */
interface ObserverEntry {
  pluginId: string;
  observer: Observer;
  enabled: (() => boolean) | undefined;
}

/** Where a model call happens: its session, and its turn when it is part of one. */
export interface ModelCallScope {
  sessionId: string;
  turnId?: string;
}

/** Hands a failure of a plugin's observer to the host; never throws. */
function reportFailure(options: {
  onBackgroundError: (error: AgentError) => void;
  pluginId: string;
  what: string;
  error: unknown;
}): void {
  const failure = new AgentError({
    code: 'PLUGIN_ERROR',
    message: `plugin '${options.pluginId}' failed ${options.what}: ${describeError(options.error)}`,
    sourceComponent: 'plugin',
    cause: options.error,
  });
  try {
    options.onBackgroundError(failure);
  } catch {
    // The host's handler failed too; the turn must go on regardless.
  }
}

/** Every observer registered on an agent (`PluginContext.observe`). */
export class ObserverRegistry {
  /** Replaced, never changed in place, so a set taken from it keeps the list it was taken with. */
  #entries: readonly ObserverEntry[] = [];
  readonly #onBackgroundError: (error: AgentError) => void;
  /** Shared by every set taken from this registry, so call ids are unique within the agent. */
  readonly #callIds = { last: 0 };

  constructor(onBackgroundError: (error: AgentError) => void) {
    this.#onBackgroundError = onBackgroundError;
  }

  /** True when at least one observer is registered. */
  get active(): boolean {
    return this.#entries.length > 0;
  }

  /** Adds an observer; the returned function removes it (a second call does nothing). */
  add(options: { pluginId: string; observer: Observer; enabled?: (() => boolean) | undefined }): () => void {
    const own: ObserverEntry = {
      pluginId: options.pluginId,
      observer: options.observer,
      enabled: options.enabled,
    };
    this.#entries = [...this.#entries, own];
    return () => {
      this.#entries = this.#entries.filter((entry) => entry !== own);
    };
  }

  /**
   * The observers that want what starts now (a turn, or a model call outside a turn), each asked through its
   * `enabled`; undefined when none does, so the caller does nothing more.
   */
  enabledNow(): Observers | undefined {
    const entries = this.#entries;
    if (entries.length === 0) return undefined;
    let wanted: ObserverEntry[] | undefined;
    for (const entry of entries) {
      if (entry.enabled !== undefined && !this.#asks(entry)) continue;
      wanted ??= [];
      wanted.push(entry);
    }
    return wanted === undefined ? undefined : new Observers(wanted, this.#onBackgroundError, this.#callIds);
  }

  #asks(entry: ObserverEntry): boolean {
    try {
      return entry.enabled?.() === true;
    } catch (error) {
      reportFailure({
        onBackgroundError: this.#onBackgroundError,
        pluginId: entry.pluginId,
        what: 'in enabled()',
        error,
      });
      return false;
    }
  }
}

/** The observers of one turn (or of one model call outside a turn). */
export class Observers {
  readonly #entries: readonly ObserverEntry[];
  readonly #onBackgroundError: (error: AgentError) => void;
  readonly #callIds: { last: number };

  constructor(
    entries: readonly ObserverEntry[],
    onBackgroundError: (error: AgentError) => void,
    callIds: { last: number },
  ) {
    this.#entries = entries;
    this.#onBackgroundError = onBackgroundError;
    this.#callIds = callIds;
  }

  /** Hands the observation to every observer in registration order; never throws. */
  notify(observation: Observation): void {
    for (const entry of this.#entries) {
      try {
        const returned: unknown = entry.observer(observation);
        if (isThenable(returned)) {
          returned.then(undefined, (error: unknown) => this.#report(entry, observation, error));
        }
      } catch (error) {
        this.#report(entry, observation, error);
      }
    }
  }

  /** The id of this agent's next observed model call (`model-call-1`, `model-call-2`, …). */
  nextCallId(): string {
    this.#callIds.last += 1;
    return `model-call-${this.#callIds.last}`;
  }

  #report(entry: ObserverEntry, observation: Observation, error: unknown): void {
    reportFailure({
      onBackgroundError: this.#onBackgroundError,
      pluginId: entry.pluginId,
      what: `observing ${observation.type}`,
      error,
    });
  }
}
