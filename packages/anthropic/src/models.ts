import type { ModelInfo, ModelPricing } from '@youyou/agent';

/** How a model turns thinking on: a token budget (`enabled`, older models) or `adaptive` (newer models). */
export type AnthropicThinkingMode = 'budget' | 'adaptive';

/**
 * A model as this adapter knows it: the core's ModelInfo plus what the Messages API needs to be asked
 * right. Every extra field is optional, so a plain ModelInfo works too (with the defaults given below).
 */
export interface AnthropicModelInfo extends ModelInfo {
  /** The largest `max_tokens` the model accepts; `max_tokens` is never sent above it. */
  maxOutputTokens?: number;
  /** `max_tokens` when the request sets no `maxOutputTokens` (thinking included); default 8192. */
  defaultMaxTokens?: number;
  /** How the `thinking` option turns thinking on for this model; default `budget`. */
  thinking?: AnthropicThinkingMode;
  /**
   * True when the model thinks even when the request has no `thinking` field. Its thinking blocks are
   * then always sent back (the API needs them in a tool-use loop); default false.
   */
  thinksByDefault?: boolean;
}

/** `max_tokens` for models that think on every request: room for the thinking and the answer. */
const THINKING_MAX_TOKENS = 32_000;
/** Every model listed here is Claude 4.5 or later: all of them take `output_config.format` (JSON outputs). */
const CAPABILITIES = { toolUse: true, vision: true, streaming: true, structuredOutput: true } as const;

function model(options: {
  id: string;
  displayName: string;
  contextWindow: number;
  maxOutputTokens: number;
  thinking: AnthropicThinkingMode;
  thinksByDefault: boolean;
  pricing?: ModelPricing;
}): AnthropicModelInfo {
  const info: AnthropicModelInfo = {
    id: options.id,
    displayName: options.displayName,
    contextWindow: options.contextWindow,
    capabilities: { ...CAPABILITIES },
    maxOutputTokens: options.maxOutputTokens,
    defaultMaxTokens: options.thinksByDefault ? THINKING_MAX_TOKENS : 8192,
    thinking: options.thinking,
    thinksByDefault: options.thinksByDefault,
  };
  if (options.pricing !== undefined) info.pricing = options.pricing;
  return info;
}

/**
 * Prices in USD per million tokens, from Anthropic's pricing page as of November 2025 (the date they were
 * taken): a cache read costs 0.1× the input price and a cache write 1.25× (the 5-minute cache this adapter's
 * `cache_control` blocks ask for).
 */
function price(input: number, output: number): ModelPricing {
  return {
    inputPerMillion: input,
    outputPerMillion: output,
    cacheReadPerMillion: input * 0.1,
    cacheWritePerMillion: input * 1.25,
  };
}

/** Models of the 5 generation: 1M tokens of context, adaptive thinking on by default. */
const THINKS_ALWAYS = {
  contextWindow: 1_000_000,
  maxOutputTokens: 128_000,
  thinking: 'adaptive',
  thinksByDefault: true,
} as const;
/** Opus 4.6–4.8 and Sonnet 4.6: adaptive thinking, off unless asked for (4.7+ reject a budget). */
const ADAPTIVE = {
  contextWindow: 1_000_000,
  maxOutputTokens: 128_000,
  thinking: 'adaptive',
  thinksByDefault: false,
} as const;
/** The 4.5 models: 200k of context, extended thinking with a token budget. */
const BUDGET = {
  contextWindow: 200_000,
  maxOutputTokens: 64_000,
  thinking: 'budget',
  thinksByDefault: false,
} as const;

/**
 * The Claude models this adapter offers by default, from Anthropic's model pages as of `@anthropic-ai/sdk`
 * 1.10.0 (November 2026). Retired models (Claude 3.x, Sonnet 4, Opus 4, Opus 4.1) are left out because the
 * API rejects them; Sonnet 4.5 (deprecated, retiring 30 November 2026) and the invitation-only Mythos
 * models are left out too. Spread it to add a model: `models: [...ANTHROPIC_MODELS, myModel]`.
 *
 * Only Opus 4.5 and Haiku 4.5 carry a `pricing` (see `price`): the prices of the newer models were not known
 * when the table was taken, and a guessed price would be a wrong cost, so their calls carry no `costUsd`.
 * Set `pricing` on your own ModelInfo to add one.
 */
export const ANTHROPIC_MODELS: readonly AnthropicModelInfo[] = Object.freeze([
  model({ id: 'claude-fable-5-2', displayName: 'Claude Fable 5.2', ...THINKS_ALWAYS }),
  model({ id: 'claude-opus-5-5', displayName: 'Claude Opus 5.5', ...THINKS_ALWAYS }),
  model({ id: 'claude-sonnet-5-5', displayName: 'Claude Sonnet 5.5', ...THINKS_ALWAYS }),
  model({ id: 'claude-haiku-5-5', displayName: 'Claude Haiku 5.5', ...THINKS_ALWAYS }),
  model({ id: 'claude-fable-5-1', displayName: 'Claude Fable 5.1', ...THINKS_ALWAYS }),
  model({ id: 'claude-opus-5', displayName: 'Claude Opus 5', ...THINKS_ALWAYS }),
  model({ id: 'claude-sonnet-5', displayName: 'Claude Sonnet 5', ...THINKS_ALWAYS }),
  model({ id: 'claude-opus-4-8', displayName: 'Claude Opus 4.8', ...ADAPTIVE }),
  model({ id: 'claude-opus-4-7', displayName: 'Claude Opus 4.7', ...ADAPTIVE }),
  model({ id: 'claude-opus-4-6', displayName: 'Claude Opus 4.6', ...ADAPTIVE }),
  model({ id: 'claude-sonnet-4-6', displayName: 'Claude Sonnet 4.6', ...ADAPTIVE, maxOutputTokens: 64_000 }),
  model({ id: 'claude-opus-4-5', displayName: 'Claude Opus 4.5', ...BUDGET, pricing: price(5, 25) }),
  model({ id: 'claude-haiku-4-5', displayName: 'Claude Haiku 4.5', ...BUDGET, pricing: price(1, 5) }),
]);

/** The adapter's view of any ModelInfo: its own fields filled with their defaults. */
export interface ResolvedModel {
  id: string;
  maxOutputTokens: number | undefined;
  defaultMaxTokens: number;
  thinking: AnthropicThinkingMode;
  thinksByDefault: boolean;
  /** The model's `capabilities.structuredOutput`: `output_config.format` is used, else a forced final tool. */
  structuredOutput: boolean;
}

/** Fills the Anthropic fields a plain ModelInfo lacks. */
export function resolveModel(info: AnthropicModelInfo): ResolvedModel {
  return {
    id: info.id,
    maxOutputTokens: info.maxOutputTokens,
    defaultMaxTokens: info.defaultMaxTokens ?? 8192,
    thinking: info.thinking ?? 'budget',
    thinksByDefault: info.thinksByDefault ?? false,
    structuredOutput: info.capabilities?.structuredOutput === true,
  };
}
