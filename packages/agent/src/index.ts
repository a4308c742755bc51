/**
 * @youyou/agent — an embeddable LLM agent runtime. Register providers, tools, skills, plugins and
 * storages with `AgentBuilder`, then drive sessions. See the README for the event order of a turn.
 */

export type {
  ApprovalDecision,
  ApprovalRequest,
  Approver,
  InterruptedTurn,
  PendingToolCall,
  TurnRunOptions,
} from './kernel/approval-types.js';
export type { AgentConfig, EnvironmentContext, Personality, SkillDefinition } from './kernel/config.js';
export {
  AgentError,
  type AgentErrorCode,
  type AgentErrorOptions,
  isAgentError,
  type SourceComponent,
} from './kernel/error.js';
export type { AgentEvent, AgentEventPayload, AgentEventType } from './kernel/event.js';
export * as templates from './kernel/templates.js';
export type {
  Budget,
  BudgetConfig,
  ContentBlock,
  ForkOptions,
  JsonSchema,
  Message,
  MessageStatus,
  RewindOptions,
  SessionConfig,
  SessionTurn,
  SubagentUsage,
  TokenUsage,
  UsageTotals,
  UserInput,
} from './kernel/types.js';
export { type ForkLink, forkLinksOf, forkSourceOf } from './log/fork-links.js';
export {
  type SubagentLink,
  type SubagentParent,
  subagentLinksOf,
  subagentParentOf,
} from './log/subagent-links.js';
// What only a storage author needs (input checks, cursors, titles, the tagged-JSON codec) is on the
// `@youyou/agent/storage` entry.
export {
  OutputInvalidError,
  type OutputOptions,
  type SendMessageOptions,
} from './output/structured-output.js';
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
  ModelCallAnswerData,
  ModelCallOutcome,
  ModelCallRequestData,
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
export { Agent, type SessionSnapshot } from './session/agent.js';
export { AgentBuilder, type HasProvider, type NoProvider, TOOL_NAME_PATTERN } from './session/builder.js';
export { IMAGE_MAX_BYTES, IMAGE_MEDIA_TYPES } from './session/image-input.js';
export { Session } from './session/session.js';
export { ACTIVATE_SKILL_TOOL_NAME } from './skills/skill.js';
export {
  type LoadedSkills,
  type LoadSkillsOptions,
  loadSkillsFromDirectories,
  type SkillLoadProblem,
} from './skills/skill-loader.js';
export { InMemoryMemoryStorage, InMemorySessionStorage } from './storage/in-memory.js';
export { TOOL_OUTPUT_LIMIT_BYTES } from './tools/tool-dispatch.js';
export { RunningTurn, type TurnResult, type TurnStatus } from './turn/running-turn.js';
export { type AgentToolOptions, agentTool } from './turn/subagent.js';
export { usageCost, usageTotalsOfLog } from './usage/usage.js';
