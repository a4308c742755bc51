import Anthropic from '@anthropic-ai/sdk';
import { AgentError, type ChatEvent, type ChatRequest, type ModelProvider } from '@youyou/agent';
import { cancelledError, makeScrubber, type Scrubber, toAgentError } from './errors.js';
import { ANTHROPIC_MODELS, type AnthropicModelInfo, resolveModel } from './models.js';
import { answerFromOutputTool, outputRoute } from './output-format.js';
import { buildParams, MIN_THINKING_BUDGET, type ThinkingOption } from './request.js';
import { assembleChatEvents } from './stream.js';

/** The SDK's log levels; `off` silences it. */
export type AnthropicLogLevel = 'off' | 'error' | 'warn' | 'info' | 'debug';

/** What `anthropicProvider` takes; everything is optional. */
export interface AnthropicProviderOptions {
  /** The API key; default: the `ANTHROPIC_API_KEY` environment variable (read by the SDK). */
  apiKey?: string;
  /** The API's base URL, for a proxy or a compatible server; default `https://api.anthropic.com`. */
  baseURL?: string;
  /** The models offered; default `ANTHROPIC_MODELS`. When given, exactly these are offered. */
  models?: readonly AnthropicModelInfo[];
  /** The provider id the runtime registers; default `anthropic-messages`. */
  id?: string;
  /** Turns extended thinking on for every request. */
  thinking?: ThinkingOption;
  /** How often the SDK retries a failed request before its stream starts (429, 5xx, network); default 2. */
  maxRetries?: number;
  /** How long to wait for the response headers of one attempt, in milliseconds; default 10 minutes. */
  timeoutMs?: number;
  /** Headers sent with every request (an `anthropic-beta` flag, a proxy's header). */
  defaultHeaders?: Record<string, string>;
  /** The SDK's own console logging; default `off` (failures reach the caller as AgentErrors), or `ANTHROPIC_LOG`. */
  logLevel?: AnthropicLogLevel;
}

/** The Anthropic Messages provider: a ModelProvider whose models carry the Anthropic fields. */
export interface AnthropicProvider extends ModelProvider {
  readonly models: readonly AnthropicModelInfo[];
}

function configError(message: string): AgentError {
  return new AgentError({ code: 'INVALID_CONFIG', message, sourceComponent: 'provider' });
}

function validate(options: AnthropicProviderOptions, models: readonly AnthropicModelInfo[]): void {
  if (models.length === 0)
    throw configError('anthropicProvider: `models` is empty; offer at least one model');
  const seen = new Set<string>();
  for (const model of models) {
    if (seen.has(model.id)) throw configError(`anthropicProvider: model '${model.id}' is listed twice`);
    seen.add(model.id);
  }
  const budget = options.thinking?.budgetTokens;
  if (budget !== undefined && (!Number.isInteger(budget) || budget < MIN_THINKING_BUDGET)) {
    throw configError(
      `anthropicProvider: thinking.budgetTokens must be an integer of at least ${MIN_THINKING_BUDGET}, got ${budget}`,
    );
  }
  const retries = options.maxRetries;
  if (retries !== undefined && (!Number.isInteger(retries) || retries < 0)) {
    throw configError(`anthropicProvider: maxRetries must be a whole number of 0 or more, got ${retries}`);
  }
}

function defaultLogLevel(): AnthropicLogLevel | undefined {
  // Without the option, ANTHROPIC_LOG still works (the SDK reads it when logLevel is undefined).
  return process.env.ANTHROPIC_LOG ? undefined : 'off';
}

/**
 * A ModelProvider over the Anthropic Messages API (streaming, tool use, thinking, images, prompt caching
 * of the stable system prompt). Failures are thrown as AgentError PROVIDER_ERROR; the SDK retries 429,
 * 5xx and network failures before the stream starts, honouring `retry-after`.
 *
 * @example
 * const agent = await new AgentBuilder({ defaultModel: 'claude-sonnet-5-5' })
 *   .registerModelProvider(anthropicProvider({ apiKey: process.env.ANTHROPIC_API_KEY }))
 *   .build();
 */
export function anthropicProvider(options: AnthropicProviderOptions = {}): AnthropicProvider {
  const models = options.models ?? ANTHROPIC_MODELS;
  validate(options, models);
  const byId = new Map(models.map((model) => [model.id, model]));
  const client = new Anthropic({
    apiKey: options.apiKey,
    baseURL: options.baseURL,
    maxRetries: options.maxRetries ?? 2,
    timeout: options.timeoutMs,
    defaultHeaders: options.defaultHeaders,
    logLevel: options.logLevel ?? defaultLogLevel(),
  });
  const scrub = makeScrubber([options.apiKey, client.apiKey ?? undefined, client.authToken ?? undefined]);
  const id = options.id ?? 'anthropic-messages';
  const thinking = options.thinking;

  return {
    id,
    models,
    chat(request: ChatRequest, signal: AbortSignal): AsyncIterable<ChatEvent> {
      const info = byId.get(request.modelId);
      if (info === undefined) {
        throw new AgentError({
          code: 'MODEL_NOT_SUPPORTED',
          message: `provider '${id}' does not offer model '${request.modelId}'; add its ModelInfo to the \`models\` option`,
          sourceComponent: 'provider',
        });
      }
      const model = resolveModel(info);
      const route = outputRoute(request, model.structuredOutput);
      const events = streamMessages({
        client,
        scrub,
        signal,
        params: buildParams({ request, model, thinking, outputRoute: route }),
      });
      return route?.kind === 'tool' ? answerFromOutputTool(events, route.toolName) : events;
    },
  };
}

async function* streamMessages(options: {
  client: Anthropic;
  scrub: Scrubber;
  signal: AbortSignal;
  params: Anthropic.MessageCreateParamsStreaming;
}): AsyncGenerator<ChatEvent, void, undefined> {
  const { client, scrub, signal } = options;
  if (signal.aborted) throw cancelledError();
  let started = false;
  try {
    // The SDK closes the HTTP stream when the signal aborts or when this generator is returned early.
    const stream = await client.messages.create(options.params, { signal });
    started = true;
    yield* assembleChatEvents({ events: stream, scrub });
  } catch (error) {
    throw toAgentError({ error, scrub, signal, started });
  }
  // The SDK ends an aborted stream quietly; say it was cancelled, so it is not taken for a whole answer.
  if (signal.aborted) throw cancelledError();
}
