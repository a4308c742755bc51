/**
 * Builders for the two OpenAI wire formats (Chat Completions chunks, Responses events) and checkers of
 * the request bodies against each API's rules, for tests that script test-support/wire-server.ts.
 */
import type { WireEvent, WireReply } from './wire-server.js';

// ---------------------------------------------------------------- Chat Completions

/** One streamed tool call: its id, name and the argument text split into fragments. */
export interface WireToolCall {
  id: string;
  name: string;
  fragments: string[];
}

/** Token counts of a usage report, in the API's own terms (`prompt` includes `cached`). */
export interface WireUsage {
  prompt: number;
  completion: number;
  cached?: number;
  reasoning?: number;
}

/** A `chat.completion.chunk` with one choice; `usage` makes it carry a usage report too. */
export function chatChunk(options: {
  delta?: Record<string, unknown>;
  finishReason?: string | null;
  usage?: WireUsage;
}): WireEvent {
  return {
    data: {
      id: 'chatcmpl-wire',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'wire-model',
      choices: [
        { index: 0, delta: options.delta ?? {}, logprobs: null, finish_reason: options.finishReason ?? null },
      ],
      ...(options.usage === undefined ? {} : { usage: chatUsageObject(options.usage) }),
    },
  };
}

function chatUsageObject(usage: WireUsage): Record<string, unknown> {
  return {
    prompt_tokens: usage.prompt,
    completion_tokens: usage.completion,
    total_tokens: usage.prompt + usage.completion,
    prompt_tokens_details: { cached_tokens: usage.cached ?? 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: usage.reasoning ?? 0, audio_tokens: 0 },
  };
}

/** The last chunk of a stream asked for `include_usage`: no choices, only usage. */
export function chatUsageChunk(usage: WireUsage): WireEvent {
  return {
    data: {
      id: 'chatcmpl-wire',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'wire-model',
      choices: [],
      usage: chatUsageObject(usage),
    },
  };
}

/** The `[DONE]` sentinel that ends a Chat Completions stream. */
export const CHAT_DONE: WireEvent = { data: '[DONE]' };

/** The opening chunk (role only) and one chunk per text part, without a finish. */
export function chatTextChunks(parts: readonly string[]): WireEvent[] {
  return [
    chatChunk({ delta: { role: 'assistant', content: '' } }),
    ...parts.map((part) => chatChunk({ delta: { content: part } })),
  ];
}

/** Chunks of reasoning text under a compatible server's field name. */
export function chatReasoningChunks(
  parts: readonly string[],
  field: 'reasoning_content' | 'reasoning' = 'reasoning_content',
): WireEvent[] {
  return parts.map((part) => chatChunk({ delta: { [field]: part } }));
}

/** The closing chunks: the finish reason, the usage report (unless `null`) and `[DONE]`. */
export function chatFinish(options: { finishReason?: string; usage?: WireUsage | null } = {}): WireEvent[] {
  const usage = options.usage === undefined ? { prompt: 20, completion: 5 } : options.usage;
  return [
    chatChunk({ finishReason: options.finishReason ?? 'stop' }),
    ...(usage === null ? [] : [chatUsageChunk(usage)]),
    CHAT_DONE,
  ];
}

/**
 * Tool-call chunks as OpenAI streams parallel calls: a first chunk per call with id and name, then the
 * argument fragments of all calls interleaved, each keyed by its call's `index`.
 */
export function chatToolCallChunks(calls: readonly WireToolCall[]): WireEvent[] {
  const events: WireEvent[] = [chatChunk({ delta: { role: 'assistant', content: null } })];
  calls.forEach((call, index) => {
    events.push(
      chatChunk({
        delta: {
          tool_calls: [
            { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } },
          ],
        },
      }),
    );
  });
  const longest = Math.max(0, ...calls.map((call) => call.fragments.length));
  for (let position = 0; position < longest; position += 1) {
    calls.forEach((call, index) => {
      const fragment = call.fragments[position];
      if (fragment === undefined) return;
      events.push(chatChunk({ delta: { tool_calls: [{ index, function: { arguments: fragment } }] } }));
    });
  }
  return events;
}

// ---------------------------------------------------------------- Responses

/** One Responses stream event; `sequence_number` is filled in by `responsesReply`. */
export function responsesEvent(type: string, fields: Record<string, unknown> = {}): WireEvent {
  return { event: type, data: { type, sequence_number: 0, ...fields } };
}

/** A `Response` object as the stream's first and last events carry it. */
export function responseObject(options: {
  status?: 'in_progress' | 'completed' | 'incomplete' | 'failed';
  usage?: WireUsage;
  incompleteReason?: 'max_output_tokens' | 'content_filter';
  error?: { code: string; message: string };
}): Record<string, unknown> {
  const usage = options.usage;
  return {
    id: 'resp_wire',
    object: 'response',
    created_at: 1_700_000_000,
    model: 'wire-model',
    status: options.status ?? 'in_progress',
    output: [],
    error: options.error ?? null,
    incomplete_details: options.incompleteReason === undefined ? null : { reason: options.incompleteReason },
    usage:
      usage === undefined
        ? null
        : {
            input_tokens: usage.prompt,
            input_tokens_details: { cached_tokens: usage.cached ?? 0 },
            output_tokens: usage.completion,
            output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
            total_tokens: usage.prompt + usage.completion,
          },
  };
}

