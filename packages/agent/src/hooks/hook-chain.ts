import { type Deadline, deadlines } from '../kernel/deadlines.js';
import { AgentError, describeError } from '../kernel/error.js';
import { isThenable, isTimerBound } from '../kernel/settle.js';
import { jsonOrString } from '../kernel/value-kind.js';
import type { HookEvent, HookHandler, HookPayload, HookResult } from '../ports/plugin.js';

/** What one dispatch ends with: the final data, the abort reason if a handler stopped the chain, and the failures. */
export interface HookDispatchResult {
  data: unknown;
  /** Set when a handler answered `abort`; the handlers after it did not run. */
  abortReason: string | undefined;
  /** One PLUGIN_ERROR per handler that threw, answered garbage or timed out; each of them counted as `continue`. */
  errors: readonly AgentError[];
}

/** One tapped handler, with the plugin it belongs to. */
export interface HookEntry {
  pluginId: string;
  pluginConfig: unknown;
  handler: HookHandler;
  /** What a time-out counts as: `continue` (the default) or `abort`. */
  onTimeout?: 'continue' | 'abort';
}

/** Where a dispatch happens: the event, the ids its payloads carry, each handler's bound, where failures go. */
export interface HookSite {
  event: HookEvent;
  sessionId: string;
  turnId?: string;
  timeoutMs: number;
  /** When set, receives each PLUGIN_ERROR of the dispatch once it ended, before its result is handed back. */
  reportError?: (error: AgentError) => void;
}

/** The `errors` of a dispatch in which nothing failed: shared, so a clean dispatch makes no array. */
const NO_ERRORS: readonly AgentError[] = Object.freeze([]);

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

/** Promise.prototype.then as it was when the runtime loaded. */
const promiseThen = Promise.prototype.then;

/** The scheduler's callback for a handler that did not answer in time (a plain function: no closure per wait). */
function onHandlerTimeout(chain: HookChain): void {
  chain.timedOut();
}

/**
 * One dispatch's run through its handlers, in order. A handler that answers at once is applied at once; one that
 * answers with a promise is awaited with a deadline in the shared scheduler (kernel/deadlines.ts), whichever
 * comes first going on with the chain. Nothing is allocated for what does not happen: no `errors` array until a
 * handler fails, and no promise, closure or deadline for a handler that answers at once (the dispatch's own
 * promise is the only one it makes then).
 */
export class HookChain {
  readonly #site: HookSite;
  readonly #entries: readonly HookEntry[];
  readonly #result: HookDispatchResult;
  /**
   * The dispatch's time, read when the first handler's payload is made: every handler's payload carries the same
   * one (one clock read per dispatch, not two).
   */
  #time: number | undefined;
  #index = 0;
  /** Counts the answers waited for: an answer to an earlier wait (after its time-out) is late and ignored. */
  #wait = 0;
  #waitingFor: HookEntry | undefined;
  #deadline: Deadline | undefined;
  /** Made at the first failure: a dispatch in which nothing failed shares NO_ERRORS. */
  #errors: AgentError[] | undefined;
  #resolve: ((result: HookDispatchResult) => void) | undefined;
  #reject: ((error: unknown) => void) | undefined;

  constructor(site: HookSite, entries: readonly HookEntry[], data: unknown) {
    this.#site = site;
    this.#entries = entries;
    this.#result = { data, abortReason: undefined, errors: NO_ERRORS };
  }

