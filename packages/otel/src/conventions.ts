/**
 * The OpenTelemetry GenAI semantic-convention names this package emits (semantic conventions v1.37+, "Development"
 * status), and the translation of the runtime's messages into the conventions' message format.
 */

import type { ChatRequest, Message, TokenUsage } from '@youyou/agent';

/** Attribute names of the GenAI conventions. */
export const ATTR = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  /** The name used before `gen_ai.provider.name` (conventions up to v1.36); emitted too, for older backends. */
  system: 'gen_ai.system',
  requestModel: 'gen_ai.request.model',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  requestTemperature: 'gen_ai.request.temperature',
  responseModel: 'gen_ai.response.model',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheCreationInputTokens: 'gen_ai.usage.cache_creation.input_tokens',
  reasoningOutputTokens: 'gen_ai.usage.reasoning.output_tokens',
  conversationId: 'gen_ai.conversation.id',
  agentName: 'gen_ai.agent.name',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  systemInstructions: 'gen_ai.system_instructions',
  tokenType: 'gen_ai.token.type',
  errorType: 'error.type',
  /** Not a convention: why the runtime made the model call (turn, compaction, memory_extraction, ...). */
  purpose: 'youyou.chat.purpose',
  /** Not a convention: how a model call ended (completed, failed, cancelled). */
  outcome: 'youyou.chat.outcome',
  /** Not a convention: how a turn ended (completed, failed, cancelled). */
  turnStatus: 'youyou.turn.status',
} as const;

/** Operation names of the conventions. */
export const OPERATION = {
  invokeAgent: 'invoke_agent',
  chat: 'chat',
  executeTool: 'execute_tool',
} as const;

/** The metric names and their recommended bucket boundaries (the conventions' advice). */
export const METRIC = {
  tokenUsage: 'gen_ai.client.token.usage',
  operationDuration: 'gen_ai.client.operation.duration',
  tokenBuckets: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864],
  durationBuckets: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92],
} as const;

/** The `error.type` of a tool call that failed: the AgentError code the runtime uses for tool failures. */
export const TOOL_FAILURE_TYPE = 'TOOL_EXECUTION_ERROR';

/** One part of a message in the conventions' format. */
type Part =
  | { type: 'text'; content: string }
  | { type: 'reasoning'; content: string }
  | { type: 'blob'; modality: 'image'; mime_type: string }
  | { type: 'tool_call'; id: string; name: string; arguments: unknown }
  | { type: 'tool_call_response'; id: string; response: string };

/** One message in the conventions' format. */
interface ConventionMessage {
  role: 'user' | 'assistant' | 'tool' | 'system';
  parts: Part[];
  finish_reason?: string;
}

function blockParts(content: Extract<Message, { type: 'user' }>['content']): Part[] {
  return content.map((block): Part => {
    if (block.type === 'text') return { type: 'text', content: block.text };
    if (block.type === 'reasoning') return { type: 'reasoning', content: block.text };
    // Image bytes stay out of telemetry: their size and content are not worth a span attribute.
    return { type: 'blob', modality: 'image', mime_type: block.mediaType };
  });
}

/** The request's messages as `gen_ai.input.messages` JSON. */
export function inputMessagesJson(messages: readonly Message[]): string {
  const converted: ConventionMessage[] = messages.map(conventionMessage);
  return JSON.stringify(converted);
}

function conventionMessage(message: Message): ConventionMessage {
  switch (message.type) {
    case 'user':
      return { role: 'user', parts: blockParts(message.content) };
    case 'assistant':
      return { role: 'assistant', parts: blockParts(message.content) };
    case 'tool_call':
      return {
        role: 'assistant',
        parts: [
          { type: 'tool_call', id: message.callId, name: message.toolName, arguments: message.arguments },
        ],
      };
    case 'tool_result':
      return {
        role: 'tool',
        parts: [{ type: 'tool_call_response', id: message.callId, response: message.content }],
      };
    case 'system':
      return { role: 'system', parts: [{ type: 'text', content: message.content }] };
  }
}

/** The request's system prompt as `gen_ai.system_instructions` JSON. */
export function systemInstructionsJson(request: Readonly<ChatRequest>): string {
  return JSON.stringify([{ type: 'text', content: request.systemPrompt }]);
}

/** A model answer as `gen_ai.output.messages` JSON. */
export function outputMessagesJson(answer: {
  text: string;
  toolCalls: readonly { callId: string; toolName: string; arguments: string }[];
  finishReason: string | undefined;
}): string {
  const parts: Part[] = answer.text === '' ? [] : [{ type: 'text', content: answer.text }];
  for (const call of answer.toolCalls) {
    parts.push({ type: 'tool_call', id: call.callId, name: call.toolName, arguments: call.arguments });
  }
  const message: ConventionMessage = { role: 'assistant', parts };
  if (answer.finishReason !== undefined) message.finish_reason = answer.finishReason;
  return JSON.stringify([message]);
}

/** Cache-write tokens, reported by providers once TokenUsage carries `cacheWriteTokens`. */
export function cacheWriteTokens(usage: TokenUsage): number | undefined {
  const value = (usage as TokenUsage & { cacheWriteTokens?: unknown }).cacheWriteTokens;
  return typeof value === 'number' ? value : undefined;
}
