/**
 * What stands between a step and its model: the model-call hooks (guardrails), the fallback models, then for
 * each model the budget check and the observers, in that order, so that a budget weighs the request as the hooks
 * left it (and each fallback call at its own price), a refused or blocked call is never seen as made, and the
 * observers see each request as sent and each answer as its model gave it.
 */

import { messageChars } from '../context/context.js';
import { hookedProvider } from '../hooks/model-call-hooks.js';
import { AgentError, isAgentError } from '../kernel/error.js';
import type { Budget, BudgetConfig, TokenUsage } from '../kernel/types.js';
import { type FallbackMove, type FallbackRoute, fallbackProvider } from '../model/fallback.js';
import type { Observers } from '../model/observation.js';
import { observedProvider } from '../model/observed-provider.js';
import { ChatEventChecker } from '../model/provider-events.js';
import type { UsageSink } from '../model/usage-sink.js';
import type { ChatEvent, ChatRequest, ModelProvider } from '../ports/model.js';
import { type AdmittedCall, BudgetGate, type BudgetScope } from '../usage/budget.js';
import type { AgentRuntime, SessionState } from './session-state.js';

/** The output a call is counted for when neither its request nor its model says how long an answer may be. */
const DEFAULT_OUTPUT_LIMIT = 8192;

/** Where one model call is made from. */
interface ModelGateScope {
  runtime: AgentRuntime;
  session: SessionState;
  /** Unset for a call outside any turn (memory extraction at close, a compaction asked for by the host). */
  turnId?: string | undefined;
  observers?: Observers | undefined;
  budgetGate?: BudgetGate | undefined;
  /** Where a hook handler's failure goes: the turn's `error` events, or `onBackgroundError` outside a turn. */
  reportError: (error: AgentError) => void;
  /** Told when a call moves to a fallback model (the turn emits `model_fallback`); unset outside a turn. */
  onFallback?: ((move: FallbackMove) => void) | undefined;
}

/** The provider a step calls, and how its calls' usage is attributed. */
export interface GatedModel {
  provider: ModelProvider;
  /** The sink with each call's usage attributed to the model that answered it (a fallback model, maybe). */
  attribute(sink: UsageSink): UsageSink;
}

/**
 * The provider wrapped for the calls of one step, or of a turn's model steps (made once per turn), which are made
 * one after another: the hooks, then the fallbacks, then for each model the budget and the observers.
 */
export function gatedModel(scope: ModelGateScope, provider: ModelProvider): GatedModel {
  const { runtime, session, turnId } = scope;
  const guarded = (inner: ModelProvider): ModelProvider => {
    const { observers } = scope;
    // The observers' call scope is made only when some observer watches.
    const observed =
      observers === undefined
        ? inner
        : observedProvider(
            observers,
            inner,
            turnId === undefined ? { sessionId: session.id } : { sessionId: session.id, turnId },
          );
    const gate = scope.budgetGate;
    return gate === undefined ? observed : budgetedProvider(runtime, gate, observed);
  };
  const fallbacks = session.fallbackModels ?? runtime.config.fallbackModels;
  if (fallbacks.length === 0) return ungatedByFallbacks(scope, guarded(provider));
  const sessionModel = session.model.info.id;
  let answered: { providerId: string; modelId: string } | undefined;
  /** The chain of one call: its own model (or the session's sticky fallback), then the fallback models. */
  const chainFor = (request: ChatRequest): { provider: ModelProvider; request: ChatRequest } => {
    const preferred = request.modelId === sessionModel ? session.stickyModel : undefined;
    const stickyRoute = preferred === undefined ? undefined : runtime.models.find(preferred);
    const sent = stickyRoute === undefined ? request : { ...request, modelId: stickyRoute.info.id };
    const first = guarded(stickyRoute?.provider ?? provider);
    // After a sticky fallback the session's own model is tried again last.
    const order = stickyRoute === undefined ? fallbacks : [...fallbacks, sessionModel];
    const chain = fallbackProvider({
      first,
      routesAfter: (moved) => fallbackRoutes(runtime, order, moved.modelId, guarded),
      onFallback: (move) => scope.onFallback?.(move),
      onAnswered: (answer) => {
        answered = answer;
        if (runtime.config.fallbackSticky && request.modelId === sessionModel) {
          session.stickyModel = answer.modelId === sessionModel ? undefined : answer.modelId;
        }
      },
    });
    return { provider: chain, request: sent };
  };
  const counted: ModelProvider = {
    id: provider.id,
    models: provider.models,
    chat: (request, signal) => {
      answered = undefined;
      const chain = chainFor(request);
      return chain.provider.chat(chain.request, signal);
    },
  };
  return {
    provider: hookedProvider(runtime.hooks, counted, {
      sessionId: session.id,
      ...(turnId === undefined ? {} : { turnId }),
      timeoutMs: runtime.config.toolTimeoutMs,
      reportError: scope.reportError,
    }),
    attribute: (sink) => (call) => sink(answered === undefined ? call : { ...call, ...answered }),
  };
}

/**
 * Without fallback models a call has one model to go to: the provider (guarded once, not per call) behind the
 * hooks, and the usage attributed as it is (only a fallback can answer for another model; without one, no call
 * ever moves, so the session never gets a sticky model either). Nothing wraps what nothing gates: with no
 * model-call hook, observer or budget, the provider is called as it is.
 */
