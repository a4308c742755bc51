/** One block of a message's content. `reasoning` appears only in assistant messages. */
export type ContentBlock =
  | { type: 'text'; text: string }
  /** `data` is base64. */
  | { type: 'image'; data: string; mediaType: string }
  /** `signature` is the provider's opaque replay data. */
  | { type: 'reasoning'; text: string; signature?: string };

/** Whether an assistant message was produced to its end or interrupted. */
export type MessageStatus = 'complete' | 'incomplete';

/** One entry of the conversation context the model sees. */
export type Message =
  | { type: 'user'; content: ContentBlock[] }
  | { type: 'assistant'; content: ContentBlock[]; status: MessageStatus }
  | { type: 'tool_call'; callId: string; toolName: string; arguments: unknown }
  | { type: 'tool_result'; callId: string; content: string; isError: boolean }
  | { type: 'system'; content: string };

/**
 * Token counts a provider reports for one model call. The cache and reasoning counts are parts of the
 * input and output counts, not additions to them.
 */
export interface TokenUsage {
  /** The whole prompt, cached parts included. */
  inputTokens: number;
  /** The whole answer, reasoning included. */
  outputTokens: number;
  /** Prompt tokens read from the provider's cache (a subset of `inputTokens`). */
  cachedInputTokens?: number;
  /** Prompt tokens written to the provider's cache (a subset of `inputTokens`). */
  cacheWriteTokens?: number;
  /** Output tokens spent on reasoning (a subset of `outputTokens`). */
  reasoningTokens?: number;
}

/** A session's or a turn's usage: the sum of its model calls' `usage` events. */
export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** The model calls whose provider reported usage. */
  modelCalls: number;
  /** The sum of the calls' costs; absent while no call had a known price. */
  costUsd?: number;
}

/** One turn of a session's current context (`Session.turns()`): its id, as in its events, and the user's input. */
export interface SessionTurn {
  turnId: string;
  /** The user message that started the turn, as it entered the context. */
  input: ContentBlock[];
}

/** Options of `Agent.forkSession`. */
export interface ForkOptions {
  /** The last turn the fork keeps (its context as it stood when that turn ended); default: the whole history. */
  atTurnId?: string;
}

/** Options of `Session.rewind`. */
export interface RewindOptions {
  /** The context returns to the state before this turn: it and every later turn leave the context. */
  toTurnId: string;
}

/** What `Session.sendMessage` takes; a plain string is accepted as one text block. */
export interface UserInput {
  content: ContentBlock[];
}

/** Options of `Agent.newSession`. */
export interface SessionConfig {
  /** The model of this session; default: `AgentConfig.defaultModel`. */
  modelId?: string;
  /** Appended after `systemInstructions`, in the stable part of the system prompt. */
  systemPromptOverride?: string;
  /** Where this session's long-term memories are read and saved (one per user); default `AgentConfig.memoryNamespace`. */
  memoryNamespace?: string;
  /** Limits on what this session's model calls may spend (saved in the log, so a resumed session keeps them). */
  budget?: BudgetConfig;
  /** Registered model ids a failing call moves to, in order; default `AgentConfig.fallbackModels`. */
  fallbackModels?: string[];
}

/**
 * Limits on model calls, each checked before every call against what is spent plus the call's worst case (its
 * prompt tokens and its output limit); a call that could pass one is not made (BUDGET_EXCEEDED).
 */
export interface Budget {
  /** US dollars; a call to a model without pricing is refused while this is set. */
  maxCostUsd?: number;
  /** Input and output tokens together, cached ones included. */
  maxTokens?: number;
  maxModelCalls?: number;
}

/** A budget for each turn and one for the whole session, its resumes in other processes included. */
export interface BudgetConfig {
  turn?: Budget;
  session?: Budget;
}

/** A JSON Schema document. */
export type JsonSchema = { [key: string]: unknown };

/** The usage of a sub-agent's model calls: the same totals as any turn's. @deprecated Use `UsageTotals`. */
export type SubagentUsage = UsageTotals;

/** Why the runtime makes a model call; only `turn` calls offer tools. */
export type ChatPurpose = 'turn' | 'compaction' | 'memory_extraction' | 'memory_consolidation';

/** What a tool returns; `isError` results are shown to the model as failures. */
export interface ToolOutput {
  content: string;
  isError: boolean;
}

/** What the prompt says about a plugin. */
export interface PluginDescriptor {
  id: string;
  displayName: string;
  description: string;
}

/** A parsed call from the model: arguments already parsed by parseToolArguments. */
export interface ToolCallRequest {
  callId: string;
  toolName: string;
  arguments: unknown;
  /** Set when the raw text did not parse; `arguments` then holds the raw string. */
  parseError?: string;
}
