import { AgentError, type ModelInfo } from '@youyou/agent';

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

function model(id: string, displayName: string, contextWindow: number, reasoning: boolean): OpenAIModelInfo {
  return { id, displayName, contextWindow, capabilities: { ...ALL }, reasoning };
}

/**
 * OpenAI models served by both Chat Completions and Responses, with their context windows (from
 * OpenAI's model pages). Pass `models: [...OPENAI_MODELS, yourModel]` to add to it.
 */
export const OPENAI_MODELS: readonly OpenAIModelInfo[] = Object.freeze([
  model('gpt-5.2', 'GPT-5.2', 400_000, true),
  model('gpt-5.1', 'GPT-5.1', 400_000, true),
  model('gpt-5', 'GPT-5', 400_000, true),
  model('gpt-5-mini', 'GPT-5 mini', 400_000, true),
  model('gpt-5-nano', 'GPT-5 nano', 400_000, true),
  model('gpt-4.1', 'GPT-4.1', 1_047_576, false),
  model('gpt-4.1-mini', 'GPT-4.1 mini', 1_047_576, false),
  model('gpt-4.1-nano', 'GPT-4.1 nano', 1_047_576, false),
  model('gpt-4o', 'GPT-4o', 128_000, false),
  model('gpt-4o-mini', 'GPT-4o mini', 128_000, false),
  model('o3', 'o3', 200_000, true),
  model('o4-mini', 'o4-mini', 200_000, true),
  {
    id: 'o3-mini',
    displayName: 'o3-mini',
    contextWindow: 200_000,
    capabilities: { toolUse: true, vision: false, streaming: true, structuredOutput: true },
    reasoning: true,
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
