import { AgentError, type ModelInfo, type ModelPricing } from '@youyou/agent';

/**
 * A model an OpenAI-wire provider offers. `reasoning` says whether the model reasons (gpt-5, o-series):
 * the Responses provider then asks for reasoning summaries and encrypted reasoning, which other models
 * reject. Left out, it is guessed from the id (`o1`…`o9`, `gpt-5*` except `*-chat*`).
 */
export interface OpenAIModelInfo extends ModelInfo {
  reasoning?: boolean;
}

/** Every model listed here speaks `response_format` / `text.format` json_schema (structured outputs). */
const ALL = { toolUse: true, vision: true, streaming: true, structuredOutput: true } as const;

function model(options: {
  id: string;
  displayName: string;
  contextWindow: number;
  reasoning: boolean;
  pricing: ModelPricing | undefined;
}): OpenAIModelInfo {
  const info: OpenAIModelInfo = {
    id: options.id,
    displayName: options.displayName,
    contextWindow: options.contextWindow,
    capabilities: { ...ALL },
    reasoning: options.reasoning,
  };
  if (options.pricing !== undefined) info.pricing = options.pricing;
  return info;
}

/** Standard-tier prices in USD per million tokens: input, cached input, output. OpenAI bills no cache writes. */
function price(input: number, cachedInput: number, output: number): ModelPricing {
  return { inputPerMillion: input, outputPerMillion: output, cacheReadPerMillion: cachedInput };
}

/**
 * OpenAI models served by both Chat Completions and Responses, with their context windows (from OpenAI's
 * model pages). Pass `models: [...OPENAI_MODELS, yourModel]` to add to it.
 *
 * Prices: OpenAI's API pricing page (standard tier, text tokens) as of November 2025, the date they were
 * taken. GPT-5.1 is priced as GPT-5 there. GPT-5.2 has no price here: its price was not known when the
 * table was taken, and a guessed price would be a wrong cost, so calls to it carry no `costUsd`. Set
 * `pricing` on your own ModelInfo to add or correct one.
 */
export const OPENAI_MODELS: readonly OpenAIModelInfo[] = Object.freeze([
  model({
    id: 'gpt-5.2',
    displayName: 'GPT-5.2',
    contextWindow: 400_000,
    reasoning: true,
    pricing: undefined,
  }),
  model({
    id: 'gpt-5.1',
    displayName: 'GPT-5.1',
    contextWindow: 400_000,
    reasoning: true,
    pricing: price(1.25, 0.125, 10),
  }),
  model({
    id: 'gpt-5',
    displayName: 'GPT-5',
    contextWindow: 400_000,
    reasoning: true,
    pricing: price(1.25, 0.125, 10),
  }),
  model({
    id: 'gpt-5-mini',
    displayName: 'GPT-5 mini',
    contextWindow: 400_000,
    reasoning: true,
    pricing: price(0.25, 0.025, 2),
  }),
  model({
    id: 'gpt-5-nano',
    displayName: 'GPT-5 nano',
    contextWindow: 400_000,
    reasoning: true,
    pricing: price(0.05, 0.005, 0.4),
  }),
  model({
    id: 'gpt-4.1',
    displayName: 'GPT-4.1',
    contextWindow: 1_047_576,
    reasoning: false,
    pricing: price(2, 0.5, 8),
  }),
  model({
    id: 'gpt-4.1-mini',
    displayName: 'GPT-4.1 mini',
    contextWindow: 1_047_576,
    reasoning: false,
    pricing: price(0.4, 0.1, 1.6),
  }),
  model({
    id: 'gpt-4.1-nano',
    displayName: 'GPT-4.1 nano',
    contextWindow: 1_047_576,
    reasoning: false,
    pricing: price(0.1, 0.025, 0.4),
  }),
  model({
    id: 'gpt-4o',
    displayName: 'GPT-4o',
    contextWindow: 128_000,
    reasoning: false,
    pricing: price(2.5, 1.25, 10),
  }),
  model({
    id: 'gpt-4o-mini',
    displayName: 'GPT-4o mini',
    contextWindow: 128_000,
    reasoning: false,
    pricing: price(0.15, 0.075, 0.6),
  }),
  model({ id: 'o3', displayName: 'o3', contextWindow: 200_000, reasoning: true, pricing: price(2, 0.5, 8) }),
  model({
    id: 'o4-mini',
    displayName: 'o4-mini',
    contextWindow: 200_000,
    reasoning: true,
    pricing: price(1.1, 0.275, 4.4),
  }),
  {
    id: 'o3-mini',
    displayName: 'o3-mini',
    contextWindow: 200_000,
    capabilities: { toolUse: true, vision: false, streaming: true, structuredOutput: true },
    reasoning: true,
    pricing: price(1.1, 0.55, 4.4),
  },
]);

/** True when the model reasons: its `reasoning` flag, else a guess from its id. */
export function isReasoningModel(info: OpenAIModelInfo): boolean {
  if (info.reasoning !== undefined) return info.reasoning;
  return /^o\d/.test(info.id) || (/^gpt-5/.test(info.id) && !info.id.includes('-chat'));
}

/**
 * The models a provider offers: exactly `models` when given (an empty list is a configuration error),
 * else `fallback`. Duplicate ids are a configuration error too, as the agent would reject them later.
 */
export function resolveModels(options: {
  models: readonly OpenAIModelInfo[] | undefined;
  fallback: readonly OpenAIModelInfo[] | undefined;
  providerName: string;
}): readonly OpenAIModelInfo[] {
  const models = options.models ?? options.fallback;
  if (models === undefined || models.length === 0) {
    throw new AgentError({
      code: 'INVALID_CONFIG',
      message: `${options.providerName} needs a non-empty 'models' list: the ModelInfo of each model the server offers`,
    });
  }
  const seen = new Set<string>();
  for (const info of models) {
    if (typeof info.id !== 'string' || info.id === '') {
      throw new AgentError({
        code: 'INVALID_CONFIG',
        message: `${options.providerName}: every model needs a non-empty 'id'`,
      });
    }
    if (seen.has(info.id)) {
      throw new AgentError({
        code: 'INVALID_CONFIG',
        message: `${options.providerName}: model '${info.id}' is listed twice in 'models'`,
      });
    }
    seen.add(info.id);
  }
  return Object.freeze(models.map((info) => ({ ...info, capabilities: { ...info.capabilities } })));
}

/** The model a request names, or MODEL_NOT_SUPPORTED when the provider does not offer it. */
export function findModel(options: {
  models: readonly OpenAIModelInfo[];
  modelId: string;
  providerId: string;
}): OpenAIModelInfo {
  const { modelId, providerId } = options;
  const found = options.models.find((info) => info.id === modelId);
  if (found === undefined) {
    throw new AgentError({
      code: 'MODEL_NOT_SUPPORTED',
      message: `provider '${providerId}' does not offer model '${modelId}'; add its ModelInfo to the 'models' option`,
      sourceComponent: 'provider',
    });
  }
  return found;
}