function ungatedByFallbacks(scope: ModelGateScope, provider: ModelProvider): GatedModel {
  const { runtime } = scope;
  const { hooks } = runtime;
  const hooked =
    hooks.has('BeforeModelCall') || hooks.has('AfterModelCall')
      ? hookedProvider(hooks, provider, {
          sessionId: scope.session.id,
          ...(scope.turnId === undefined ? {} : { turnId: scope.turnId }),
          timeoutMs: runtime.config.toolTimeoutMs,
          reportError: scope.reportError,
        })
      : provider;
  return { provider: hooked, attribute: unattributed };
}

/** The sink as it is: each call's usage is that of the model it was sent to. */
function unattributed(sink: UsageSink): UsageSink {
  return sink;
}

/** The registered models after `modelId` in the fallback list, each once, with their guarded providers. */
function fallbackRoutes(
  runtime: AgentRuntime,
  fallbacks: readonly string[],
  modelId: string,
  guarded: (provider: ModelProvider) => ModelProvider,
): FallbackRoute[] {
  const routes: FallbackRoute[] = [];
  for (const id of new Set(fallbacks)) {
    const route = id === modelId ? undefined : runtime.models.find(id);
    if (route !== undefined) routes.push({ modelId: id, provider: guarded(route.provider) });
  }
  return routes;
}

/**
 * The provider behind a budget: a call whose worst case does not fit is refused (BUDGET_EXCEEDED) and not made;
 * an admitted call is settled with the usage its stream reports once the stream ends, however it ends.
 */
function budgetedProvider(runtime: AgentRuntime, gate: BudgetGate, provider: ModelProvider): ModelProvider {
  return {
    id: provider.id,
    models: provider.models,
    chat: async (request, signal) => {
      const info =
        runtime.models.find(request.modelId)?.info ??
        provider.models.find((model) => model.id === request.modelId);
      const admitted = gate.admit({
        modelId: request.modelId,
        promptTokens: promptTokensOf(request),
        outputTokens: outputLimitOf(request.maxOutputTokens ?? info?.maxOutputTokens),
        pricing: info?.pricing,
      });
      if (admitted instanceof AgentError) throw admitted;
      let stream: AsyncIterable<ChatEvent>;
      try {
        stream = await provider.chat(request, signal);
      } catch (error) {
        admitted.settle('not_made');
        throw error;
      }
      return settledStream(stream, admitted, provider.id);
    },
  };
}

/** The stream as it came; its call settled at its end with its last `usage`, its worst case without one. */
async function* settledStream(
  stream: AsyncIterable<ChatEvent>,
  admitted: AdmittedCall,
  providerId: string,
): AsyncGenerator<ChatEvent> {
  const checker = new ChatEventChecker(providerId);
  let usage: TokenUsage | undefined;
  let answered = false;
  try {
    for await (const raw of stream) {
      const event = checker.check(raw);
      answered = true;
      if (event.type === 'usage') usage = event.usage;
      yield event;
    }
  } finally {
    admitted.settle(usage ?? (answered ? 'worst' : 'not_made'));
  }
}

/** A usable output limit, or the default: a limit that is not a positive whole number must not open the gate. */
function outputLimitOf(limit: number | undefined): number {
  return limit !== undefined && Number.isSafeInteger(limit) && limit > 0 ? limit : DEFAULT_OUTPUT_LIMIT;
}

/** The request's prompt in tokens by the runtime's chars/4 estimate: system prompt, messages and tool specs. */
function promptTokensOf(request: ChatRequest): number {
  let chars = request.systemPrompt.length;
  for (const message of request.messages) chars += messageChars(message);
  if (request.tools.length > 0) chars += JSON.stringify(request.tools).length;
  return Math.ceil(chars / 4);
}

/**
 * The gate of a turn of a session the host opened: the turn's budget (the `sendMessage` option, else the
 * session's, else the agent's) and the session's (the session's, else the agent's), counted from what the
 * session spent so far (its log's usage records, on resume). Undefined when no limit applies.
 */
export function sessionBudgetGate(options: {
  runtime: AgentRuntime;
  session: SessionState;
  /** The turn's own budget; leave out for a call outside a turn. */
  turnBudget?: Budget | undefined;
  /** False for a call outside any turn: only the session's limit applies. */
  inTurn: boolean;
}): BudgetGate | undefined {
  const { runtime, session } = options;
  const agentBudget: BudgetConfig = runtime.config.budget;
  const sessionBudget = session.budget;
  const turnLimit = options.turnBudget ?? sessionBudget?.turn ?? agentBudget.turn;
  const sessionLimit = sessionBudget?.session ?? agentBudget.session;
  // A turn with no limit (the usual case) makes nothing here.
  if (!(options.inTurn && turnLimit !== undefined) && sessionLimit === undefined) return undefined;
  const scopes: BudgetScope[] = [];
  if (options.inTurn && turnLimit !== undefined) scopes.push({ label: 'turn', limit: turnLimit });
  if (sessionLimit !== undefined) {
    scopes.push({ label: 'session', limit: sessionLimit, spentBefore: session.usage.totals() });
  }
  return new BudgetGate({ scopes });
}

/**
 * The refusal inside a failure, when a budget refused a call or a guardrail stopped one: the turn ends then,
 * also when the call was a compaction's or a memory extraction's (which wrap what they throw).
 */
export function turnStopper(error: unknown): AgentError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== undefined; depth += 1) {
    if (
      isAgentError(current) &&
      (current.code === 'BUDGET_EXCEEDED' || current.code === 'MODEL_CALL_BLOCKED')
    ) {
      return current;
    }
    current = current instanceof Error ? current.cause : undefined;
  }
  return undefined;
}
