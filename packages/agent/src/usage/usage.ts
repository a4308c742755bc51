/**
 * Token usage and cost: every model call whose provider reports usage becomes one `usage` event (when it
 * runs inside a turn), one `metadata` event `usage` in the session log, and a share of the turn's and the
 * session's totals. A resumed session sums the logged calls again, so its totals survive the process.
 */

import type { AgentEventPayload } from '../kernel/event.js';
import type { TokenUsage, UsageTotals } from '../kernel/types.js';
import { MetadataKey } from '../log/metadata-keys.js';
import type { SessionLog } from '../log/session-log.js';
import type { UsageReport, UsageSink } from '../model/usage-sink.js';
import type { ModelPricing } from '../ports/model.js';
import type { SessionEvent, SessionEventPayload } from '../ports/storage.js';

const PER_MILLION = 1_000_000;

/**
 * What one call cost in USD. Each prompt token is priced once: a cached read at `cacheReadPerMillion`, a
 * cache write at `cacheWritePerMillion` (each defaults to the input price), the rest of the prompt at
 * `inputPerMillion`; every output token (reasoning included) at `outputPerMillion`.
 */
export function usageCost(usage: TokenUsage, pricing: ModelPricing): number {
  const cachedRead = usage.cachedInputTokens ?? 0;
  const cacheWrite = usage.cacheWriteTokens ?? 0;
  // The port guarantees both are parts of the prompt; the clamp keeps a cost from going negative regardless.
  const uncached = Math.max(0, usage.inputTokens - cachedRead - cacheWrite);
  const dollars =
    uncached * pricing.inputPerMillion +
    cachedRead * (pricing.cacheReadPerMillion ?? pricing.inputPerMillion) +
    cacheWrite * (pricing.cacheWritePerMillion ?? pricing.inputPerMillion) +
    usage.outputTokens * pricing.outputPerMillion;
  return dollars / PER_MILLION;
}

/** Totals of no call at all. */
export function emptyUsageTotals(): UsageTotals {
  return {
    inputTokens: 0,
    outputTokens: 0,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    modelCalls: 0,
  };
}

/** Adds one call's usage (and cost, when known) to `totals`, in place. */
function addUsage(totals: UsageTotals, usage: TokenUsage, costUsd: number | undefined): void {
  totals.inputTokens += usage.inputTokens;
  totals.outputTokens += usage.outputTokens;
  totals.cachedInputTokens += usage.cachedInputTokens ?? 0;
  totals.cacheWriteTokens += usage.cacheWriteTokens ?? 0;
  totals.reasoningTokens += usage.reasoningTokens ?? 0;
  totals.modelCalls += 1;
  if (costUsd !== undefined) totals.costUsd = (totals.costUsd ?? 0) + costUsd;
}

/** Adds totals of several calls (sub-agents' ones) to `totals`, in place. */
export function addTotals(totals: UsageTotals, added: UsageTotals): void {
  totals.inputTokens += added.inputTokens;
  totals.outputTokens += added.outputTokens;
  totals.cachedInputTokens += added.cachedInputTokens;
  totals.cacheWriteTokens += added.cacheWriteTokens;
  totals.reasoningTokens += added.reasoningTokens;
  totals.modelCalls += added.modelCalls;
  if (added.costUsd !== undefined) totals.costUsd = (totals.costUsd ?? 0) + added.costUsd;
}

/** A copy a caller may keep or change. */
export function copyUsageTotals(totals: UsageTotals): UsageTotals {
  return { ...totals };
}

/**
 * The usage report with its price: `costUsd` is set only when the model's pricing is known. Its `usage` is the
 * call's own: a sink's caller hands over the object the provider-event check made for it (see UsageSink).
 */
function pricedReport(call: Omit<UsageReport, 'costUsd'>, pricing: ModelPricing | undefined): UsageReport {
  const { purpose, providerId, modelId, usage } = call;
  const report: UsageReport = { purpose, providerId, modelId, usage };
  if (pricing !== undefined) report.costUsd = usageCost(call.usage, pricing);
  return report;
}

