/** One streamed model answer of a turn (step 4d): its deltas emitted as they come, its message assembled. */

import { type AgentError, toAgentError } from '../kernel/error.js';
import type { AgentEventPayload } from '../kernel/event.js';
import type { ContentBlock, TokenUsage } from '../kernel/types.js';
import { readChatStream } from '../model/model-call.js';
import type { Observers } from '../model/observation.js';
import type { ChatRequest, ModelProvider } from '../ports/model.js';
import type { BudgetGate } from '../usage/budget.js';
import { type GatedModel, gatedModel } from './model-gate.js';
import type { AgentRuntime, SessionState } from './session-state.js';
import type { TurnRun } from './turn-run.js';
import { usageSink } from './turn-usage.js';

/** What a turn's model call is made in: a turn's options, or a compaction's. */
interface TurnModelScope {
  runtime: AgentRuntime;
  session: SessionState;
  turnId: string;
  emit: (payload: AgentEventPayload) => void;
  observers?: Observers | undefined;
  budgetGate?: BudgetGate | undefined;
}

/**
 * `provider` behind the turn's hooks, fallbacks, budget and observers, its failures and fallbacks reported as
 * the turn's events: how every model call of a turn is made (its steps, a compaction, the memory extraction).
 */
export function turnGatedModel(options: TurnModelScope, provider: ModelProvider): GatedModel {
  const { session, turnId, emit } = options;
  return gatedModel(
    {
      runtime: options.runtime,
      session,
      turnId,
      observers: options.observers,
      budgetGate: options.budgetGate,
      reportError: (error) => emit({ type: 'error', error }),
      onFallback: (move) => emit({ type: 'model_fallback', ...move }),
    },
    provider,
  );
}

/** What one streamed model answer produced. */
export interface ModelAnswer {
  content: ContentBlock[];
  toolCalls: { callId: string; toolName: string; arguments: string }[];
  /** The failure that ended the stream early, if any (not set for a cancellation). */
  error: AgentError | undefined;
  cancelled: boolean;
  /** True once any event arrived; a request is only retried before that. */
  receivedAny: boolean;
  /** The call's usage (its last `usage` event), when the provider reported it. */
  usage: TokenUsage | undefined;
}

/**
 * Streams one model answer of the turn's model step, emitting its deltas, and assembles the assistant content.
 * Never rejects. The call watches the turn's cancel scope, and goes through the turn's gated model.
 */
export async function streamAnswer(turn: TurnRun, request: ChatRequest): Promise<ModelAnswer> {
  const { options, cancelScope } = turn;
  const { session, signal, emit } = options;
  // The answer's content: its reasoning blocks as they close, then its text at the end.
  const content: ContentBlock[] = [];
  let reasoningText = '';
  let reasoningOpen = false;
  let text = '';
  const answer: ModelAnswer = {
    content,
    toolCalls: [],
    error: undefined,
    cancelled: false,
    receivedAny: false,
    usage: undefined,
  };
  const closeReasoning = (signature?: string): void => {
    if (!reasoningOpen) return;
    content.push(
      signature === undefined
        ? { type: 'reasoning', text: reasoningText }
        : { type: 'reasoning', text: reasoningText, signature },
    );
    reasoningText = '';
    reasoningOpen = false;
  };
  // The steps of a turn call the model one after another, so they share one gated provider.
  turn.model ??= turnGatedModel(options, options.session.model.provider);
  const gated = turn.model;
  turn.modelUsage ??= gated.attribute(usageSink(options));
  const reportUsage = turn.modelUsage;
  try {
    await readChatStream({
      provider: gated.provider,
      request,
      signal,
      cancelScope,
      onEvent: (event) => {
        // Yield point: between stream events.
        if (cancelScope.cancelled) {
          answer.cancelled = true;
          return false;
        }
        answer.receivedAny = true;
        switch (event.type) {
          case 'text_delta':
            text += event.text;
            emit({ type: 'text_delta', text: event.text });
            break;
          case 'reasoning_delta':
            reasoningText += event.text;
            reasoningOpen = true;
            emit({ type: 'reasoning_delta', text: event.text });
            break;
          case 'reasoning_signature':
            reasoningOpen = true;
            closeReasoning(event.signature);
            break;
          case 'tool_call':
            answer.toolCalls.push({
              callId: event.callId,
              toolName: event.toolName,
              arguments: event.arguments,
            });
            break;
          case 'usage':
            // inputTokens is the whole prompt, cached parts included.
            session.context.recordReportedInput(event.usage.inputTokens);
            answer.usage = event.usage;
            break;
          case 'done':
            break;
        }
        return true;
      },
    });
  } catch (error) {
    if (!cancelScope.cancelled) answer.error = toAgentError(error, 'PROVIDER_ERROR');
  }
  if (cancelScope.cancelled) answer.cancelled = true;
  if (answer.usage !== undefined) {
    reportUsage({
      purpose: request.purpose,
      providerId: session.model.provider.id,
      modelId: request.modelId,
      usage: answer.usage,
    });
  }
  closeReasoning();
  // Reasoning blocks come before the text, so providers can send them back (SPEC §3).
  if (text !== '') content.push({ type: 'text', text });
  // Tool calls of an interrupted answer are neither run nor kept: the model did not finish its reply.
  if (answer.cancelled || answer.error !== undefined) answer.toolCalls = [];
  return answer;
}
