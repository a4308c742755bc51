import type { WireEvent, WireReply } from './wire-server.js';

/** Builders for the Anthropic Messages wire format (SSE events and error bodies), for provider tests. */

function event(name: string, data: Record<string, unknown>): WireEvent {
  return { event: name, data: { type: name, ...data } };
}

/** Token counts of `message_start`; anything left out is 0 or null. */
export interface StartUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

/** `message_start`, with the message's id, model and starting usage. */
export function messageStart(usage: StartUsage = {}, model = 'claude-sonnet-5-5'): WireEvent {
  return event('message_start', {
    message: {
      id: 'msg_test',
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: usage.input_tokens ?? 0,
        output_tokens: usage.output_tokens ?? 1,
        cache_read_input_tokens: usage.cache_read_input_tokens ?? null,
        cache_creation_input_tokens: usage.cache_creation_input_tokens ?? null,
      },
    },
  });
}

/** A text block: start, one `text_delta` per chunk, stop. */
export function textBlock(index: number, chunks: readonly string[]): WireEvent[] {
  return [
    event('content_block_start', { index, content_block: { type: 'text', text: '', citations: null } }),
    ...chunks.map((text) => event('content_block_delta', { index, delta: { type: 'text_delta', text } })),
    event('content_block_stop', { index }),
  ];
}

/** A thinking block: start, one `thinking_delta` per chunk, a `signature_delta`, stop. */
export function thinkingBlock(index: number, chunks: readonly string[], signature: string): WireEvent[] {
  return [
    event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }),
    ...chunks.map((thinking) =>
      event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking } }),
    ),
    event('content_block_delta', { index, delta: { type: 'signature_delta', signature } }),
    event('content_block_stop', { index }),
  ];
}

/** A redacted thinking block: start (its `data` is all there is), stop. */
export function redactedThinkingBlock(index: number, data: string): WireEvent[] {
  return [
    event('content_block_start', { index, content_block: { type: 'redacted_thinking', data } }),
    event('content_block_stop', { index }),
  ];
}

/** A tool_use block: start, one `input_json_delta` per fragment of the input's JSON text, stop. */
export function toolUseBlock(
  index: number,
  tool: { id: string; name: string; jsonChunks: readonly string[] },
): WireEvent[] {
  return [
    event('content_block_start', {
      index,
      content_block: {
        type: 'tool_use',
        id: tool.id,
        name: tool.name,
        input: {},
        caller: { type: 'direct' },
      },
    }),
    ...tool.jsonChunks.map((partial_json) =>
      event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } }),
    ),
    event('content_block_stop', { index }),
  ];
}

/** `message_delta` with the stop reason and the final output usage. */
export function messageDelta(
  stopReason: string,
  usage: { output_tokens?: number; thinking_tokens?: number } = {},
): WireEvent {
  return event('message_delta', {
    delta: { stop_reason: stopReason, stop_sequence: null, stop_details: null, container: null },
    usage: {
      output_tokens: usage.output_tokens ?? 5,
      input_tokens: null,
      cache_read_input_tokens: null,
      cache_creation_input_tokens: null,
      output_tokens_details:
        usage.thinking_tokens === undefined ? null : { thinking_tokens: usage.thinking_tokens },
      server_tool_use: null,
    },
  });
}

/** `message_stop`. */
export function messageStop(): WireEvent {
  return event('message_stop', {});
}

/** `ping`, which a client must ignore. */
export function ping(): WireEvent {
  return event('ping', {});
}

/** An `error` event inside the stream (e.g. `overloaded_error`). */
export function errorEvent(type: string, message: string): WireEvent {
  return { event: 'error', data: { type: 'error', error: { type, message } } };
}

/** A whole answer: `message_start`, the blocks, `message_delta`, `message_stop`. */
export function messageEvents(options: {
  blocks: readonly WireEvent[][];
  stopReason?: string;
  usage?: StartUsage;
  outputTokens?: number;
}): WireEvent[] {
  return [
    messageStart(options.usage),
    ping(),
    ...options.blocks.flat(),
    messageDelta(options.stopReason ?? 'end_turn', { output_tokens: options.outputTokens ?? 5 }),
    messageStop(),
  ];
}

/** A streamed answer of plain text, as one SSE reply. */
export function textReply(chunks: readonly string[], usage?: StartUsage): WireReply {
  return {
    type: 'sse',
    events: messageEvents({ blocks: [textBlock(0, chunks)], ...(usage ? { usage } : {}) }),
  };
}

/** An SSE reply of the given events. */
export function sseReply(
  events: readonly WireEvent[],
  extra: Partial<Extract<WireReply, { type: 'sse' }>> = {},
): WireReply {
  return { type: 'sse', events, ...extra };
}

/** An error answer as the API sends it: `{ type: 'error', error: { type, message } }`. */
export function errorReply(options: {
  status: number;
  type: string;
  message: string;
  headers?: Record<string, string>;
}): WireReply {
  return {
    type: 'json',
    status: options.status,
    body: { type: 'error', error: { type: options.type, message: options.message } },
    ...(options.headers ? { headers: options.headers } : {}),
  };
}
