import type Anthropic from '@anthropic-ai/sdk';
import { AgentError, type ContentBlock, type Message } from '@youyou/agent';
import { isRecord } from './json-value.js';

/** A message of the Messages API as this adapter sends it: only the two conversation roles. */
export type ApiMessage = Anthropic.UserMessageParam | Anthropic.AssistantMessageParam;
type Block = Anthropic.ContentBlockParam;
type Role = ApiMessage['role'];

/** Put in front of a redacted thinking block's `data` in a reasoning block's signature, to tell it apart. */
export const REDACTED_THINKING_PREFIX = 'anthropic-redacted-thinking:';
/** The user turn put before a history that starts with an assistant message (the API wants a user first). */
export const HISTORY_START_TEXT = '(The earlier part of this conversation is not shown.)';
/** The user turn put after a history that ends with an assistant message. */
export const CONTINUE_TEXT = 'Continue.';
/** The result sent for a tool call that has none in the history (the API wants one for every call). */
export const MISSING_RESULT_TEXT = 'No result was recorded for this tool call.';

const IMAGE_MEDIA_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
type ImageMediaType = Anthropic.Base64ImageSource['media_type'];

/** What the history mapping needs to know about the request. */
export interface HistoryOptions {
  /** Send reasoning blocks back as thinking blocks (thinking is on); otherwise drop them. */
  replayThinking: boolean;
  /**
   * Indices into the runtime's messages: for each, the block sent last before that message's first block is
   * reported in `boundaryBlocks` (a cache breakpoint goes there). Thinking blocks are never reported.
   */
  boundaries?: readonly number[];
}

/** The mapped history and the blocks found at the asked boundaries, in the order of the boundaries. */
export interface MappedHistory {
  messages: ApiMessage[];
  boundaryBlocks: Block[];
}

/** A tool call's arguments as the object `tool_use.input` must be; unparsable text becomes `{}`. */
function toolInput(value: unknown): Record<string, unknown> {
  if (isRecord(value)) return value;
  if (typeof value === 'string') {
    try {
      const parsed: unknown = JSON.parse(value === '' ? '{}' : value);
      if (isRecord(parsed)) return parsed;
    } catch {
      // The call's result already tells the model its arguments were not JSON.
    }
  }
  return {};
}

function hasText(text: string): boolean {
  return text.trim() !== '';
}

function imageBlock(block: Extract<ContentBlock, { type: 'image' }>): Block {
  if (!IMAGE_MEDIA_TYPES.has(block.mediaType)) {
    throw new AgentError({
      code: 'PROVIDER_ERROR',
      message: `the Messages API does not take images of type '${block.mediaType}'; send image/jpeg, image/png, image/gif or image/webp`,
    });
  }
  return {
    type: 'image',
    source: { type: 'base64', media_type: block.mediaType as ImageMediaType, data: block.data },
  };
}

/** A reasoning block as the thinking block it came from; undefined when it cannot be sent back. */
function thinkingBlock(block: Extract<ContentBlock, { type: 'reasoning' }>): Block | undefined {
  const signature = block.signature;
  if (signature === undefined || signature === '') return undefined;
  if (signature.startsWith(REDACTED_THINKING_PREFIX)) {
    return { type: 'redacted_thinking', data: signature.slice(REDACTED_THINKING_PREFIX.length) };
  }
  return { type: 'thinking', thinking: block.text, signature };
}

function isThinking(block: Block): boolean {
  return block.type === 'thinking' || block.type === 'redacted_thinking';
}

/** The first tool_result of each call that comes after the call, keyed by call id. */
function pairResults(messages: readonly Message[]): {
  firstCall: Map<string, number>;
  result: Map<string, { index: number; message: Extract<Message, { type: 'tool_result' }> }>;
} {
  const firstCall = new Map<string, number>();
  const result = new Map<string, { index: number; message: Extract<Message, { type: 'tool_result' }> }>();
  messages.forEach((message, index) => {
    if (message.type === 'tool_call' && !firstCall.has(message.callId)) firstCall.set(message.callId, index);
    if (message.type === 'tool_result' && !result.has(message.callId)) {
      const call = firstCall.get(message.callId);
      if (call !== undefined && call < index) result.set(message.callId, { index, message });
    }
  });
  return { firstCall, result };
}

/**
 * Maps the runtime's whole history onto the Messages API's rules: roles alternate (same-role content is
 * merged), the first and the last message are the user's, system messages become `<system>` text on the
 * user side, every tool_use is answered by a tool_result at the start of the next user message (a missing
 * result gets a synthetic error, a result without its call becomes a text note), thinking blocks come first
 * in their assistant message, and no empty text block is sent.
 */
