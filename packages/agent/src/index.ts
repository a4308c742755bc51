/**
 * @youyou/agent — an embeddable LLM agent runtime. Register providers, tools, skills, plugins and
 * storages with `AgentBuilder`, then drive sessions. See the README for the event order of a turn.
 */
export { Agent, type SessionSnapshot } from './agent.js';
export type {
  ApprovalDecision,
  ApprovalRequest,
  Approver,
  PendingToolCall,
  TurnRunOptions,
} from './approval-types.js';
export { AgentBuilder, type HasProvider, type NoProvider, TOOL_NAME_PATTERN } from './builder.js';
export type { AgentConfig, EnvironmentContext, Personality, SkillDefinition } from './config.js';
export {
  AgentError,
  type AgentErrorCode,
  type AgentErrorOptions,
  isAgentError,
  type SourceComponent,
} from './error.js';
export type { AgentEvent, AgentEventPayload, AgentEventType } from './event.js';
export { IMAGE_MAX_BYTES, IMAGE_MEDIA_TYPES } from './image-input.js';
export type {
  ChatEvent,
  ChatPurpose,
  ChatRequest,
  HookEvent,
  HookHandler,
  HookPayload,
  HookResult,
  HookTapOptions,
  Memory,
  MemoryStorage,
  ModelCallOutcome,
  ModelCapabilities,
  ModelInfo,
  ModelPricing,
  ModelProvider,
  Observation,
  ObserveOptions,
  Observer,
  Plugin,
  PluginContext,
  ResponseFormat,
  SessionClaim,
  SessionEvent,
  SessionEventPayload,
  SessionPage,
  SessionStorage,
  SessionSummary,
  ToolHandler,
  ToolInput,
  ToolOutput,
  ToolSpec,
} from './ports/index.js';
export * as templates from './prompt/templates.js';
export { RunningTurn, type TurnResult, type TurnStatus } from './running-turn.js';
export { Session } from './session.js';
export { ACTIVATE_SKILL_TOOL_NAME } from './skill.js';
export {
  type LoadedSkills,
  type LoadSkillsOptions,
  loadSkillsFromDirectories,
  type SkillLoadProblem,
} from './skill-loader.js';
export { InMemoryMemoryStorage, InMemorySessionStorage } from './storage/in-memory.js';
// What only a storage author needs (input checks, cursors, titles, the tagged-JSON codec) is on the
// `@youyou/agent/storage` entry.
export {
  OutputInvalidError,
  type OutputOptions,
  type SendMessageOptions,
} from './structured-output.js';
export { type AgentToolOptions, agentTool } from './subagent.js';
export {
  type SubagentLink,
  type SubagentParent,
  subagentLinksOf,
  subagentParentOf,
} from './subagent-links.js';
export { TOOL_OUTPUT_LIMIT_BYTES } from './tool-dispatch.js';
export type {
  ContentBlock,
  JsonSchema,
  Message,
  MessageStatus,
  SessionConfig,
  SubagentUsage,
  TokenUsage,
  UsageTotals,
  UserInput,
} from './types.js';
export { usageCost } from './usage.js';
