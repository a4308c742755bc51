import { AgentError, describeError } from '../kernel/error.js';
import { isThenable, settleWithin } from '../kernel/settle.js';
import { jsonOrString } from '../kernel/value-kind.js';
import type { HookEvent, HookHandler, HookPayload, HookResult } from '../ports/plugin.js';

/** What one dispatch ends with: the final data, the abort reason if a handler stopped the chain, and the failures. */
interface HookDispatchResult {
  data: unknown;
  /** Set when a handler answered `abort`; the handlers after it did not run. */
  abortReason: string | undefined;
  /** One PLUGIN_ERROR per handler that threw, answered garbage or timed out; each of them counted as `continue`. */
  errors: readonly AgentError[];
}

/** Records a handler's failure in the dispatch's result; it counts as `continue` (undefined). */
function recordFailure(
  result: DispatchState,
  failure: { entry: HookEntry; event: HookEvent; message: string; cause?: unknown },
): undefined {
  const { entry, event, message, cause } = failure;
  result.errors.push(
    new AgentError({
      code: 'PLUGIN_ERROR',
      message: `plugin '${entry.pluginId}' failed in ${event}: ${message}`,
      sourceComponent: 'plugin',
      ...(cause === undefined ? {} : { cause }),
    }),
  );
  return undefined;
}

/** A dispatch's result while its handlers run. */
interface DispatchState extends HookDispatchResult {
  errors: AgentError[];
}

/** One tapped handler, with the plugin it belongs to. */
interface HookEntry {
  pluginId: string;
  pluginConfig: unknown;
  handler: HookHandler;
  /** What a time-out counts as: `continue` (the default) or `abort`. */
  onTimeout?: 'continue' | 'abort';
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

/** What `dispatch` takes. */
interface HookDispatchOptions {
  event: HookEvent;
  sessionId: string;
  turnId?: string;
  data: unknown;
  timeoutMs: number;
}

/** The payload one handler receives; `time` is the dispatch's, the same for every handler. */
function payloadFor(
  options: HookDispatchOptions,
  entry: HookEntry,
  data: unknown,
  time: number,
): HookPayload {
  const { event, sessionId, turnId } = options;
  const timestamp = new Date(time);
  return turnId === undefined
    ? { event, sessionId, pluginConfig: entry.pluginConfig, data, timestamp }
    : { event, sessionId, turnId, pluginConfig: entry.pluginConfig, data, timestamp };
}

/** Applies one handler's answer to the dispatch's result; true when it stopped the chain. */
function applyAnswer(result: DispatchState, answer: HookResult | undefined): boolean {
  if (answer === undefined || answer.type === 'continue') return false;
  if (answer.type === 'continue_with') {
    result.data = answer.data;
    return false;
  }
  result.abortReason = answer.reason;
  return true;
}

/** The handler's answer as a HookResult, or undefined after recording that it is not one. */
function checkedAnswer(
  value: unknown,
  result: DispatchState,
  entry: HookEntry,
  event: HookEvent,
): HookResult | undefined {
  const answer = toHookResult(value);
  if (answer !== 'invalid') return answer;
  return recordFailure(result, {
    entry,
    event,
    message: `returned an invalid hook result: ${jsonOrString(value)}`,
  });
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
  async dispatch(options: HookDispatchOptions): Promise<HookDispatchResult> {
    const { event, timeoutMs } = options;
    const result: DispatchState = { data: options.data, abortReason: undefined, errors: [] };
    const entries = this.#handlers.get(event);
    if (entries === undefined) return result;
    const time = Date.now();
    for (const entry of entries) {
      let value: unknown;
      try {
        value = entry.handler(payloadFor(options, entry, result.data, time));
        // Only an answer still to come needs the bound (and its timer).
        if (isThenable(value)) {
          const settled = await settleWithin(value, timeoutMs);
          if (settled.status === 'timeout') {
            const message = `did not answer within ${timeoutMs}ms`;
            recordFailure(result, { entry, event, message });
            if (entry.onTimeout === 'abort') {
              result.abortReason = `plugin '${entry.pluginId}' ${message}`;
              break;
            }
            continue;
          }
          if (settled.status === 'rejected') throw settled.error;
          value = settled.value;
        }
      } catch (error) {
        recordFailure(result, { entry, event, message: describeError(error), cause: error });
        continue;
      }
      if (applyAnswer(result, checkedAnswer(value, result, entry, event))) break;
    }
    return result;
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
  return (data) => {
    if (!hooks.has(event)) return undefined;
    const dispatched = hooks.dispatch({
      event,
      sessionId,
      ...(turnId === undefined ? {} : { turnId }),
      data,
      timeoutMs,
    });
    return dispatched.then((result) => {
      for (const error of result.errors) reportError(error);
      return result;
    });
  };
}
