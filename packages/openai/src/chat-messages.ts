import type { ContentBlock, Message, ToolSpec } from '@youyou/agent';
import type {
  ChatCompletionContentPart,
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { imageDataUrl, normaliseHistory } from './history.js';

/** Servers reject an empty tool message on some chat templates; an empty result says so instead. */
const EMPTY_RESULT_TEXT = '(no output)';

function userContent(blocks: readonly ContentBlock[]): string | ChatCompletionContentPart[] {
  // Plain text goes as a string: the form every compatible server accepts.
  if (blocks.every((block) => block.type === 'text')) {
    return blocks.map((block) => (block.type === 'text' ? block.text : '')).join('\n\n');
  }
  const parts: ChatCompletionContentPart[] = [];
  for (const block of blocks) {
    if (block.type === 'text') parts.push({ type: 'text', text: block.text });
    else if (block.type === 'image')
      parts.push({ type: 'image_url', image_url: { url: imageDataUrl(block) } });
  }
  return parts;
}

/**
 * The Chat Completions `messages` of a request: the system prompt first, then the history with system
 * messages in place, tool calls on their assistant message and tool results right after it. Reasoning
 * blocks are dropped: Chat Completions has no way to send them back.
 */
export function toChatMessages(options: {
  systemPrompt: string;
  messages: readonly Message[];
}): ChatCompletionMessageParam[] {
  const output: ChatCompletionMessageParam[] = [];
  if (options.systemPrompt !== '') output.push({ role: 'system', content: options.systemPrompt });
  for (const entry of normaliseHistory(options.messages)) {
    switch (entry.type) {
      case 'system':
        output.push({ role: 'system', content: entry.text });
        break;
      case 'user':
        output.push({ role: 'user', content: userContent(entry.content) });
        break;
      case 'assistant': {
        if (entry.calls.length === 0) {
          // A reply that held only reasoning has nothing Chat Completions can carry.
          if (entry.text !== '') output.push({ role: 'assistant', content: entry.text });
          break;
        }
        output.push({
          role: 'assistant',
          content: entry.text === '' ? null : entry.text,
          tool_calls: entry.calls.map((call) => ({
            id: call.callId,
            type: 'function' as const,
            function: { name: call.toolName, arguments: call.argumentsText },
          })),
        });
        for (const result of entry.results) {
          output.push({
            role: 'tool',
            tool_call_id: result.callId,
            content: result.content === '' ? EMPTY_RESULT_TEXT : result.content,
          });
        }
        break;
      }
    }
  }
  return output;
}

/** Tool specs as Chat Completions function tools. */
export function toChatTools(tools: readonly ToolSpec[]): ChatCompletionFunctionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
}
