/**
 * @youyou/ai-sdk — any Vercel AI SDK language model (`LanguageModelV3`, or V2) as a YouYou Agent model
 * provider: `aiSdkProvider({ id, models: [{ model, info }] })`.
 */
export type { SystemMessageMode } from './prompt.js';
export {
  type AiSdkLanguageModel,
  type AiSdkModelEntry,
  type AiSdkProviderOptions,
  aiSdkProvider,
} from './provider.js';
