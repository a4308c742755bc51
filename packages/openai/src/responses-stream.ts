import type { ChatEvent, TokenUsage } from '@youyou/agent';
import type { Response, ResponseStreamEvent, ResponseUsage } from 'openai/resources/responses/responses';
import { countOf } from './chat-stream.js';
import {
  closeQuietly,
  type ErrorContext,
  streamEndedEarly,
  streamFailure,
  toProviderError,
} from './errors.js';
import { reasoningSignature } from './responses-input.js';

type StopReason = Extract<ChatEvent, { type: 'done' }>['stopReason'];

/**
 * Maps a Responses usage report: `input_tokens` is the whole prompt and `cached_tokens` the part read from the
 * cache; `output_tokens` includes `reasoning_tokens`. Parts are kept within their totals, as in `chatUsage`.
 */
export function responsesUsage(usage: ResponseUsage): TokenUsage {
  const inputTokens = countOf(usage.input_tokens);
  const outputTokens = countOf(usage.output_tokens);
  const cached = usage.input_tokens_details?.cached_tokens;
  const reasoning = usage.output_tokens_details?.reasoning_tokens;
  return {
    inputTokens,
    outputTokens,
    ...(typeof cached === 'number' ? { cachedInputTokens: Math.min(countOf(cached), inputTokens) } : {}),
    ...(typeof reasoning === 'number' ? { reasoningTokens: Math.min(countOf(reasoning), outputTokens) } : {}),
  };
}

/** A function call being assembled, keyed by its output item id. */
interface PartialCall {
  callId: string;
  name: string;
  arguments: string;
  emitted: boolean;
}

/** The state of one streamed response. */
class ResponseAssembly {
  readonly calls = new Map<string, PartialCall>();
  /** `item_id:summary_index` of the last reasoning summary delta, to put a blank line between parts. */
  lastSummaryPart: { itemId: string; index: number } | undefined;
  finished: Response | undefined;
  /** The `model` of the latest response event that carried one: the model that answered. */
  responseModel: string | undefined;

  callOf(itemId: string): PartialCall {
    let call = this.calls.get(itemId);
    if (call === undefined) {
      call = { callId: itemId, name: '', arguments: '', emitted: false };
      this.calls.set(itemId, call);
    }
    return call;
  }
}

function stopReasonOf(response: Response, sawToolCall: boolean): StopReason {
  if (response.status === 'incomplete') {
    return response.incomplete_details?.reason === 'max_output_tokens' ? 'max_tokens' : 'other';
  }
  return sawToolCall ? 'tool_use' : 'end_turn';
}

/** The ChatEvents one Responses stream event stands for; throws for a failure the stream reports. */
function* translate(options: {
  event: ResponseStreamEvent;
  state: ResponseAssembly;
  errorContext: ErrorContext;
}): Generator<ChatEvent, void, undefined> {
  const { event, state, errorContext } = options;
  switch (event.type) {
    case 'response.output_text.delta':
    case 'response.refusal.delta':
      if (event.delta !== '') yield { type: 'text_delta', text: event.delta };
      break;
    case 'response.reasoning_summary_text.delta': {
      const last = state.lastSummaryPart;
      if (last !== undefined && last.itemId === event.item_id && last.index !== event.summary_index) {
        yield { type: 'reasoning_delta', text: '\n\n' };
      }
      state.lastSummaryPart = { itemId: event.item_id, index: event.summary_index };
      if (event.delta !== '') yield { type: 'reasoning_delta', text: event.delta };
      break;
    }
    case 'response.reasoning_text.delta':
      if (event.delta !== '') yield { type: 'reasoning_delta', text: event.delta };
      break;
    case 'response.output_item.added':
      if (event.item.type === 'function_call') {
        const call = state.callOf(event.item.id ?? event.item.call_id);
        call.callId = event.item.call_id;
        call.name = event.item.name;
        call.arguments = event.item.arguments ?? '';
      }
      break;
    case 'response.function_call_arguments.delta':
      state.callOf(event.item_id).arguments += event.delta;
      break;
    case 'response.output_item.done': {
      const item = event.item;
      if (item.type === 'function_call') {
        const call = state.callOf(item.id ?? item.call_id);
        call.emitted = true;
        yield {
          type: 'tool_call',
          callId: item.call_id,
          toolName: item.name,
          arguments:
            typeof item.arguments === 'string' && item.arguments !== '' ? item.arguments : call.arguments,
        };
      } else if (item.type === 'reasoning') {
        const signature = reasoningSignature(item);
        if (signature !== undefined) yield { type: 'reasoning_signature', signature };
      }
      break;
    }
    case 'response.completed':
    case 'response.incomplete':
      state.finished = event.response;
      break;
    case 'response.failed': {
      const failure = event.response.error;
      throw streamFailure({
        context: errorContext,
        message: failure?.message ?? 'the response failed',
        code: failure?.code,
      });
    }
    case 'error':
      throw streamFailure({ context: errorContext, message: event.message, code: event.code });
    default:
      break;
  }
}

/**
 * Notes the answering model from the events that carry the whole response (`response.created`,
 * `response.in_progress`, `response.completed`, ...); a compatible server may leave it out or send junk.
 */
function noteResponseModel(state: ResponseAssembly, event: ResponseStreamEvent): void {
  const response: unknown = (event as { response?: unknown }).response;
  if (typeof response !== 'object' || response === null) return;
  const model: unknown = (response as { model?: unknown }).model;
  if (typeof model === 'string' && model !== '') state.responseModel = model;
}

/**
 * Turns a Responses event stream into ChatEvents: text and reasoning-summary deltas as they come, each
 * tool call when its item is done, each reasoning item's encrypted content as a `reasoning_signature`,
 * then `usage` and `done`. A stream that ends before `response.completed` was cut off (retryable).
 */
export async function* responsesEvents(options: {
  events: AsyncIterable<ResponseStreamEvent>;
  signal: AbortSignal;
  errorContext: ErrorContext;
}): AsyncGenerator<ChatEvent, void, undefined> {
  const state = new ResponseAssembly();
  let sawToolCall = false;
  const iterator = options.events[Symbol.asyncIterator]();
  try {
    while (true) {
      let step: IteratorResult<ResponseStreamEvent>;
      try {
        step = await iterator.next();
      } catch (error) {
        throw toProviderError(error, options.errorContext);
      }
      if (step.done) break;
      // Whatever follows the final event is read (so the connection can be reused) and ignored.
      if (state.finished !== undefined) continue;
      noteResponseModel(state, step.value);
      for (const event of translate({ event: step.value, state, errorContext: options.errorContext })) {
        if (event.type === 'tool_call') sawToolCall = true;
        yield event;
      }
    }
  } finally {
    // Closes the HTTP stream when the caller stops early; a failure to close hides nothing of the answer.
    await closeQuietly(iterator);
  }
  if (options.signal.aborted) return;
  const response = state.finished;
  if (response === undefined) throw streamEndedEarly(options.errorContext);
  // A call whose item never reported done still counts once the response is complete.
  for (const call of state.calls.values()) {
    if (call.emitted || call.name === '') continue;
    sawToolCall = true;
    yield { type: 'tool_call', callId: call.callId, toolName: call.name, arguments: call.arguments };
  }
  if (response.usage) yield { type: 'usage', usage: responsesUsage(response.usage) };
  const stopReason = stopReasonOf(response, sawToolCall);
  const responseModel = state.responseModel;
  yield responseModel === undefined
    ? { type: 'done', stopReason }
    : { type: 'done', stopReason, responseModel };
}
