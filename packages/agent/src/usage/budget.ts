/**
 * Budgets that fail closed: before each model call, what the turn and the session have spent plus the call's
 * worst case (its prompt tokens, its output limit, priced at the dearest prompt price) is held against each
 * limit, and a call that could pass one is refused with BUDGET_EXCEEDED instead of being made. The worst case
 * is counted as spent while the call runs (so calls made at once, such as sub-agents', cannot overspend
 * together), then replaced by what the provider reports; an answer whose usage never came stays counted at
 * its worst case.
 */

import { AgentError } from '../kernel/error.js';
import type { Budget, TokenUsage, UsageTotals } from '../kernel/types.js';
import type { ModelPricing } from '../ports/model.js';
import { usageCost } from './usage.js';

/** One limit a gate holds: a turn's or a session's budget. */
export interface BudgetScope {
  label: 'turn' | 'session';
  limit: Budget;
  /** What was spent before the gate was made (a resumed session's logged totals); default nothing. */
  spentBefore?: UsageTotals;
}

/** A model call's worst case, as the gate weighs it. */
interface CallEstimate {
  modelId: string;
  promptTokens: number;
  outputTokens: number;
  /** The model's prices; undefined when unknown (a cost limit then refuses the call). */
  pricing: ModelPricing | undefined;
}

/** What a limit counts. */
interface Spent {
  tokens: number;
  costUsd: number;
  calls: number;
}

/** A call admitted by a gate: settled once, with what it really used. */
export interface AdmittedCall {
  /**
   * Replaces the call's worst case with `usage` (what the provider reported); `'worst'` keeps the worst case
   * (an answer without usage); `'not_made'` takes the call back (it failed before the model answered anything).
   */
  settle(used: TokenUsage | 'worst' | 'not_made'): void;
}

/** The dearest a prompt token can be: a cache write may cost more than plain input. */
function worstOf(estimate: CallEstimate): Spent {
  const { pricing } = estimate;
  const tokens = estimate.promptTokens + estimate.outputTokens;
  if (pricing === undefined) return { tokens, costUsd: 0, calls: 1 };
  const inputPrice = Math.max(pricing.inputPerMillion, pricing.cacheWritePerMillion ?? 0);
  const costUsd = usageCost(
    { inputTokens: estimate.promptTokens, outputTokens: estimate.outputTokens },
    { inputPerMillion: inputPrice, outputPerMillion: pricing.outputPerMillion },
  );
  return { tokens, costUsd, calls: 1 };
}

function usedOf(usage: TokenUsage, pricing: ModelPricing | undefined): Spent {
  const tokens = usage.inputTokens + usage.outputTokens;
  return { tokens, costUsd: pricing === undefined ? 0 : usageCost(usage, pricing), calls: 1 };
}

/**
 * The limits a model call must pass: a turn's and a session's, and those of the gate it is nested in (a
 * sub-agent's calls count against the budget of the turn that called it).
 */
export class BudgetGate {
  readonly #scopes: { label: 'turn' | 'session'; limit: Budget; spent: Spent }[];
  readonly #parent: BudgetGate | undefined;

  constructor(options: { scopes: readonly BudgetScope[]; parent?: BudgetGate | undefined }) {
    this.#scopes = options.scopes.map((scope) => {
      const before = scope.spentBefore;
      const spent: Spent =
        before === undefined
          ? { tokens: 0, costUsd: 0, calls: 0 }
          : {
              tokens: before.inputTokens + before.outputTokens,
              costUsd: before.costUsd ?? 0,
              calls: before.modelCalls,
            };
      return { label: scope.label, limit: scope.limit, spent };
    });
    this.#parent = options.parent;
  }

  /**
   * Admits a call whose worst case fits every limit (here and in the enclosing gates) and counts that worst case
   * as spent until the call is settled; answers BUDGET_EXCEEDED, counting nothing, when it does not fit.
   */
  admit(estimate: CallEstimate): AdmittedCall | AgentError {
    const refusal = this.refusal(estimate);
    if (refusal !== undefined) return refusal;
    const worst = worstOf(estimate);
    this.#add(worst, 1);
    let settled = false;
    return {
      settle: (used) => {
        if (settled) return;
        settled = true;
        this.#add(worst, -1);
        if (used === 'worst') this.#add(worst, 1);
        else if (used !== 'not_made') this.#add(usedOf(used, estimate.pricing), 1);
      },
    };
  }

  /** BUDGET_EXCEEDED when the call could pass a limit here or in an enclosing gate; undefined when it may be made. */
  refusal(estimate: CallEstimate): AgentError | undefined {
    for (const scope of this.#scopes) {
      const problem = scopeProblem(scope, estimate);
      if (problem !== undefined) {
        return new AgentError({
          code: 'BUDGET_EXCEEDED',
          message: `the model call to '${estimate.modelId}' was not made: ${problem} (the ${scope.label}'s budget)`,
        });
      }
    }
    return this.#parent?.refusal(estimate);
  }

  #add(spent: Spent, sign: 1 | -1): void {
    for (const scope of this.#scopes) {
      scope.spent.tokens += sign * spent.tokens;
      scope.spent.costUsd += sign * spent.costUsd;
      scope.spent.calls += sign * spent.calls;
    }
    if (this.#parent !== undefined) this.#parent.#add(spent, sign);
  }
}

/** What passing the limit would be, or undefined when the call stays within it. */
function scopeProblem(scope: { limit: Budget; spent: Spent }, estimate: CallEstimate): string | undefined {
  const { limit, spent } = scope;
  if (limit.maxModelCalls !== undefined && spent.calls + 1 > limit.maxModelCalls) {
    return `${spent.calls} of at most ${limit.maxModelCalls} model calls were made`;
  }
  const worst = worstOf(estimate);
  if (limit.maxTokens !== undefined && spent.tokens + worst.tokens > limit.maxTokens) {
    return `${spent.tokens} tokens are spent, and this call could take ${estimate.promptTokens} in and ${estimate.outputTokens} out, over the limit of ${limit.maxTokens}`;
  }
  if (limit.maxCostUsd !== undefined) {
    if (estimate.pricing === undefined) {
      return `model '${estimate.modelId}' has no pricing, so its cost cannot be held to maxCostUsd ${limit.maxCostUsd}; give the model a pricing or drop maxCostUsd`;
    }
    if (spent.costUsd + worst.costUsd > limit.maxCostUsd) {
      return `$${spent.costUsd.toFixed(6)} is spent, and this call could cost up to $${worst.costUsd.toFixed(6)}, over the limit of $${limit.maxCostUsd}`;
    }
  }
  return undefined;
}