/** The events of one assistant message item, its text streamed in `parts`. */
export function responsesText(
  parts: readonly string[],
  options: { itemId?: string; outputIndex?: number } = {},
): WireEvent[] {
  const item_id = options.itemId ?? 'msg_wire';
  const output_index = options.outputIndex ?? 0;
  const text = parts.join('');
  const item = { id: item_id, type: 'message', role: 'assistant', status: 'in_progress', content: [] };
  return [
    responsesEvent('response.output_item.added', { output_index, item }),
    responsesEvent('response.content_part.added', {
      item_id,
      output_index,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    }),
    ...parts.map((delta) =>
      responsesEvent('response.output_text.delta', {
        item_id,
        output_index,
        content_index: 0,
        delta,
        logprobs: [],
      }),
    ),
    responsesEvent('response.output_text.done', {
      item_id,
      output_index,
      content_index: 0,
      text,
      logprobs: [],
    }),
    responsesEvent('response.output_item.done', {
      output_index,
      item: { ...item, status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] },
    }),
  ];
}

/** The events of one reasoning item: each summary part streamed in deltas, then its encrypted content. */
export function responsesReasoning(options: {
  summary: readonly (readonly string[])[];
  encryptedContent?: string;
  itemId?: string;
  outputIndex?: number;
}): WireEvent[] {
  const item_id = options.itemId ?? 'rs_wire';
  const output_index = options.outputIndex ?? 0;
  const events: WireEvent[] = [
    responsesEvent('response.output_item.added', {
      output_index,
      item: { id: item_id, type: 'reasoning', summary: [] },
    }),
  ];
  options.summary.forEach((deltas, summary_index) => {
    events.push(
      responsesEvent('response.reasoning_summary_part.added', {
        item_id,
        output_index,
        summary_index,
        part: { type: 'summary_text', text: '' },
      }),
      ...deltas.map((delta) =>
        responsesEvent('response.reasoning_summary_text.delta', {
          item_id,
          output_index,
          summary_index,
          delta,
        }),
      ),
      responsesEvent('response.reasoning_summary_text.done', {
        item_id,
        output_index,
        summary_index,
        text: deltas.join(''),
      }),
    );
  });
  events.push(
    responsesEvent('response.output_item.done', {
      output_index,
      item: {
        id: item_id,
        type: 'reasoning',
        summary: options.summary.map((deltas) => ({ type: 'summary_text', text: deltas.join('') })),
        ...(options.encryptedContent === undefined ? {} : { encrypted_content: options.encryptedContent }),
      },
    }),
  );
  return events;
}

/** The events of one function call item, its arguments streamed in fragments. */
export function responsesFunctionCall(
  call: WireToolCall,
  options: { outputIndex?: number } = {},
): WireEvent[] {
  const item_id = `fc_${call.id}`;
  const output_index = options.outputIndex ?? 0;
  const base = { id: item_id, type: 'function_call', call_id: call.id, name: call.name };
  const text = call.fragments.join('');
  return [
    responsesEvent('response.output_item.added', {
      output_index,
      item: { ...base, arguments: '', status: 'in_progress' },
    }),
    ...call.fragments.map((delta) =>
      responsesEvent('response.function_call_arguments.delta', { item_id, output_index, delta }),
    ),
    responsesEvent('response.function_call_arguments.done', { item_id, output_index, arguments: text }),
    responsesEvent('response.output_item.done', {
      output_index,
      item: { ...base, arguments: text, status: 'completed' },
    }),
  ];
}

/** `response.created` and `response.in_progress`, the opening of every Responses stream. */
export function responsesOpening(): WireEvent[] {
  return [
    responsesEvent('response.created', { response: responseObject({}) }),
    responsesEvent('response.in_progress', { response: responseObject({}) }),
  ];
}

/** The final event: `response.completed`, or `response.incomplete` when a reason is given. */
export function responsesCompleted(
  options: { usage?: WireUsage; incompleteReason?: 'max_output_tokens' | 'content_filter' } = {},
): WireEvent {
  const usage = options.usage ?? { prompt: 20, completion: 5 };
  if (options.incompleteReason !== undefined) {
    return responsesEvent('response.incomplete', {
      response: responseObject({ status: 'incomplete', usage, incompleteReason: options.incompleteReason }),
    });
  }
  return responsesEvent('response.completed', { response: responseObject({ status: 'completed', usage }) });
}

/** Numbers the Responses events of a stream in order, as the API does. */
export function numberEvents(events: readonly WireEvent[]): WireEvent[] {
  return events.map((event, index) => {
    if ('raw' in event || typeof event.data !== 'object' || event.data === null) return event;
    if (!('sequence_number' in event.data)) return event;
    return { ...event, data: { ...(event.data as Record<string, unknown>), sequence_number: index } };
  });
}

