import type { PendingToolCall } from '@youyou/agent';
import { publicError } from '../http/errors.js';
import { type JournalEventView, SentError, type ServerEventPayload } from '../sessions/journal.js';

/**
 * One chunk of the AI SDK UI message stream protocol (v1), the subset this server sends. The AI SDK's
 * client (`DefaultChatTransport`, `useChat`) validates each against its own schema.
 */
export type UiMessageChunk =
  | { type: 'start'; messageId: string }
  | { type: 'start-step' }
  | { type: 'finish-step' }
  | { type: 'text-start' | 'text-end' | 'reasoning-start' | 'reasoning-end'; id: string }
  | { type: 'text-delta' | 'reasoning-delta'; id: string; delta: string }
  | { type: 'tool-input-available'; toolCallId: string; toolName: string; input: unknown; dynamic: true }
  | { type: 'tool-output-available'; toolCallId: string; output: string; dynamic: true; preliminary?: true }
  | { type: 'tool-output-error'; toolCallId: string; errorText: string; dynamic: true }
  | { type: 'tool-output-denied'; toolCallId: string }
  | { type: 'tool-approval-request'; approvalId: string; toolCallId: string }
  /**
   * An MCP server's question (its part's id is the question's): `state: 'held'` with the question, then,
   * under the same id so the client replaces the part, `state: 'settled'` with how it ended.
   */
  | { type: 'data-elicitation'; id: string; data: Record<string, unknown> }
  | { type: 'error'; errorText: string }
  | { type: 'abort'; reason: string }
  | { type: 'finish'; finishReason: 'stop' | 'error' | 'tool-calls' | 'other'; messageMetadata?: unknown };

/** The `errorText` of an error event: `[CODE] message`, never a stack, a cause or a provider's text. */
function errorText(error: unknown): string {
  // A kept entry's error was made public when it was first sent.
  const { code, message } = error instanceof SentError ? error : publicError(error);
  return `[${code}] ${message}`;
}

/**
 * How much of a running call's output its preliminary output holds (the last characters). The protocol's
 * preliminary output replaces the one before, so each carries the output so far: without a bound, a chatty
 * tool would cost the square of its output on the wire.
 */
const PRELIMINARY_OUTPUT_CHARS = 16_384;

/** The last `count` characters of `text`, never starting with the second half of a surrogate pair. */
function lastChars(text: string, count: number): string {
  if (text.length <= count) return text;
  const kept = text.slice(-count);
  return /^[\uDC00-\uDFFF]/.test(kept) ? kept.slice(1) : kept;
}

/** The header that tells the AI SDK's client the body is a UI message stream. */
export const UI_MESSAGE_STREAM_HEADER = 'x-vercel-ai-ui-message-stream';

/**
 * Turns one turn's AgentEvents into UI message chunks, in order: text and reasoning deltas become parts that
 * are opened on their first delta and closed when something else comes, tool calls become dynamic tool parts
 * (the browser has no schema of the agent's tools) whose live output comes as preliminary output, the turn's end becomes `finish` (or `abort`). `done` is
 * true once the turn's terminal event was mapped.
 */
export class UiMessageStreamMapper {
  private open: { kind: 'text' | 'reasoning'; id: string } | undefined;
  private parts = 0;
  private failed = false;
  private finished = false;
  private readonly calls = new Set<string>();
  /** Per running call: the output it reported so far (its last PRELIMINARY_OUTPUT_CHARS). */
  private readonly liveOutput = new Map<string, string>();

  /** Whether the turn's terminal event was mapped: nothing follows it. */
  get done(): boolean {
    return this.finished;
  }

  /**
   * The first chunks: the assistant message (its id is the turn's) and its first step. A turn continued after
   * approvals goes on in the step of the held calls, so the client finds their tool parts and updates them.
   */
  start(options: { turnId: string; continued: boolean }): UiMessageChunk[] {
    const start: UiMessageChunk = { type: 'start', messageId: options.turnId };
    return options.continued ? [start] : [start, { type: 'start-step' }];
  }

