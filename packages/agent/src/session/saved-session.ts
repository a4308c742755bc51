/**
 * A saved session read back: its log's payloads loaded from the storage, and the state a resume rebuilds from
 * them (context, turns, counters, usage, the model, the held batch or the turn a crash cut).
 */
import { readHeldBatch } from '../approvals/held-batch.js';
import { readInterruptedTurn } from '../approvals/interrupted-turn.js';
import { messageChars } from '../context/context.js';
import { replaySessionEvents, withoutCutAnswer } from '../context/replay.js';
import type { HeldBatch } from '../kernel/approval-types.js';
import { AgentError } from '../kernel/error.js';
import { storageError } from '../log/session-log.js';
import type { RoutedModel } from '../model/model-router.js';
import type { SessionClaim, SessionEvent, SessionEventPayload, SessionStorage } from '../ports/storage.js';
import { type AgentRuntime, SessionState } from '../turn/session-state.js';
import { addLoggedUsage, emptyUsageTotals } from '../usage/usage.js';

/**
 * The payloads of a session's saved log (resuming, reading and forking replay payloads alone), by the storage's
 * `loadPayloads` when it has one: SESSION_NOT_FOUND for an unknown id (or without storage), STORAGE_ERROR.
 */
export async function loadSessionLog(
  storage: SessionStorage | undefined,
  sessionId: string,
): Promise<SessionEventPayload[]> {
  let payloads: SessionEventPayload[] | null = null;
  if (storage !== undefined) {
    try {
      payloads =
        storage.loadPayloads !== undefined
          ? await storage.loadPayloads(sessionId)
          : payloadsOf(await storage.loadSession(sessionId));
    } catch (error) {
      throw storageError(error, `loading session '${sessionId}' failed`);
    }
  }
  if (payloads === null) {
    throw new AgentError({ code: 'SESSION_NOT_FOUND', message: `session '${sessionId}' does not exist` });
  }
  return payloads;
}

/**
 * The state of a saved session rebuilt from its log, as a resume opens it (its memories not loaded yet):
 * `memoryNamespace` overrides the namespace the session was created with.
 */
export function restoredState(options: {
  runtime: AgentRuntime;
  sessionId: string;
  payloads: SessionEventPayload[];
  claim: SessionClaim | undefined;
  memoryNamespace: string | undefined;
}): SessionState {
  const { runtime, sessionId, payloads } = options;
  const heldBatch = readHeldBatch(payloads);
  // The usage records are summed in the replay's walk: a long log is walked once.
  const usage = emptyUsageTotals();
  const replayed = replaySessionEvents(payloads, {
    held: heldCallIds(heldBatch),
    onMetadata: (payload) => addLoggedUsage(usage, payload),
  });
  const model = modelForResume(runtime, replayed.sessionConfig?.modelId, sessionId);
  const state = new SessionState({
    runtime,
    sessionId,
    model,
    systemPromptOverride: replayed.sessionConfig?.systemPromptOverride,
    claim: options.claim,
    memoryNamespace: options.memoryNamespace ?? replayed.sessionConfig?.memoryNamespace,
    budget: replayed.sessionConfig?.budget,
    // A fallback model no longer registered is skipped when a call falls back (fallbackRoutes).
    fallbackModels: replayed.sessionConfig?.fallbackModels,
  });
  state.context.reset(replayed.messages, replayed.chars);
  state.context.turns.replaceWith(replayed.turns);
  state.restoreCounts(replayed.turnCount, runtime.config.memoryCheckpointInterval);
  state.usage.restore(usage);
  state.heldBatch = heldBatch;
  state.interrupted = heldBatch === undefined ? interruptedTurnOf(payloads) : undefined;
  return state;
}

/** The ids of the calls a suspended turn holds, or undefined when none is suspended (most resumes). */
export function heldCallIds(batch: HeldBatch | undefined): Set<string> | undefined {
  return batch === undefined ? undefined : new Set(batch.calls.map((call) => call.callId));
}

/** The model a resumed session talks to: the one it used, else (reported) the default model. */
function modelForResume(runtime: AgentRuntime, modelId: string | undefined, sessionId: string): RoutedModel {
  const { models, config } = runtime;
  if (modelId === undefined) return models.resolve(config.defaultModel);
  const route = models.find(modelId);
  if (route !== undefined) return route;
  config.onBackgroundError(
    new AgentError({
      code: 'MODEL_NOT_SUPPORTED',
      message: `session '${sessionId}' used model '${modelId}', which no provider offers now; it resumes with '${config.defaultModel}'`,
    }),
  );
  return models.resolve(config.defaultModel);
}

/**
 * The turn the log leaves cut, with the context `continue()` runs it on: the calls it left without a result still
 * open (the resumed context gives them the interrupted result, which a new message keeps), its cut answer out.
 */
function interruptedTurnOf(payloads: readonly SessionEventPayload[]): SessionState['interrupted'] {
  const record = readInterruptedTurn(payloads);
  if (record === undefined) return undefined;
  const replayed = replaySessionEvents(payloads, { keepTrailingCalls: true });
  const messages = record.partialAnswer ? withoutCutAnswer(replayed.messages) : replayed.messages;
  const chars = messages === replayed.messages ? replayed.chars : undefined;
  return {
    record,
    messages,
    chars: chars ?? messages.reduce((sum, message) => sum + messageChars(message), 0),
  };
}

/** The payloads of a loaded log (null for an unknown session). */
function payloadsOf(events: readonly SessionEvent[] | null): SessionEventPayload[] | null {
  if (events === null) return null;
  const payloads = new Array<SessionEventPayload>(events.length);
  for (let index = 0; index < events.length; index++)
    payloads[index] = (events[index] as SessionEvent).payload;
  return payloads;
}
