/**
 * Falling back to other models: a call whose model fails with a retryable error before any event (after its
 * provider's own retries) is sent again, unchanged but for its model id, to the next model of the list. An
 * answer that has begun is never moved: part of it was already handed on.
 */

import { type AgentError, isAgentError } from '../kernel/error.js';
import type { ChatEvent, ChatRequest, ModelProvider } from '../ports/model.js';

/** One model a call may go to, with the provider (already wrapped for budget and observers) that serves it. */
export interface FallbackRoute {
  modelId: string;
  provider: ModelProvider;
}

/** A move from one model to the next. */
export interface FallbackMove {
  from: string;
  to: string;
  /** The retryable PROVIDER_ERROR that moved the call. */
  reason: AgentError;
}

/** What `fallbackProvider` takes. */
interface FallbackOptions {
  /** The provider of the request's own model. */
  first: ModelProvider;
  /** The models to try after the request's own, in order, for this request. */
  routesAfter: (request: ChatRequest) => readonly FallbackRoute[];
  /** Told of each move, before the next model is asked. */
  onFallback: (move: FallbackMove) => void;
  /** Told which model is answering, once its first event came. */
  onAnswered: (answer: { providerId: string; modelId: string }) => void;
}

/** True for a failure another model may not have: rate limits, overload, server errors, timeouts, the network. */
function isRetryableFailure(error: unknown): error is AgentError {
  return isAgentError(error) && error.code === 'PROVIDER_ERROR' && error.retryable;
}

/** The provider with its fallbacks; the provider itself when no fallback is configured. */
export function fallbackProvider(options: FallbackOptions): ModelProvider {
  const { first } = options;
  return {
    id: first.id,
    models: first.models,
    chat: (request, signal) => fallbackStream(options, request, signal),
  };
}

async function* fallbackStream(
  options: FallbackOptions,
  request: ChatRequest,
  signal: AbortSignal,
): AsyncGenerator<ChatEvent> {
  const routes: FallbackRoute[] = [
    { modelId: request.modelId, provider: options.first },
    ...options.routesAfter(request),
  ];
  for (const [index, route] of routes.entries()) {
    const sent = index === 0 ? request : { ...request, modelId: route.modelId };
    let answered = false;
    try {
      const stream = await route.provider.chat(sent, signal);
      for await (const event of stream) {
        if (!answered) {
          answered = true;
          options.onAnswered({ providerId: route.provider.id, modelId: route.modelId });
        }
        yield event;
      }
      return;
    } catch (error) {
      const next = routes[index + 1];
      if (answered || signal.aborted || next === undefined || !isRetryableFailure(error)) throw error;
      options.onFallback({ from: route.modelId, to: next.modelId, reason: error });
    }
  }
}
