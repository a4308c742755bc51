import type Anthropic from '@anthropic-ai/sdk';
import type { ChatEvent, TokenUsage } from '@youyou/agent';
import { providerError, type Scrubber } from './errors.js';
import { REDACTED_THINKING_PREFIX } from './messages.js';

type StopReason = Extract<ChatEvent, { type: 'done' }>['stopReason'];

/** What is known of one content block while it streams, by its index. */
type OpenBlock =
  | { kind: 'text' }
  | { kind: 'thinking'; signature: string }
  | { kind: 'redacted'; data: string }
  | { kind: 'tool_use'; id: string; name: string; json: string }
  | { kind: 'other' };

/** Token counts as the stream reports them; `message_delta` may update any of them. */
interface UsageCounts {
  input: number;
  output: number;
  cacheRead: number | null;
  cacheCreation: number | null;
  thinking: number | null;
}

function stopReasonOf(reason: Anthropic.StopReason | null): StopReason {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'end_turn';
    case 'tool_use':
      return 'tool_use';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'max_tokens';
    default:
      return 'other';
  }
}

/**
 * The core's usage, where `inputTokens` is the whole prompt. Anthropic's `input_tokens` counts only the prompt
 * tokens after the last cache breakpoint: cache reads (`cache_read_input_tokens`) and cache writes
 * (`cache_creation_input_tokens`) come on top of it, so the prompt is their sum, and the two are reported as
 * `cachedInputTokens` and `cacheWriteTokens`. Thinking tokens are part of `output_tokens`.
 */
function tokenUsage(counts: UsageCounts): TokenUsage {
  const cacheRead = counts.cacheRead ?? 0;
  const cacheWrite = counts.cacheCreation ?? 0;
  const usage: TokenUsage = {
    inputTokens: counts.input + cacheRead + cacheWrite,
    outputTokens: counts.output,
  };
  if (counts.cacheRead !== null) usage.cachedInputTokens = cacheRead;
  if (counts.cacheCreation !== null) usage.cacheWriteTokens = cacheWrite;
  if (counts.thinking !== null) usage.reasoningTokens = Math.min(counts.thinking, counts.output);
  return usage;
}

function openBlock(block: Anthropic.RawContentBlockStartEvent['content_block']): OpenBlock {
  switch (block.type) {
    case 'text':
      return { kind: 'text' };
    case 'thinking':
      return { kind: 'thinking', signature: block.signature ?? '' };
    case 'redacted_thinking':
      return { kind: 'redacted', data: block.data };
    case 'tool_use':
      return { kind: 'tool_use', id: block.id, name: block.name, json: '' };
    default:
      // Server tool blocks and the like: the runtime has no use for them.
      return { kind: 'other' };
  }
}

/**
 * Turns the raw Messages stream events into ChatEvents: text and thinking deltas as they come, a tool
 * call once its block stops (its `input_json_delta` fragments joined; no input = `{}`), a thinking
 * block's signature when the block stops, then `usage` and `done` at `message_stop`. A stream that ends
 * before `message_stop` throws a retryable PROVIDER_ERROR.
 */
export async function* assembleChatEvents(options: {
  events: AsyncIterable<Anthropic.RawMessageStreamEvent>;
  scrub: Scrubber;
}): AsyncGenerator<ChatEvent, void, undefined> {
  const blocks = new Map<number, OpenBlock>();
  const counts: UsageCounts = { input: 0, output: 0, cacheRead: null, cacheCreation: null, thinking: null };
  let stopReason: Anthropic.StopReason | null = null;
  let responseModel: string | undefined;
  for await (const event of options.events) {
    switch (event.type) {
      case 'message_start': {
        const usage = event.message.usage;
        counts.input = usage.input_tokens;
        counts.output = usage.output_tokens;
        counts.cacheRead = usage.cache_read_input_tokens ?? null;
        counts.cacheCreation = usage.cache_creation_input_tokens ?? null;
        // The model that answered; a compatible server may leave it out or send junk.
        const model: unknown = event.message.model;
        if (typeof model === 'string' && model !== '') responseModel = model;
        break;
      }
      case 'content_block_start': {
        const block = openBlock(event.content_block);
        blocks.set(event.index, block);
        const start = event.content_block;
        if (start.type === 'text' && start.text !== '') yield { type: 'text_delta', text: start.text };
        if (start.type === 'thinking' && start.thinking !== '')
          yield { type: 'reasoning_delta', text: start.thinking };
        break;
      }
      case 'content_block_delta': {
        const block = blocks.get(event.index);
        const delta = event.delta;
        if (delta.type === 'text_delta') {
          if (delta.text !== '') yield { type: 'text_delta', text: delta.text };
        } else if (delta.type === 'thinking_delta') {
          if (delta.thinking !== '') yield { type: 'reasoning_delta', text: delta.thinking };
        } else if (delta.type === 'signature_delta') {
          if (block?.kind === 'thinking') block.signature += delta.signature;
          else blocks.set(event.index, { kind: 'thinking', signature: delta.signature });
        } else if (delta.type === 'input_json_delta' && block?.kind === 'tool_use') {
          block.json += delta.partial_json;
        }
        break;
      }
      case 'content_block_stop': {
        const block = blocks.get(event.index);
        blocks.delete(event.index);
        if (block?.kind === 'thinking' && block.signature !== '') {
          yield { type: 'reasoning_signature', signature: block.signature };
        } else if (block?.kind === 'redacted') {
          // Kept as a reasoning block with no text, so that it can be sent back as it came.
          yield { type: 'reasoning_signature', signature: `${REDACTED_THINKING_PREFIX}${block.data}` };
        } else if (block?.kind === 'tool_use') {
          const json = block.json.trim() === '' ? '{}' : block.json;
          yield { type: 'tool_call', callId: block.id, toolName: block.name, arguments: json };
        }
        break;
      }
      case 'message_delta': {
        stopReason = event.delta.stop_reason ?? stopReason;
        const usage = event.usage;
        counts.output = usage.output_tokens;
        if (usage.input_tokens !== null && usage.input_tokens !== undefined)
          counts.input = usage.input_tokens;
        counts.cacheRead = usage.cache_read_input_tokens ?? counts.cacheRead;
        counts.cacheCreation = usage.cache_creation_input_tokens ?? counts.cacheCreation;
        counts.thinking = usage.output_tokens_details?.thinking_tokens ?? counts.thinking;
        break;
      }
      case 'message_stop':
        yield { type: 'usage', usage: tokenUsage(counts) };
        yield responseModel === undefined
          ? { type: 'done', stopReason: stopReasonOf(stopReason) }
          : { type: 'done', stopReason: stopReasonOf(stopReason), responseModel };
        return;
    }
  }
  throw providerError({
    message: 'the Messages stream ended before message_stop: the connection was closed early',
    retryable: true,
    scrub: options.scrub,
  });
}
