import type { GetPromptResult, Prompt } from '@modelcontextprotocol/sdk/types.js';
import type { ContentBlock } from '@youyou/agent';
import { base64ByteLength } from './result.js';

/** One prompt a server offers. Every text is the server's: neutralise it before showing it. */
export interface McpPrompt {
  /** The server's name for it, as `getPrompt` takes it. */
  name: string;
  title?: string;
  description?: string;
  /** Its arguments, in the server's order. */
  arguments: { name: string; description?: string; required: boolean }[];
}

/** A prompt filled in: its messages as one user message's content (texts, and images as image blocks). */
export interface McpPromptContent {
  description?: string;
  content: ContentBlock[];
}

/** A listed prompt in our shape. */
export function toMcpPrompt(prompt: Prompt): McpPrompt {
  const result: McpPrompt = {
    name: prompt.name,
    arguments: (prompt.arguments ?? []).map((argument) => ({
      name: argument.name,
      ...(argument.description === undefined ? {} : { description: argument.description }),
      required: argument.required === true,
    })),
  };
  if (prompt.title !== undefined) result.title = prompt.title;
  if (prompt.description !== undefined) result.description = prompt.description;
  return result;
}

type PromptMessage = GetPromptResult['messages'][number];

function messageBlock(message: PromptMessage): ContentBlock {
  const { content } = message;
  switch (content.type) {
    case 'text':
      return { type: 'text', text: content.text };
    case 'image':
      return { type: 'image', data: content.data, mediaType: content.mimeType };
    case 'audio':
      return { type: 'text', text: `[audio: ${content.mimeType}, ${base64ByteLength(content.data)} bytes]` };
    case 'resource_link':
      return { type: 'text', text: `[resource: ${content.uri}]` };
    case 'resource': {
      const { resource } = content;
      if ('text' in resource && typeof resource.text === 'string')
        return { type: 'text', text: resource.text };
      return { type: 'text', text: `[resource: ${resource.uri}]` };
    }
    default:
      return { type: 'text', text: '[unsupported content]' };
  }
}

/**
 * A prompts/get answer as the content of one user message: each message's text or image in order; an
 * assistant message's text is marked as such, since the whole prompt is sent as the user's turn.
 */
export function promptContent(result: GetPromptResult): McpPromptContent {
  const content: ContentBlock[] = result.messages.map((message) => {
    const block = messageBlock(message);
    if (message.role === 'assistant' && block.type === 'text')
      return { type: 'text', text: `(assistant) ${block.text}` };
    return block;
  });
  return { ...(result.description === undefined ? {} : { description: result.description }), content };
}
