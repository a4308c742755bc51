import type { ChatPurpose, JsonSchema, Message, TokenUsage } from '../kernel/types.js';

/** What a model can do; the runtime checks `vision` before it sends an image. */
export interface ModelCapabilities {
  toolUse: boolean;
  vision: boolean;
  streaming: boolean;
  /**
   * True when the provider honours `ChatRequest.responseFormat` for this model (natively, or by a forced
   * final tool), so its answer is held to the schema. Without it the runtime still asks for the format, but
   * also describes it in the system prompt, and memory extraction parses JSON out of prose. Default false.
   */
  structuredOutput?: boolean;
}

/** One model a provider offers. */
export interface ModelInfo {
  id: string;
  displayName: string;
  /** The model's context window in tokens; compaction is measured against it. */
  contextWindow: number;
  capabilities: ModelCapabilities;
  /** What the model costs; the runtime puts a `costUsd` on the usage of calls to a model that has it. */
  pricing?: ModelPricing;
  /**
   * The most tokens one answer may have (thinking included); a budget counts it as a call's worst case when the
   * request sets no `maxOutputTokens`. Unset, a budget counts 8192.
   */
  maxOutputTokens?: number;
}

/**
 * A model's prices in US dollars per million tokens. A cached read is priced at `cacheReadPerMillion`
 * (default: the input price) and a cache write at `cacheWritePerMillion` (default: the input price), each
 * instead of the input price, never on top of it.
 */
export interface ModelPricing {
  inputPerMillion: number;
  outputPerMillion: number;
  cacheReadPerMillion?: number;
  cacheWritePerMillion?: number;
}

/** A tool as the model is told about it. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/** Why the runtime makes a model call (a value type, defined with the others in kernel/types.ts). */
export type { ChatPurpose };

/**
 * Asks for an answer that is one JSON value valid against `schema` (structured output). A provider that
 * supports it maps it to its API (OpenAI `response_format` / `text.format`, Anthropic `output_config.format`
 * or a forced final tool, AI SDK `responseFormat`) and streams the JSON as `text_delta`s; one that does not
 * ignores it. The runtime checks the answer against the schema either way.
 */
export interface ResponseFormat {
  type: 'json_schema';
  /** A name for the format (`[A-Za-z0-9_-]`, at most 64 characters), as providers want one. */
  name: string;
  description?: string;
  /** A JSON Schema whose root is `type: 'object'`. */
  schema: JsonSchema;
  /**
   * Whether the provider should enforce the schema exactly where its API can; default true. A provider
   * with its own rules for strict schemas (OpenAI) enforces only schemas that meet them.
   */
  strict?: boolean;
}

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
  /**
   * The conversation, oldest first: an array of this call's own (pushing to it or cutting it changes neither the
   * session's context nor the next request). The message objects in it are the session's: read them, never
   * change them (a provider that needs another shape builds its own request from them).
   */
  messages: Message[];
  /**
   * The session the call belongs to (turn, compaction and memory calls alike); a provider may derive a cache
   * routing key from it (OpenAI `prompt_cache_key`). Absent on requests built outside a session.
   */
  sessionId?: string;
  /** The tools offered to the model: an array of this call's own, like `messages`; the specs in it are read-only. */
  tools: ToolSpec[];
  purpose: ChatPurpose;
  maxOutputTokens?: number;
  temperature?: number;
  /** The answer must be JSON valid against this format's schema; see ResponseFormat. */
  responseFormat?: ResponseFormat;
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
  /**
   * The end of the answer. `responseModel` is the model that answered as the provider's API reports it (it
   * may differ from the requested id: an alias resolved to a dated snapshot, a router's choice); unset when
   * the API does not say.
   */
  | { type: 'done'; stopReason: 'end_turn' | 'tool_use' | 'max_tokens' | 'other'; responseModel?: string };

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
