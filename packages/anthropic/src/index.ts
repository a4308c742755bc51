/**
 * @youyou/anthropic — the Anthropic Messages API as a YouYou Agent model provider: streaming, tool use,
 * extended thinking, images and prompt caching of the stable system prompt.
 */
export { REDACTED_THINKING_PREFIX } from './messages.js';
export { ANTHROPIC_MODELS, type AnthropicModelInfo, type AnthropicThinkingMode } from './models.js';
export { closesEveryObject } from './output-format.js';
export {
  type AnthropicLogLevel,
  type AnthropicProvider,
  type AnthropicProviderOptions,
  anthropicProvider,
} from './provider.js';
export type { ThinkingOption } from './request.js';