  /** Runs the handlers; rejects only when the site's `reportError` throws, as a hook runner's did. */
  run(): Promise<HookDispatchResult> {
    if (!this.#advance()) {
      return new Promise((resolve, reject) => {
        this.#resolve = resolve;
        this.#reject = reject;
      });
    }
    try {
      return Promise.resolve(this.#finish());
    } catch (error) {
      // Only the site's own reporter can throw here; the dispatch still answers with a promise.
      return Promise.reject(error);
    }
  }

  /** Called by the scheduler: the handler waited for did not answer within the bound. */
  timedOut(): void {
    const entry = this.#waitingFor;
    if (entry === undefined) return;
    this.#endWait();
    const message = `did not answer within ${this.#site.timeoutMs}ms`;
    this.#fail(entry, message, undefined);
    if (entry.onTimeout === 'abort') {
      this.#result.abortReason = `plugin '${entry.pluginId}' ${message}`;
      this.#settle();
    } else if (this.#advance()) this.#settle();
  }

  /** Runs handlers from the next one on; true when the chain ended, false when it waits for an answer. */
  #advance(): boolean {
    const entries = this.#entries;
    while (this.#index < entries.length) {
      const entry = entries[this.#index++] as HookEntry;
      let value: unknown;
      let answer: Promise<unknown> | undefined;
      try {
        value = entry.handler(this.#payloadFor(entry));
        // A thenable is adopted as `await` would; inside the try, since a hostile one can throw right here.
        if (isThenable(value)) answer = Promise.resolve(value);
      } catch (error) {
        this.#fail(entry, describeError(error), error);
        continue;
      }
      if (answer === undefined) {
        if (this.#apply(entry, value)) return true;
      } else if (this.#waitFor(entry, answer)) return false;
    }
    return true;
  }

  /**
   * Waits for a handler's answer, bounded: only an answer still to come needs a deadline. False (the failure
   * recorded) when the answer cannot even be waited for.
   */
  #waitFor(entry: HookEntry, answer: Promise<unknown>): boolean {
    const wait = ++this.#wait;
    try {
      // The intrinsic `then`: a promise with a `then` of its own must not call back synchronously or twice.
      promiseThen.call(
        answer,
        (value: unknown) => {
          if (wait !== this.#wait) return;
          this.#endWait();
          if (this.#apply(entry, value) || this.#advance()) this.#settle();
        },
        (error: unknown) => {
          // A late rejection is swallowed here, so that it is never reported as unhandled.
          if (wait !== this.#wait) return;
          this.#endWait();
          this.#fail(entry, describeError(error), error);
          if (this.#advance()) this.#settle();
        },
      );
    } catch (error) {
      this.#fail(entry, describeError(error), error);
      return false;
    }
    this.#waitingFor = entry;
    const { timeoutMs } = this.#site;
    if (isTimerBound(timeoutMs)) this.#deadline = deadlines.schedule(timeoutMs, onHandlerTimeout, this);
    return true;
  }

  /** The wait is over (answered or timed out): its deadline goes, and a later answer to it is ignored. */
  #endWait(): void {
    deadlines.cancel(this.#deadline);
    this.#deadline = undefined;
    this.#waitingFor = undefined;
    this.#wait += 1;
  }

  /** Applies one handler's answer; true when it stopped the chain. An invalid answer is a failure, counted as `continue`. */
  #apply(entry: HookEntry, value: unknown): boolean {
    const answer = toHookResult(value);
    if (answer === 'invalid') {
      this.#fail(entry, `returned an invalid hook result: ${jsonOrString(value)}`, undefined);
      return false;
    }
    if (answer === undefined || answer.type === 'continue') return false;
    if (answer.type === 'continue_with') {
      this.#result.data = answer.data;
      return false;
    }
    this.#result.abortReason = answer.reason;
    return true;
  }

  /** Records a handler's failure as a PLUGIN_ERROR; the first one makes the dispatch's `errors` array. */
  #fail(entry: HookEntry, message: string, cause: unknown): void {
    const error = new AgentError({
      code: 'PLUGIN_ERROR',
      message: `plugin '${entry.pluginId}' failed in ${this.#site.event}: ${message}`,
      sourceComponent: 'plugin',
      ...(cause === undefined ? {} : { cause }),
    });
    if (this.#errors === undefined) {
      this.#errors = [];
      this.#result.errors = this.#errors;
    }
    this.#errors.push(error);
  }

  /** The payload one handler receives: its own object, with its plugin's config. */
  #payloadFor(entry: HookEntry): HookPayload {
    const { event, sessionId, turnId } = this.#site;
    const { pluginConfig } = entry;
    const data = this.#result.data;
    let timestamp: Date;
    if (this.#time === undefined) {
      timestamp = new Date();
      this.#time = timestamp.getTime();
    } else timestamp = new Date(this.#time);
    return turnId === undefined
      ? { event, sessionId, pluginConfig, data, timestamp }
      : { event, sessionId, turnId, pluginConfig, data, timestamp };
  }

  /** The chain ended after a wait: its result goes to whoever awaits the dispatch. */
  #settle(): void {
    try {
      this.#resolve?.(this.#finish());
    } catch (error) {
      this.#reject?.(error);
    }
  }

  /** The result, once the failures went to the site's reporter. */
  #finish(): HookDispatchResult {
    const { reportError } = this.#site;
    if (reportError !== undefined) for (const error of this.#result.errors) reportError(error);
    return this.#result;
  }
}
