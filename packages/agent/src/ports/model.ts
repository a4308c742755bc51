import type { JsonSchema, Message, TokenUsage } from '../types.js';

/** What a model can do; the runtime checks `vision` before it sends an image. */
export interface ModelCapabilities {
  toolUse: boolean;
  vision: boolean;
  streaming: boolean;
}

/** One model a provider offers. */
export interface ModelInfo {
  id: string;
  displayName: string;
  /** The model's context window in tokens; compaction is measured against it. */
  contextWindow: number;
  capabilities: ModelCapabilities;
}

/** A tool as the model is told about it. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/** Why the runtime makes a model call; only `turn` calls offer tools. */
export type ChatPurpose = 'turn' | 'compaction' | 'memory_extraction' | 'memory_consolidation';

/** One model call. */
export interface ChatRequest {
  modelId: string;
  /**
   * The system prompt to send first: on `turn` calls the stable part alone (a deviation from SPEC §5.8, see
   * docs/decisions.md), so that it stays byte-identical across the turns of a session and a prefix cache holds.
   */
  systemPrompt: string;
  /**
   * The stable part changes only after a compaction, so a provider may cache it. The dynamic part (memories,
   * environment, TurnStart sections) is already in `messages`, as the `system` message right before the latest
   * user message (first when there is none); it is given here so that a provider can tell it apart, never to be
   * sent a second time.
   */
  systemPromptParts: { stable: string; dynamic: string };
  messages: Message[];
  /**
   * The session the call belongs to (turn, compaction and memory calls alike); a provider may derive a cache
   * routing key from it (OpenAI `prompt_cache_key`). Absent on requests built outside a session.
   */
  sessionId?: string;
  tools: ToolSpec[];
  purpose: ChatPurpose;
  maxOutputTokens?: number;
  temperature?: number;
}

/** One event of a model's streamed answer. */
export type ChatEvent =
  | { type: 'text_delta'; text: string }
  | { type: 'reasoning_delta'; text: string }
  /** Closes the current reasoning block with the provider's opaque replay data. */
  | { type: 'reasoning_signature'; signature: string }
  /** A whole tool call; `arguments` is the complete raw JSON text. */
  | { type: 'tool_call'; callId: string; toolName: string; arguments: string }
  | { type: 'usage'; usage: TokenUsage }
  | { type: 'done'; stopReason: 'end_turn' | 'tool_use' | 'max_tokens' | 'other' };

/**
 * A model backend. `chat` streams one answer; it signals failure by throwing an AgentError
 * PROVIDER_ERROR (`retryable` for 429/5xx/network); any other thrown error is wrapped as a
 * non-retryable PROVIDER_ERROR. Retrying is the provider's job, before its first event only.
 */
export interface ModelProvider {
  readonly id: string;
  readonly models: readonly ModelInfo[];
  chat(
    request: ChatRequest,
    signal: AbortSignal,
  ): AsyncIterable<ChatEvent> | Promise<AsyncIterable<ChatEvent>>;
}
