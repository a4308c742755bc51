/** Maps the stream parts of an AI SDK language model (V3, and V2 where it differs) to YouYou ChatEvents. */
import type {
  LanguageModelV2FinishReason,
  LanguageModelV2StreamPart,
  LanguageModelV2Usage,
  LanguageModelV3FinishReason,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import type { ChatEvent, TokenUsage } from '@youyou/agent';

/** One part of a model's stream, of either specification version. */
export type StreamPart = LanguageModelV3StreamPart | LanguageModelV2StreamPart;

type StopReason = Extract<ChatEvent, { type: 'done' }>['stopReason'];

/** A tool call being streamed as `tool-input-*` parts, kept in case no `tool-call` part arrives for it. */
interface StreamedToolInput {
  toolName: string;
  input: string;
  providerExecuted: boolean;
}

/**
 * Turns stream parts into ChatEvents, one part at a time. Stateful: it pairs reasoning signatures with their
 * block and keeps streamed tool input as a fallback. An `error` part is returned as `{ error }` for the
 * caller to throw.
 */
export class StreamMapper {
  /** Signatures seen on a reasoning block's start or deltas, emitted when the block ends. */
  private readonly signatures = new Map<string, string>();
  private readonly toolInputs = new Map<string, StreamedToolInput>();
  private readonly completedCalls = new Set<string>();
  private finished = false;
  /** The `modelId` of the last `response-metadata` part: the model that answered. */
  private responseModel: string | undefined;

  /** The events one part produces, or the error an `error` part carries. */
  map(part: StreamPart): ChatEvent[] | { error: unknown } {
    switch (part.type) {
      case 'text-delta':
        return part.delta === '' ? [] : [{ type: 'text_delta', text: part.delta }];
      case 'reasoning-start':
        this.noteSignature(part.id, part.providerMetadata);
        return [];
      case 'reasoning-delta':
        // Some providers (Anthropic) send the signature as a delta with empty text.
        this.noteSignature(part.id, part.providerMetadata);
        return part.delta === '' ? [] : [{ type: 'reasoning_delta', text: part.delta }];
      case 'reasoning-end': {
        this.noteSignature(part.id, part.providerMetadata);
        const signature = this.signatures.get(part.id);
        this.signatures.delete(part.id);
        return signature === undefined ? [] : [{ type: 'reasoning_signature', signature }];
      }
      case 'tool-input-start':
        this.toolInputs.set(part.id, {
          toolName: part.toolName,
          input: '',
          providerExecuted: part.providerExecuted === true,
        });
        return [];
      case 'tool-input-delta': {
        const streamed = this.toolInputs.get(part.id);
        if (streamed !== undefined) streamed.input += part.delta;
        return [];
      }
      case 'tool-call':
        this.completedCalls.add(part.toolCallId);
        // A call the provider ran itself is not the runtime's to run.
        if (part.providerExecuted === true) return [];
        return [
          { type: 'tool_call', callId: part.toolCallId, toolName: part.toolName, arguments: part.input },
        ];
      case 'finish': {
        this.finished = true;
        const events = this.fallbackToolCalls();
        const usage = toUsage(part.usage);
        if (usage !== undefined) events.push({ type: 'usage', usage });
        events.push(this.done(toStopReason(part.finishReason)));
        return events;
      }
      case 'response-metadata': {
        // A provider may leave it out or, behind a loose adapter, send junk.
        const modelId: unknown = part.modelId;
        if (typeof modelId === 'string' && modelId !== '') this.responseModel = modelId;
        return [];
      }
      case 'error':
        return { error: part.error };
      default:
        // text-start/end, tool-input-end, stream-start, raw, sources, files,
        // provider-executed tool results and approval requests carry nothing a ChatEvent holds.
        return [];
    }
  }

  /** The events owed when the stream closes: fallback tool calls and a `done` if no `finish` part came. */
  end(): ChatEvent[] {
    if (this.finished) return [];
    const events = this.fallbackToolCalls();
    events.push(this.done(events.length > 0 ? 'tool_use' : 'other'));
    return events;
  }

  private done(stopReason: StopReason): ChatEvent {
    const responseModel = this.responseModel;
    return responseModel === undefined
      ? { type: 'done', stopReason }
      : { type: 'done', stopReason, responseModel };
  }

  private noteSignature(id: string, metadata: Record<string, unknown> | undefined): void {
    const signature = findSignature(metadata);
    if (signature !== undefined) this.signatures.set(id, signature);
  }

  /** Tool calls that were streamed as input but never completed by a `tool-call` part. */
  private fallbackToolCalls(): ChatEvent[] {
    const events: ChatEvent[] = [];
    for (const [id, streamed] of this.toolInputs) {
      if (this.completedCalls.has(id) || streamed.providerExecuted) continue;
      this.completedCalls.add(id);
      events.push({ type: 'tool_call', callId: id, toolName: streamed.toolName, arguments: streamed.input });
    }
    return events;
  }
}

/** A `signature` string under any provider's key of the metadata (e.g. `providerMetadata.anthropic.signature`). */
function findSignature(metadata: Record<string, unknown> | undefined): string | undefined {
  if (metadata === undefined) return undefined;
  for (const value of Object.values(metadata)) {
    if (typeof value !== 'object' || value === null) continue;
    const signature = (value as { signature?: unknown }).signature;
    if (typeof signature === 'string' && signature !== '') return signature;
  }
  return undefined;
}

/** The runtime's stop reason for the AI SDK's finish reason (V3 object or V2 string). */
export function toStopReason(reason: LanguageModelV3FinishReason | LanguageModelV2FinishReason): StopReason {
  switch (typeof reason === 'string' ? reason : reason.unified) {
    case 'stop':
      return 'end_turn';
    case 'tool-calls':
      return 'tool_use';
    case 'length':
      return 'max_tokens';
    default:
      return 'other';
  }
}

function isV3Usage(usage: LanguageModelV3Usage | LanguageModelV2Usage): usage is LanguageModelV3Usage {
  return typeof usage.inputTokens === 'object' && usage.inputTokens !== null;
}

/**
 * YouYou's usage: `inputTokens` is the whole prompt, `cachedInputTokens` (read from a cache) and
 * `cacheWriteTokens` (written to it) parts of it; `reasoningTokens` a part of `outputTokens`. Undefined when
 * the provider reported no counts, so the runtime estimates. Parts are kept within their totals, since the
 * runtime refuses a report whose part exceeds its whole.
 */
export function toUsage(usage: LanguageModelV3Usage | LanguageModelV2Usage): TokenUsage | undefined {
  if (isV3Usage(usage)) {
    const input = usage.inputTokens;
    const output = usage.outputTokens;
    if (input.total === undefined && input.noCache === undefined && output.total === undefined)
      return undefined;
    return withOptional({
      inputTokens: input.total ?? (input.noCache ?? 0) + (input.cacheRead ?? 0) + (input.cacheWrite ?? 0),
      outputTokens: output.total ?? (output.text ?? 0) + (output.reasoning ?? 0),
      cachedInputTokens: input.cacheRead,
      cacheWriteTokens: input.cacheWrite,
      reasoningTokens: output.reasoning,
    });
  }
  if (usage.inputTokens === undefined && usage.outputTokens === undefined) return undefined;
  // V2's `inputTokens` is the whole prompt (cached tokens included) for the providers that report both.
  return withOptional({
    inputTokens: usage.inputTokens ?? 0,
    outputTokens: usage.outputTokens ?? 0,
    cachedInputTokens: usage.cachedInputTokens,
    cacheWriteTokens: undefined,
    reasoningTokens: usage.reasoningTokens,
  });
}

/** Leaves out the optional counts the provider did not report (exactOptionalPropertyTypes); parts ≤ wholes. */
function withOptional(counts: {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number | undefined;
  cacheWriteTokens: number | undefined;
  reasoningTokens: number | undefined;
}): TokenUsage {
  const inputTokens = whole(counts.inputTokens);
  const outputTokens = whole(counts.outputTokens);
  const usage: TokenUsage = { inputTokens, outputTokens };
  let promptLeft = inputTokens;
  if (counts.cachedInputTokens !== undefined) {
    usage.cachedInputTokens = Math.min(whole(counts.cachedInputTokens), promptLeft);
    promptLeft -= usage.cachedInputTokens;
  }
  if (counts.cacheWriteTokens !== undefined) {
    usage.cacheWriteTokens = Math.min(whole(counts.cacheWriteTokens), promptLeft);
  }
  if (counts.reasoningTokens !== undefined) {
    usage.reasoningTokens = Math.min(whole(counts.reasoningTokens), outputTokens);
  }
  return usage;
}

/** A count as a whole number ≥ 0. */
function whole(value: number): number {
  return Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}
