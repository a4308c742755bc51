import type { ContentBlock, Message, ToolSpec } from '@youyou/agent';
import type {
  FunctionTool,
  ResponseInputContent,
  ResponseInputItem,
  ResponseReasoningItem,
} from 'openai/resources/responses/responses';
import { imageDataUrl, normaliseHistory, type ReasoningBlock } from './history.js';

/** What this adapter keeps as a reasoning block's `signature`: the reasoning item, to send back as is. */
interface ReasoningReplay {
  id: string;
  encrypted_content: string;
  summary?: ResponseReasoningItem.Summary[];
}

/** The signature of a finished reasoning item, or undefined when it carries no encrypted content. */
export function reasoningSignature(item: ResponseReasoningItem): string | undefined {
  if (typeof item.encrypted_content !== 'string' || item.encrypted_content === '') return undefined;
  const replay: ReasoningReplay = {
    id: item.id,
    encrypted_content: item.encrypted_content,
    summary: item.summary,
  };
  return JSON.stringify(replay);
}

/** The reasoning item a block stands for; undefined for a block without one (or another provider's signature). */
function reasoningItem(block: ReasoningBlock): ResponseReasoningItem | undefined {
  if (block.signature === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(block.signature);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const replay = parsed as Partial<ReasoningReplay>;
  if (typeof replay.id !== 'string' || typeof replay.encrypted_content !== 'string') return undefined;
  const summary = Array.isArray(replay.summary)
    ? replay.summary
    : block.text === ''
      ? []
      : [{ type: 'summary_text' as const, text: block.text }];
  return { type: 'reasoning', id: replay.id, summary, encrypted_content: replay.encrypted_content };
}

function userContent(blocks: readonly ContentBlock[]): string | ResponseInputContent[] {
  if (blocks.every((block) => block.type === 'text')) {
    return blocks.map((block) => (block.type === 'text' ? block.text : '')).join('\n\n');
  }
  const parts: ResponseInputContent[] = [];
  for (const block of blocks) {
    if (block.type === 'text') parts.push({ type: 'input_text', text: block.text });
    else if (block.type === 'image')
      parts.push({ type: 'input_image', image_url: imageDataUrl(block), detail: 'auto' });
  }
  return parts;
}

/**
 * The Responses `input` of a request: the system prompt as the first `developer` message, system messages
 * of the history as `developer` messages in place, assistant replies as their reasoning items (only those
 * with encrypted content, and only when the reply goes on after them, as the API demands), their text,
 * their `function_call`s and right after them the `function_call_output`s.
 */
export function toResponsesInput(options: {
  systemPrompt: string;
  messages: readonly Message[];
  /** False for a model that does not reason: it gets no reasoning items at all. */
  sendReasoning: boolean;
}): ResponseInputItem[] {
  const input: ResponseInputItem[] = [];
  if (options.systemPrompt !== '') {
    input.push({ type: 'message', role: 'developer', content: options.systemPrompt });
  }
  for (const entry of normaliseHistory(options.messages)) {
    switch (entry.type) {
      case 'system':
        input.push({ type: 'message', role: 'developer', content: entry.text });
        break;
      case 'user':
        input.push({ type: 'message', role: 'user', content: userContent(entry.content) });
        break;
      case 'assistant': {
        // A reasoning item must be followed by the output it led to; one that ended the reply is dropped.
        if (options.sendReasoning && (entry.text !== '' || entry.calls.length > 0)) {
          for (const block of entry.reasoning) {
            const item = reasoningItem(block);
            if (item !== undefined) input.push(item);
          }
        }
        if (entry.text !== '') input.push({ type: 'message', role: 'assistant', content: entry.text });
        for (const call of entry.calls) {
          input.push({
            type: 'function_call',
            call_id: call.callId,
            name: call.toolName,
            arguments: call.argumentsText,
          });
        }
        for (const result of entry.results) {
          input.push({ type: 'function_call_output', call_id: result.callId, output: result.content });
        }
        break;
      }
    }
  }
  return input;
}

/** Tool specs as Responses function tools (not strict: the runtime validates arguments itself). */
export function toResponsesTools(tools: readonly ToolSpec[]): FunctionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    strict: false,
  }));
}
