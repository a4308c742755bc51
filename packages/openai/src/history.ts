import type { ContentBlock, Message } from '@youyou/agent';

/** A reasoning block of an assistant reply. */
export type ReasoningBlock = Extract<ContentBlock, { type: 'reasoning' }>;

/** One tool call of an assistant reply, its arguments as JSON text. */
export interface HistoryToolCall {
  callId: string;
  toolName: string;
  argumentsText: string;
}

/** The result paired with a tool call. */
export interface HistoryToolResult {
  callId: string;
  content: string;
  isError: boolean;
}

/**
 * The history as both OpenAI APIs need it: each assistant reply holds its tool calls and, right after
 * them, exactly one result per call. `user` entries also carry the notes that replace orphan results.
 */
export type HistoryEntry =
  | { type: 'system'; text: string }
  | { type: 'user'; content: ContentBlock[] }
  | {
      type: 'assistant';
      reasoning: ReasoningBlock[];
      text: string;
      calls: HistoryToolCall[];
      results: HistoryToolResult[];
    };

type AssistantEntry = Extract<HistoryEntry, { type: 'assistant' }>;

/** The result text of a call the history holds no result for (a crash, a trimmed log). */
export const MISSING_RESULT_TEXT = 'No result was recorded for this tool call; treat it as failed.';

/**
 * The JSON text of a call's arguments: the raw text the model sent when it did not parse, `{}` for
 * nothing, else the parsed value serialised again.
 */
export function argumentsText(value: unknown): string {
  if (typeof value === 'string') return value.trim() === '' ? '{}' : value;
  if (value === undefined) return '{}';
  try {
    return JSON.stringify(value) ?? '{}';
  } catch {
    return '{}';
  }
}

function orphanNote(message: Extract<Message, { type: 'tool_result' }>): ContentBlock[] {
  const status = message.isError ? 'failed' : 'returned';
  return [
    {
      type: 'text',
      text: `[A tool call (id ${message.callId}) that is no longer in the conversation ${status}:]\n${message.content}`,
    },
  ];
}

/**
 * Groups the runtime's flat message list into API-shaped entries. Whatever the history holds, the result
 * meets both APIs' rules: consecutive `tool_call`s join the assistant message before them (or a new one
 * with no text); every call is followed by its result, or by a synthetic error result when none exists;
 * a result whose call is missing, or a second result for one call, becomes a user note in its place.
 */
export function normaliseHistory(messages: readonly Message[]): HistoryEntry[] {
  const callIds = new Set<string>();
  const firstResult = new Map<string, Extract<Message, { type: 'tool_result' }>>();
  for (const message of messages) {
    if (message.type === 'tool_call') callIds.add(message.callId);
    else if (message.type === 'tool_result' && !firstResult.has(message.callId)) {
      firstResult.set(message.callId, message);
    }
  }
  const entries: HistoryEntry[] = [];
  const paired = new Set<string>();
  let open: AssistantEntry | undefined;

  const close = (): void => {
    if (open === undefined) return;
    for (const call of open.calls) {
      const result = paired.has(call.callId) ? undefined : firstResult.get(call.callId);
      paired.add(call.callId);
      open.results.push(
        result === undefined
          ? { callId: call.callId, content: MISSING_RESULT_TEXT, isError: true }
          : { callId: call.callId, content: result.content, isError: result.isError },
      );
    }
    entries.push(open);
    open = undefined;
  };

  for (const message of messages) {
    switch (message.type) {
      case 'assistant': {
        close();
        const reasoning = message.content.filter(
          (block): block is ReasoningBlock => block.type === 'reasoning',
        );
        const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
        open = { type: 'assistant', reasoning, text, calls: [], results: [] };
        break;
      }
      case 'tool_call':
        open ??= { type: 'assistant', reasoning: [], text: '', calls: [], results: [] };
        open.calls.push({
          callId: message.callId,
          toolName: message.toolName,
          argumentsText: argumentsText(message.arguments),
        });
        break;
      case 'tool_result':
        close();
        // The first result of a known call travels with its call; anything else is a note.
        if (!callIds.has(message.callId) || firstResult.get(message.callId) !== message) {
          entries.push({ type: 'user', content: orphanNote(message) });
        }
        break;
      case 'user':
        close();
        entries.push({
          type: 'user',
          content: message.content.filter((block) => block.type !== 'reasoning'),
        });
        break;
      case 'system':
        close();
        entries.push({ type: 'system', text: message.content });
        break;
    }
  }
  close();
  return entries;
}

/** A data URL for an image block. */
export function imageDataUrl(block: Extract<ContentBlock, { type: 'image' }>): string {
  return `data:${block.mediaType};base64,${block.data}`;
}
