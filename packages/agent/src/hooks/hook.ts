import type { AgentError } from '../kernel/error.js';
import type { HookEvent } from '../ports/plugin.js';
import { HookChain, type HookDispatchResult, type HookEntry, type HookSite } from './hook-chain.js';

/** What `dispatch` takes. */
interface HookDispatchOptions {
  event: HookEvent;
  sessionId: string;
  turnId?: string;
  data: unknown;
  timeoutMs: number;
}

/**
 * The hooks of an agent, keyed by event. Handlers run one after another in registration order (tapable's
 * vocabulary: `tap` returns the function that removes the handler). A hook never crashes its caller: a
 * handler that throws, answers something that is not a HookResult, or does not answer within the bound counts
 * as `continue` and is reported in the result's `errors`.
 */
export class HookRegistry {
  /**
   * Each list is replaced, never changed in place, so a running dispatch keeps iterating the list it started
   * with when a handler is tapped or untapped meanwhile, and dispatch needs no copy of its own.
   */
  readonly #handlers = new Map<HookEvent, readonly HookEntry[]>();

  /** Adds a handler at the end of the event's chain; the returned function removes it (a second call does nothing). */
  tap(event: HookEvent, entry: HookEntry): () => void {
    const own: HookEntry = {
      pluginId: entry.pluginId,
      pluginConfig: entry.pluginConfig,
      handler: entry.handler,
      onTimeout: entry.onTimeout ?? 'continue',
    };
    this.#handlers.set(event, [...(this.#handlers.get(event) ?? []), own]);
    return () => {
      const current = this.#handlers.get(event);
      if (current === undefined || !current.includes(own)) return;
      const rest = current.filter((candidate) => candidate !== own);
      if (rest.length === 0) this.#handlers.delete(event);
      else this.#handlers.set(event, rest);
    };
  }

  /** True when at least one handler is tapped for the event, so callers can skip building its data. */
  has(event: HookEvent): boolean {
    return this.#handlers.has(event);
  }

  /**
   * Runs the event's handlers in order, each bounded by `timeoutMs`; never rejects. A handler that throws,
   * rejects, answers garbage or does not answer in time is recorded in `errors` and counts as `continue`, but
   * a time-out of a handler tapped with `onTimeout: 'abort'` stops the chain with an abort reason.
   */
  dispatch(options: HookDispatchOptions): Promise<HookDispatchResult> {
    return this.run(options, options.data);
  }

  /**
   * `dispatch` for a site made once and used for many dispatches (a hook runner's): the failures also go to
   * the site's `reportError`, before the result is handed back.
   */
  run(site: HookSite, data: unknown): Promise<HookDispatchResult> {
    const entries = this.#handlers.get(site.event);
    if (entries === undefined) return Promise.resolve({ data, abortReason: undefined, errors: [] });
    return new HookChain(site, entries, data).run();
  }
}

/** Where a hook runner's dispatches happen, and where their handlers' failures go. */
export interface HookScope {
  sessionId: string;
  turnId?: string;
  /** Each handler's bound. */
  timeoutMs: number;
  /** Receives the PLUGIN_ERROR of each handler that failed. */
  reportError: (error: AgentError) => void;
}

/**
 * One event's hook as a function of its data, for a step that must not know the registry (the tool batch's
 * BeforeToolUse / AfterToolUse). It answers undefined at once when no handler listens, so that a caller without
 * hooks waits for nothing; otherwise the dispatch's result, its failures already reported.
 */
export function hookRunner(
  hooks: HookRegistry,
  event: HookEvent,
  scope: HookScope,
): (data: unknown) => Promise<HookDispatchResult> | undefined {
  const { sessionId, turnId, timeoutMs, reportError } = scope;
  // One site for all of the runner's dispatches.
  const site: HookSite =
    turnId === undefined
      ? { event, sessionId, timeoutMs, reportError }
      : { event, sessionId, turnId, timeoutMs, reportError };
  return (data) => (hooks.has(event) ? hooks.run(site, data) : undefined);
}
