/**
 * @youyou/openai — OpenAI Chat Completions, the OpenAI Responses API and OpenAI-compatible servers
 * (Ollama, vLLM, llama.cpp, LM Studio) as YouYou Agent model providers, built on the official SDK.
 */
export {
  type OpenAIChatProviderOptions,
  type OpenAICompatibleProviderOptions,
  openaiChatProvider,
  openaiCompatibleProvider,
} from './chat-provider.js';
export type { ConnectionOptions, OpenAIAccountOptions, ReasoningEffort } from './client.js';
export { isReasoningModel, OPENAI_MODELS, type OpenAIModelInfo } from './models.js';
export { meetsStrictRules } from './response-format.js';
export { type OpenAIResponsesProviderOptions, openaiResponsesProvider } from './responses-provider.js';
