/**
 * What one turn carries from step to step, and the value each step answers with: what happens next. The steps
 * (begin-step.ts, model-step.ts, tool-step.ts, finish-step.ts) share this state and nothing else; the loop in
 * turn.ts only reads their answers. Step numbers are those of 0006 §9.1, as docs/architecture.md lists them.
 */

import { type HookScope, hookRunner } from '../hooks/hook.js';
import type { HeldBatch, PendingToolCall } from '../kernel/approval-types.js';
import { CancelScope } from '../kernel/cancel-scope.js';
import type { AgentError } from '../kernel/error.js';
import type { UsageSink } from '../model/usage-sink.js';
import type { AfterToolUse, BeforeToolUse } from '../tools/tool-dispatch.js';
import type { GatedModel } from './model-gate.js';
import type { TurnUsageOptions } from './turn-usage.js';

/**
 * What a step says happens next (openai-agents' NextStep): another model step, the turn's final answer, an
 * interruption for approvals (the turn suspends with the calls that wait), a cancellation, or a failure that
 * was reported already.
 */
export type NextStep =
  | { type: 'run_again' }
  | { type: 'final_output'; output?: { value: unknown } }
  | { type: 'interruption'; pendingCalls: PendingToolCall[] }
  | { type: 'cancelled' }
  | { type: 'failed' };

/** The state of one running turn; the loop itself keeps none (0006 D1). */
export interface TurnRun {
  readonly options: TurnUsageOptions;
  /** Reports a failure as an `error` event; the turn goes on unless the step says otherwise. */
  readonly reportError: (error: AgentError) => void;
  /** The turn's BeforeToolUse and AfterToolUse runners (see `toolHooksOf`): made at its first tool batch. */
  toolHooks: TurnToolHooks | undefined;
  /** The one listener on the turn's signal, watched by each model call and tool batch; closed as the turn ends. */
  readonly cancelScope: CancelScope;
  /** The provider the turn's model steps call (gated: hooks, fallbacks, budget, observers), made at the first one. */
  model: GatedModel | undefined;
  /** The turn's usage sink with each call attributed to the model that answered it (`model`'s), made with it. */
  modelUsage: UsageSink | undefined;
  /** Sections plugins (TurnStart) and structured output add to the dynamic part of the prompt. */
  dynamicSections: readonly string[];
  /** Tool calls run so far, a continued turn's earlier ones included (for the tool-call limit). */
  toolCallCount: number;
  /** The batch the next tool step continues (held for approval, or reconciled after a crash); used once. */
  held: HeldBatch | undefined;
  /** True once the turn saved something (its user message, or its continuation began): its end is recorded. */
  opened: boolean;
  /**
   * Calls saved without a result yet, in call order: a turn that fails gives each one, so every call keeps its
   * result. An array, not a Set: results come in call order, so a call leaves from the front (no allocation).
   */
  readonly openCalls: string[];
  /** Structured output: whether the one repair round was used. */
  repairUsed: boolean;
  /** Whether the one retry after the provider said the request was too large was used. */
  contextRetryUsed: boolean;
}

/** A turn about to begin. */
export function startTurnRun(options: TurnUsageOptions): TurnRun {
  const { emit } = options;
  const reportError = (error: AgentError): void => emit({ type: 'error', error });
  return {
    options,
    reportError,
    toolHooks: undefined,
    cancelScope: options.cancelScope ?? new CancelScope(options.signal),
    model: undefined,
    modelUsage: undefined,
    dynamicSections: [],
    toolCallCount: 0,
    held: undefined,
    opened: false,
    openCalls: [],
    repairUsed: false,
    contextRetryUsed: false,
  };
}

/** A call's result is saved: the call is no longer open (most often the first one, results come in call order). */
export function closeCall(openCalls: string[], callId: string): void {
  if (openCalls[0] === callId) {
    openCalls.shift();
    return;
  }
  const index = openCalls.indexOf(callId);
  if (index > 0) openCalls.splice(index, 1);
}

/** A turn's tool hooks, each bounded by the tool timeout. */
interface TurnToolHooks {
  readonly beforeToolUse: BeforeToolUse;
  readonly afterToolUse: AfterToolUse;
}

/** The turn's tool hook runners, made once at its first tool batch: a turn that calls no tool makes none. */
export function toolHooksOf(turn: TurnRun): TurnToolHooks {
  if (turn.toolHooks !== undefined) return turn.toolHooks;
  const { runtime, session, turnId } = turn.options;
  const hookScope: HookScope = {
    sessionId: session.id,
    turnId,
    timeoutMs: runtime.tools.timeoutMs,
    reportError: turn.reportError,
  };
  turn.toolHooks = {
    beforeToolUse: hookRunner(runtime.hooks, 'BeforeToolUse', hookScope),
    afterToolUse: hookRunner(runtime.hooks, 'AfterToolUse', hookScope),
  };
  return turn.toolHooks;
}
