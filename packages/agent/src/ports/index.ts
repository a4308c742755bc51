export type {
  ChatEvent,
  ChatPurpose,
  ChatRequest,
  ModelCapabilities,
  ModelInfo,
  ModelPricing,
  ModelProvider,
  ResponseFormat,
  ToolSpec,
} from './model.js';
export type {
  HookEvent,
  HookHandler,
  HookPayload,
  HookResult,
  HookTapOptions,
  ModelCallAnswerData,
  ModelCallOutcome,
  ModelCallRequestData,
  Observation,
  ObserveOptions,
  Observer,
  Plugin,
  PluginContext,
} from './plugin.js';
export type {
  Memory,
  MemoryStorage,
  SessionClaim,
  SessionEvent,
  SessionEventPayload,
  SessionPage,
  SessionStorage,
  SessionSummary,
} from './storage.js';
export type { ToolHandler, ToolInput, ToolOutput } from './tool.js';