export function toAnthropicMessages(messages: readonly Message[], options: HistoryOptions): ApiMessage[] {
  return mapHistory(messages, options).messages;
}

/** `toAnthropicMessages`, also reporting the blocks that end the history before each of `options.boundaries`. */
export function mapHistory(messages: readonly Message[], options: HistoryOptions): MappedHistory {
  const { firstCall, result } = pairResults(messages);
  const out: ApiMessage[] = [];
  let current: { role: Role; content: Block[] } | undefined;
  let openCalls: string[] = [];
  const boundaries = new Set(options.boundaries ?? []);
  const boundaryBlocks: Block[] = [];
  /** Set when a boundary was passed: the block sent last is reported before the next block goes in. */
  let atBoundary = false;
  const lastSent = (): Block | undefined => {
    if (current !== undefined && current.content.length > 0) return current.content.at(-1);
    const previous = out.at(-1)?.content;
    return Array.isArray(previous) ? previous.at(-1) : undefined;
  };

  const close = (): void => {
    if (current === undefined) return;
    if (current.content.length > 0) out.push({ role: current.role, content: current.content });
    current = undefined;
    if (openCalls.length === 0) return;
    // The results of the calls just closed open the next user message, in call order.
    current = {
      role: 'user',
      content: openCalls.map((callId): Block => {
        const found = result.get(callId)?.message;
        const content = found?.content ?? MISSING_RESULT_TEXT;
        return {
          type: 'tool_result',
          tool_use_id: callId,
          ...(hasText(content) ? { content } : {}),
          is_error: found?.isError ?? true,
        };
      }),
    };
    openCalls = [];
  };

  const push = (role: Role, block: Block): void => {
    // Content after a tool_use goes into a new message, once the calls' results are in.
    if (current?.role !== role || (openCalls.length > 0 && block.type !== 'tool_use')) close();
    // Closing an assistant message with calls leaves their results as the current user message.
    if (current?.role !== role) {
      close();
      current = { role, content: [] };
    }
    const target = current;
    // Thinking blocks must lead their message; one that comes later cannot be sent.
    if (isThinking(block) && target.content.some((existing) => !isThinking(existing))) return;
    if (atBoundary) {
      atBoundary = false;
      const last = lastSent();
      if (last !== undefined && !isThinking(last)) boundaryBlocks.push(last);
    }
    target.content.push(block);
  };

  messages.forEach((message, index) => {
    if (boundaries.has(index)) atBoundary = true;
    switch (message.type) {
      case 'user':
        for (const block of message.content) {
          if (block.type === 'text' && hasText(block.text)) push('user', { type: 'text', text: block.text });
          else if (block.type === 'image') push('user', imageBlock(block));
        }
        break;
      case 'system':
        if (hasText(message.content))
          push('user', { type: 'text', text: `<system>\n${message.content}\n</system>` });
        break;
      case 'assistant': {
        const reasoning = message.content.filter((block) => block.type === 'reasoning');
        if (options.replayThinking) {
          for (const block of reasoning) {
            const thinking = thinkingBlock(block);
            if (thinking !== undefined) push('assistant', thinking);
          }
        }
        // An incomplete message is sent as it is: the notice after it tells the model it was cut.
        for (const block of message.content) {
          if (block.type === 'text' && hasText(block.text))
            push('assistant', { type: 'text', text: block.text });
        }
        break;
      }
      case 'tool_call':
        if (firstCall.get(message.callId) !== index) break; // a repeated id cannot be sent twice
        // A call after a result is the next reply of a tool loop, not part of the one before: merging them
        // would also rewrite the previous request's messages and void its cache.
        if (messages[index - 1]?.type === 'tool_result') close();
        push('assistant', {
          type: 'tool_use',
          id: message.callId,
          name: message.toolName,
          input: toolInput(message.arguments),
        });
        openCalls.push(message.callId);
        break;
      case 'tool_result': {
        if (result.get(message.callId)?.index === index) break; // sent with its call
        const note = `Result of tool call ${message.callId}, whose call is not in this conversation${message.isError ? ' (an error)' : ''}:\n${message.content}`;
        push('user', { type: 'text', text: `<system>\n${note}\n</system>` });
        break;
      }
    }
  });
  close();
  close();

  if (out[0]?.role === 'assistant')
    out.unshift({ role: 'user', content: [{ type: 'text', text: HISTORY_START_TEXT }] });
  if (out.length === 0 || out.at(-1)?.role === 'assistant') {
    out.push({ role: 'user', content: [{ type: 'text', text: CONTINUE_TEXT }] });
  }
  return { messages: out, boundaryBlocks };
}
