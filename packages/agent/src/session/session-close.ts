/**
 * The close path of a session (0006 §8), apart from the controller that owns it: waiting for (or cancelling)
 * the running turn, SessionEnd, memory extraction, the last flush of the log, and releasing the storage's claim.
 * Every wait is bounded by the tool timeout, so close() and shutdown() never hang on a part that does not answer.
 */
import type { ResolvedConfig } from '../kernel/config.js';
import { AgentError, toAgentError } from '../kernel/error.js';
import { settleWithin } from '../kernel/settle.js';
import type { ModelPricing } from '../ports/model.js';
import type { SessionClaim } from '../ports/storage.js';
import { gatedModel, sessionBudgetGate } from '../turn/model-gate.js';
import type { AgentRuntime, SessionState } from '../turn/session-state.js';

/** The pricing of a model id, as the controller looks it up in the registered providers' catalogues. */
type PriceOf = (modelId: string) => ModelPricing | undefined;

/** Waits for the running turn to end; with `cancelRunning`, cancels it first and waits at most the tool timeout. */
export async function settleRunningTurn(options: {
  turn: { controller: AbortController; done: Promise<unknown> } | undefined;
  cancelRunning: boolean;
  config: ResolvedConfig;
}): Promise<void> {
  const { turn, cancelRunning, config } = options;
  if (turn === undefined) return;
  if (cancelRunning) {
    turn.controller.abort();
    // A cancelled turn settles within the tool timeout; shutdown() must not hang on one that does not.
    await settleWithin(turn.done, config.toolTimeoutMs);
  } else {
    await turn.done;
  }
}

/** True when ending the session has something to do: a SessionEnd handler, messages to extract, events to save. */
export function hasCloseWork(state: SessionState, runtime: AgentRuntime): boolean {
  return (
    runtime.hooks.has('SessionEnd') ||
    (runtime.memory !== undefined && state.hasUncheckpointed) ||
    !state.log.isIdle
  );
}

/**
 * Ends an idle session: runs SessionEnd, extracts memories from the messages since the last checkpoint, and
 * flushes the log. Failures go to onBackgroundError; the caller releases the claim and the slot afterwards.
 */
export async function finishSession(options: {
  state: SessionState;
  runtime: AgentRuntime;
  priceOf: PriceOf;
}): Promise<void> {
  const { state, runtime } = options;
  const { config, hooks, memory } = runtime;
  if (hooks.has('SessionEnd')) {
    const outcome = await hooks.dispatch({
      event: 'SessionEnd',
      sessionId: state.id,
      data: { turnCount: state.turnCount },
      timeoutMs: config.toolTimeoutMs,
    });
    for (const error of outcome.errors) config.onBackgroundError(error);
  }
  if (memory !== undefined && state.hasUncheckpointed) await extractAtClose(options);
  // A log with nothing queued and no write under way has nothing to flush: no pass, no bound to wait on.
  if (state.log.isIdle) return;
  // Bounded like every other wait of close: a storage that never answers must not hang it.
  const flushed = await settleWithin(state.log.flush(), config.toolTimeoutMs);
  if (flushed.status === 'rejected') {
    config.onBackgroundError(
      toAgentError(flushed.error, 'STORAGE_ERROR', 'saving the session at close failed'),
    );
  } else if (flushed.status === 'timeout') {
    config.onBackgroundError(
      new AgentError({
        code: 'STORAGE_ERROR',
        message: `saving the session at close did not finish within ${config.toolTimeoutMs}ms; events not yet saved are lost`,
      }),
    );
  }
}

/** Extracts memories from the messages since the last checkpoint, bounded by the tool timeout. */
async function extractAtClose(options: {
  state: SessionState;
  runtime: AgentRuntime;
  priceOf: PriceOf;
}): Promise<void> {
  const { state, runtime, priceOf } = options;
  const { config, models } = runtime;
  const memory = state.memory;
  if (memory === undefined) return;
  const route = config.memoryModel === undefined ? state.model : models.resolve(config.memoryModel);
  const messages = state.takeSinceCheckpoint();
  // The extraction is bounded so that close() and shutdown() never hang on a model that does not answer,
  // even one that ignores its signal.
  const controller = new AbortController();
  const gated = gatedModel(
    {
      runtime,
      session: state,
      observers: runtime.observers.enabledNow(),
      budgetGate: sessionBudgetGate({ runtime, session: state, inTurn: false }),
      reportError: config.onBackgroundError,
    },
    route.provider,
  );
  const settled = await settleWithin(
    memory.extract({
      messages,
      provider: gated.provider,
      modelId: route.info.id,
      sessionId: state.id,
      signal: controller.signal,
      // Outside any turn there is no event stream: the call counts in the session's totals and its log.
      onUsage: gated.attribute(state.usage.sink({ log: state.log, priceOf })),
    }),
    config.toolTimeoutMs,
  );
  if (settled.status === 'timeout') {
    controller.abort();
    config.onBackgroundError(
      new AgentError({
        code: 'MEMORY_ERROR',
        message: `memory extraction at close did not finish within ${config.toolTimeoutMs}ms and was abandoned`,
      }),
    );
  } else if (settled.status === 'rejected') {
    config.onBackgroundError(
      toAgentError(settled.error, 'MEMORY_ERROR', 'memory extraction at close failed'),
    );
  }
}

/** Releases a storage's claim on a session, bounded by the tool timeout; a failure goes to onBackgroundError. */
export async function releaseSessionClaim(options: {
  claim: SessionClaim | undefined;
  sessionId: string;
  config: ResolvedConfig;
}): Promise<void> {
  const { claim, sessionId, config } = options;
  if (claim === undefined) return;
  const outcome = await settleWithin(claim.release(), config.toolTimeoutMs);
  if (outcome.status === 'rejected') {
    config.onBackgroundError(
      toAgentError(outcome.error, 'STORAGE_ERROR', `releasing the claim on session '${sessionId}' failed`),
    );
  }
}