  /** The chunks of one event of the turn; events the protocol has no part for (usage, steering) give none. */
  map(event: JournalEventView): UiMessageChunk[] {
    const payload = event.payload;
    switch (payload.type) {
      case 'text_delta':
      case 'reasoning_delta': {
        if (payload.text === '') return [];
        const kind = payload.type === 'text_delta' ? 'text' : 'reasoning';
        const chunks = this.open?.kind === kind ? [] : [...this.close(), ...this.openPart(kind)];
        const id = this.open?.id ?? '';
        chunks.push({ type: kind === 'text' ? 'text-delta' : 'reasoning-delta', id, delta: payload.text });
        return chunks;
      }
      case 'output_repair':
        // The deltas that follow are a new answer: they go in a new text part.
        return this.close();
      case 'tool_call_start':
        this.calls.add(payload.callId);
        return [
          ...this.close(),
          {
            type: 'tool-input-available',
            toolCallId: payload.callId,
            toolName: payload.toolName,
            input: payload.arguments,
            dynamic: true,
          },
        ];
      case 'tool_output_delta': {
        // A running call's output so far, as preliminary output: the call's end replaces it.
        if (!this.calls.has(payload.callId)) return [];
        const soFar = lastChars(
          `${this.liveOutput.get(payload.callId) ?? ''}${payload.text}`,
          PRELIMINARY_OUTPUT_CHARS,
        );
        this.liveOutput.set(payload.callId, soFar);
        return [
          ...this.close(),
          {
            type: 'tool-output-available',
            toolCallId: payload.callId,
            output: soFar,
            dynamic: true,
            preliminary: true,
          },
        ];
      }
      case 'tool_call_end':
        this.liveOutput.delete(payload.callId);
        return [...this.close(), toolOutputChunk(payload)];
      case 'error': {
        this.failed = true;
        // Only an AgentError's code and message go out: never a stack, a cause or a provider's text.
        const error: unknown = payload.error;
        return [...this.close(), { type: 'error', errorText: errorText(error) }];
      }
      case 'turn_complete':
        return this.finish({
          type: 'finish',
          finishReason: this.failed ? 'error' : 'stop',
          messageMetadata: { turnId: event.turnId, usage: payload.usage },
        });
      case 'turn_suspended':
        return this.suspend(payload.pendingCalls, event.turnId);
      case 'turn_cancelled':
        return this.finish({ type: 'abort', reason: 'the turn was cancelled' });
      case 'server.elicitation_held':
      case 'server.elicitation_settled':
        return [elicitationChunk(payload)];
      default:
        return [];
    }
  }

  /** A suspended turn ends its message with an approval request per held call, on a tool part of its own. */
  private suspend(pendingCalls: readonly PendingToolCall[], turnId: string): UiMessageChunk[] {
    // The client attaches an approval request to a tool part it has: a held call gets one first.
    return this.finish(
      ...pendingCalls.flatMap((call): UiMessageChunk[] => [
        ...(this.calls.has(call.callId)
          ? []
          : [
              {
                type: 'tool-input-available',
                toolCallId: call.callId,
                toolName: call.toolName,
                input: call.arguments,
                dynamic: true,
              } as const,
            ]),
        { type: 'tool-approval-request', approvalId: call.callId, toolCallId: call.callId },
      ]),
      { type: 'finish', finishReason: 'tool-calls', messageMetadata: { turnId, suspended: true } },
    );
  }

  private finish(...last: UiMessageChunk[]): UiMessageChunk[] {
    this.finished = true;
    return [...this.close(), { type: 'finish-step' }, ...last];
  }

  private openPart(kind: 'text' | 'reasoning'): UiMessageChunk[] {
    this.parts += 1;
    const id = `${kind}-${this.parts}`;
    this.open = { kind, id };
    return [{ type: kind === 'text' ? 'text-start' : 'reasoning-start', id }];
  }

  private close(): UiMessageChunk[] {
    const open = this.open;
    if (open === undefined) return [];
    this.open = undefined;
    return [{ type: open.kind === 'text' ? 'text-end' : 'reasoning-end', id: open.id }];
  }
}

/** The data part of a held or settled question: the held one carries the question, the settled one its end. */
function elicitationChunk(
  payload: Extract<ServerEventPayload, { type: `server.elicitation_${string}` }>,
): UiMessageChunk {
  if (payload.type === 'server.elicitation_settled') {
    const { id, reason, action } = payload;
    return { type: 'data-elicitation', id, data: { id, state: 'settled', reason, action } };
  }
  const { id, server, message, fields, expiresAt } = payload;
  return { type: 'data-elicitation', id, data: { id, state: 'held', server, message, fields, expiresAt } };
}

/** The chunk of an ended call: denied (it did not run: state `output-denied`), its output, or its error. */
function toolOutputChunk(payload: {
  callId: string;
  success: boolean;
  denied?: boolean;
  output: { content: string; isError: boolean };
}): UiMessageChunk {
  if (payload.denied === true) return { type: 'tool-output-denied', toolCallId: payload.callId };
  return payload.success && !payload.output.isError
    ? {
        type: 'tool-output-available',
        toolCallId: payload.callId,
        output: payload.output.content,
        dynamic: true,
      }
    : {
        type: 'tool-output-error',
        toolCallId: payload.callId,
        errorText: payload.output.content,
        dynamic: true,
      };
}
