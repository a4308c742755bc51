import { AgentError, describeError } from './error.js';
import type { HookEvent, HookHandler, HookPayload, HookResult } from './ports/plugin.js';
import { settleWithin } from './settle.js';

/** What one dispatch ends with: the final data, the abort reason if a handler stopped the chain, and the failures. */
export interface HookDispatchResult {
  data: unknown;
  /** Set when a handler answered `abort`; the handlers after it did not run. */
  abortReason: string | undefined;
  /** One PLUGIN_ERROR per handler that threw, answered garbage or timed out; each of them counted as `continue`. */
  errors: AgentError[];
}

/** One tapped handler, with the plugin it belongs to. */
export interface HookEntry {
  pluginId: string;
  pluginConfig: unknown;
  handler: HookHandler;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/** Narrows a handler's answer; `undefined` means `continue`, anything malformed is rejected by the caller. */
function toHookResult(value: unknown): HookResult | undefined | 'invalid' {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null) return 'invalid';
  const result = value as { type?: unknown; data?: unknown; reason?: unknown };
  switch (result.type) {
    case 'continue':
      return { type: 'continue' };
    case 'continue_with':
      return 'data' in result ? { type: 'continue_with', data: result.data } : 'invalid';
    case 'abort':
      return typeof result.reason === 'string' ? { type: 'abort', reason: result.reason } : 'invalid';
    default:
      return 'invalid';
  }
}

function describeValue(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
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

  /** Runs the event's handlers in order, each bounded by `timeoutMs`; never rejects. */
  async dispatch(options: {
    event: HookEvent;
    sessionId: string;
    turnId?: string;
    data: unknown;
    timeoutMs: number;
  }): Promise<HookDispatchResult> {
    const entries = this.#handlers.get(options.event);
    const result: HookDispatchResult = { data: options.data, abortReason: undefined, errors: [] };
    if (entries === undefined) return result;
    const time = Date.now();
    for (const entry of entries) {
      const payload: HookPayload = {
        event: options.event,
        sessionId: options.sessionId,
        ...(options.turnId === undefined ? {} : { turnId: options.turnId }),
        pluginConfig: entry.pluginConfig,
        data: result.data,
        timestamp: new Date(time),
      };
      const answer = await this.#runOne({
        entry,
        payload,
        timeoutMs: options.timeoutMs,
        errors: result.errors,
      });
      if (answer === undefined || answer.type === 'continue') continue;
      if (answer.type === 'continue_with') {
        result.data = answer.data;
        continue;
      }
      result.abortReason = answer.reason;
      break;
    }
    return result;
  }

  /** Runs one handler; returns its answer, or undefined (= continue) after recording why it failed. */
  async #runOne(options: {
    entry: HookEntry;
    payload: HookPayload;
    timeoutMs: number;
    errors: AgentError[];
  }): Promise<HookResult | undefined> {
    const { entry, payload } = options;
    const prefix = `plugin '${entry.pluginId}' failed in ${payload.event}`;
    const fail = (message: string, cause?: unknown): undefined => {
      options.errors.push(
        new AgentError({
          code: 'PLUGIN_ERROR',
          message: `${prefix}: ${message}`,
          sourceComponent: 'plugin',
          ...(cause === undefined ? {} : { cause }),
        }),
      );
      return undefined;
    };
    let value: unknown;
    try {
      value = entry.handler(payload);
    } catch (error) {
      return fail(describeError(error), error);
    }
    // A handler that answers synchronously needs no timer.
    if (isThenable(value)) {
      const settled = await settleWithin(value, options.timeoutMs);
      if (settled.status === 'timeout') return fail(`did not answer within ${options.timeoutMs}ms`);
      if (settled.status === 'rejected') return fail(describeError(settled.error), settled.error);
      value = settled.value;
    }
    const answer = toHookResult(value);
    if (answer === 'invalid') return fail(`returned an invalid hook result: ${describeValue(value)}`);
    return answer;
  }
}