// ---------------------------------------------------------------- replies

/** An SSE reply of these events. */
export function sseReply(
  events: readonly WireEvent[],
  extra: { dropAfter?: number; hang?: boolean } = {},
): WireReply {
  return { type: 'sse', events: numberEvents(events), ...extra };
}

/** An OpenAI-style JSON error reply. */
export function errorReply(options: {
  status: number;
  message: string;
  type?: string;
  code?: string | null;
  headers?: Record<string, string>;
}): WireReply {
  return {
    type: 'json',
    status: options.status,
    body: {
      error: {
        message: options.message,
        type: options.type ?? 'invalid_request_error',
        param: null,
        code: options.code ?? null,
      },
    },
    ...(options.headers === undefined ? {} : { headers: options.headers }),
  };
}

// ---------------------------------------------------------------- request checks

type Json = Record<string, unknown>;

function asRecords(value: unknown): Json[] {
  return Array.isArray(value)
    ? value.filter((item): item is Json => typeof item === 'object' && item !== null)
    : [];
}

/**
 * What a Chat Completions request body breaks of the API's rules: roles, content, and the pairing of
 * every tool message with a preceding assistant `tool_calls` entry (and of every call with a result).
 */
export function chatRequestProblems(body: unknown): string[] {
  const problems: string[] = [];
  const messages = asRecords((body as Json | undefined)?.messages);
  if (messages.length === 0) problems.push('no messages');
  let open: Set<string> | undefined;
  const answered = new Set<string>();
  messages.forEach((message, index) => {
    const role = message.role;
    if (!['system', 'developer', 'user', 'assistant', 'tool'].includes(String(role))) {
      problems.push(`message ${index}: invalid role ${String(role)}`);
    }
    if (role === 'tool') {
      const id = String(message.tool_call_id);
      if (open === undefined || !open.has(id))
        problems.push(`message ${index}: tool result ${id} has no call before it`);
      if (answered.has(id)) problems.push(`message ${index}: second result for ${id}`);
      if (typeof message.content !== 'string')
        problems.push(`message ${index}: tool content is not a string`);
      open?.delete(id);
      answered.add(id);
      return;
    }
    if (open !== undefined && open.size > 0)
      problems.push(`message ${index}: calls ${[...open].join(', ')} have no result`);
    open = undefined;
    if (role === 'assistant') {
      const calls = asRecords(message.tool_calls);
      if (calls.length > 0) {
        open = new Set(calls.map((call) => String(call.id)));
        for (const call of calls) {
          const fn = call.function as Json | undefined;
          if (call.type !== 'function' || typeof fn?.name !== 'string' || typeof fn.arguments !== 'string') {
            problems.push(`message ${index}: malformed tool call`);
          }
        }
      } else if (typeof message.content !== 'string' || message.content === '') {
        problems.push(`message ${index}: assistant message without content or tool calls`);
      }
    } else if (message.content === undefined || message.content === null || message.content === '') {
      problems.push(`message ${index}: ${String(role)} message without content`);
    }
  });
  if (open !== undefined && open.size > 0)
    problems.push(`calls ${[...open].join(', ')} have no result at the end`);
  return problems;
}

/**
 * What a Responses request body breaks of the API's rules: item types and roles, every
 * `function_call_output` after its `function_call` (and every call answered), reasoning items carrying
 * encrypted content and followed by the output they led to.
 */
export function responsesRequestProblems(body: unknown): string[] {
  const problems: string[] = [];
  const input = asRecords((body as Json | undefined)?.input);
  if (input.length === 0) problems.push('no input items');
  const called = new Set<string>();
  const answered = new Set<string>();
  input.forEach((item, index) => {
    const type = item.type ?? 'message';
    if (type === 'message') {
      if (!['user', 'assistant', 'system', 'developer'].includes(String(item.role))) {
        problems.push(`item ${index}: invalid role ${String(item.role)}`);
      }
      if (item.content === undefined || item.content === '')
        problems.push(`item ${index}: message without content`);
    } else if (type === 'function_call') {
      called.add(String(item.call_id));
    } else if (type === 'function_call_output') {
      const id = String(item.call_id);
      if (!called.has(id)) problems.push(`item ${index}: output ${id} has no call before it`);
      if (answered.has(id)) problems.push(`item ${index}: second output for ${id}`);
      answered.add(id);
    } else if (type === 'reasoning') {
      if (typeof item.encrypted_content !== 'string')
        problems.push(`item ${index}: reasoning without encrypted content`);
      const next = input[index + 1];
      const followed =
        next !== undefined &&
        (next.type === 'reasoning' ||
          next.type === 'function_call' ||
          ((next.type ?? 'message') === 'message' && next.role === 'assistant'));
      if (!followed) problems.push(`item ${index}: reasoning item without its following output`);
    } else {
      problems.push(`item ${index}: unexpected item type ${String(type)}`);
    }
  });
  for (const id of called) if (!answered.has(id)) problems.push(`call ${id} has no output`);
  return problems;
}