/** The log event that records one call's usage; metadata, so replaying the log leaves the context as it was. */
function usageLogPayload(report: UsageReport): SessionEventPayload {
  return { type: 'metadata', key: MetadataKey.usage, value: report };
}

/** The `usage` event of one call. */
function usageEventPayload(report: UsageReport): AgentEventPayload {
  return { type: 'usage', ...report };
}

/**
 * The session's totals from its log: the sum of its `usage` metadata events (logs written before usage was
 * recorded have none and sum to zero). A record that cannot be read (hand-edited, another version) is skipped.
 */
export function usageTotalsOfLog(events: readonly SessionEvent[]): UsageTotals {
  const totals = emptyUsageTotals();
  for (let index = 0; index < events.length; index++) {
    addLoggedUsage(totals, (events[index] as SessionEvent).payload);
  }
  return totals;
}

/**
 * Adds one log payload's usage to `totals`: a `usage` record, or a sub-agent's totals; any other payload, or a
 * record that cannot be read, adds nothing. For a reader that walks the log anyway (a resume's replay).
 */
export function addLoggedUsage(totals: UsageTotals, payload: SessionEventPayload): void {
  if (payload.type !== 'metadata') return;
  if (payload.key === MetadataKey.subagentUsage) {
    const summed = readLoggedTotals(payload.value);
    if (summed !== undefined) addTotals(totals, summed);
    return;
  }
  if (payload.key !== MetadataKey.usage) return;
  const record = readLoggedUsage(payload.value);
  if (record !== undefined) addUsage(totals, record.usage, record.costUsd);
}

function readLoggedUsage(value: unknown): { usage: TokenUsage; costUsd: number | undefined } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  const logged = record.usage;
  if (typeof logged !== 'object' || logged === null) return undefined;
  const counts = logged as Record<string, unknown>;
  const inputTokens = countOf(counts.inputTokens);
  const outputTokens = countOf(counts.outputTokens);
  if (inputTokens === undefined || outputTokens === undefined) return undefined;
  const usage: TokenUsage = { inputTokens, outputTokens };
  const cached = countOf(counts.cachedInputTokens);
  if (cached !== undefined) usage.cachedInputTokens = cached;
  const written = countOf(counts.cacheWriteTokens);
  if (written !== undefined) usage.cacheWriteTokens = written;
  const reasoning = countOf(counts.reasoningTokens);
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  const cost = record.costUsd;
  const costUsd = typeof cost === 'number' && Number.isFinite(cost) && cost >= 0 ? cost : undefined;
  return { usage, costUsd };
}

function readLoggedTotals(value: unknown): UsageTotals | undefined {
  const record = readLoggedUsage({ usage: value, costUsd: (value as { costUsd?: unknown } | null)?.costUsd });
  const calls = countOf((value as { modelCalls?: unknown }).modelCalls);
  if (record === undefined || calls === undefined) return undefined;
  const totals = emptyUsageTotals();
  addUsage(totals, record.usage, record.costUsd);
  totals.modelCalls = calls;
  return totals;
}

function countOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

/** What a usage sink of a session writes to and tells. */
interface UsageSinkOptions {
  log: SessionLog;
  /** The pricing of a model id, when it is known. */
  priceOf: (modelId: string) => ModelPricing | undefined;
  /** The turn's event stream; absent for a call outside any turn (memory extraction at close). */
  emit?: (payload: AgentEventPayload) => void;
  /** The turn's totals, added to in place; absent outside a turn. */
  turnTotals?: UsageTotals;
}

/** A session's running usage totals, and the log writes of its usage records. */
export class SessionUsage {
  #totals: UsageTotals = emptyUsageTotals();
  /** The latest usage write: the log writes in order, so it settles after every earlier one. */
  #lastWrite: Promise<void> | undefined;
  /** The log holding usage records queued by `sink` and not flushed since. */
  #unflushed: SessionLog | undefined;

  /** The totals so far (a copy). */
  totals(): UsageTotals {
    return copyUsageTotals(this.#totals);
  }

  /** Starts from the totals of a resumed session's log. */
  restore(totals: UsageTotals): void {
    this.#totals = copyUsageTotals(totals);
  }

  /**
   * The sink of one turn or of one call outside a turn: each call's report gets its price, is added to the
   * session's (and the turn's) totals, written to the log and, inside a turn, emitted as a `usage` event.
   */
  sink(options: UsageSinkOptions): UsageSink {
    return (call) => {
      const report = pricedReport(call, options.priceOf(call.modelId));
      addUsage(this.#totals, report.usage, report.costUsd);
      if (options.turnTotals !== undefined) addUsage(options.turnTotals, report.usage, report.costUsd);
      options.emit?.(usageEventPayload(report));
      // Written with the next event the session saves (the answer of this call, in the same step), in one
      // transaction when the storage can: a model call then costs one write, not two. `written()` flushes it.
      options.log.appendWithNext(usageLogPayload(report));
      this.#unflushed = options.log;
    };
  }

  /** Adds what a turn's sub-agents used to the totals and records it in the log. */
  addSubagents(used: UsageTotals, log: SessionLog): void {
    addTotals(this.#totals, used);
    const write = log.append({ type: 'metadata', key: MetadataKey.subagentUsage, value: { ...used } });
    write.catch(ignore);
    this.#lastWrite = write;
  }

  /**
   * Waits for the usage records written so far; resolves with the storage's failure, if the last one failed.
   * Undefined when there is nothing to wait for: most often the records went with the answer saved after them.
   */
  written(): Promise<unknown> | undefined {
    const log = this.#unflushed;
    if (log !== undefined) {
      this.#unflushed = undefined;
      // An event leaves the log's queue only once the storage took it: an empty queue means they are saved.
      if (log.pendingCount === 0 && this.#lastWrite === undefined) return undefined;
      const write = log.flush();
      // A refused write stays queued in the log (written before its next event); this reports it.
      write.catch(ignore);
      this.#lastWrite = write;
    }
    const write = this.#lastWrite;
    if (write === undefined) return undefined;
    return this.#settled(write);
  }

  async #settled(write: Promise<void>): Promise<unknown> {
    try {
      await write;
      return undefined;
    } catch (error) {
      return error;
    } finally {
      if (this.#lastWrite === write) this.#lastWrite = undefined;
    }
  }
}

function ignore(): void {}

/** The price fields of ModelPricing; `required` ones must be present. */
const PRICE_FIELDS: readonly { name: keyof ModelPricing; required: boolean }[] = [
  { name: 'inputPerMillion', required: true },
  { name: 'outputPerMillion', required: true },
  { name: 'cacheReadPerMillion', required: false },
  { name: 'cacheWritePerMillion', required: false },
];

/**
 * What is wrong with a model's `pricing`, or undefined when it is absent or right: an object whose prices
 * are finite numbers ≥ 0, input and output required, no other fields.
 */
export function pricingProblem(pricing: unknown): string | undefined {
  if (pricing === undefined) return undefined;
  if (typeof pricing !== 'object' || pricing === null || Array.isArray(pricing)) {
    return 'pricing must be an object { inputPerMillion, outputPerMillion, cacheReadPerMillion?, cacheWritePerMillion? }';
  }
  const record = pricing as Record<string, unknown>;
  const known = new Set<string>(PRICE_FIELDS.map((field) => field.name));
  for (const key of Object.keys(record)) {
    if (!known.has(key)) {
      return `pricing has an unknown field '${key}'; the fields are ${[...known].join(', ')}`;
    }
  }
  for (const field of PRICE_FIELDS) {
    const price = record[field.name];
    if (price === undefined && !field.required) continue;
    if (typeof price !== 'number' || !Number.isFinite(price) || price < 0) {
      return `pricing.${field.name} must be a finite number of US dollars per million tokens, 0 or more`;
    }
  }
  return undefined;
}
