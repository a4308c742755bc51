import type { ContentBlock, Message } from './types.js';
import { jsonText } from './value-kind.js';

function renderBlocks(blocks: readonly ContentBlock[]): string {
  const parts: string[] = [];
  for (const block of blocks) {
    if (block.type === 'text') parts.push(block.text);
    else if (block.type === 'image') parts.push(`[image: ${block.mediaType}]`);
  }
  return parts.join('\n');
}

/** A tool call's arguments as text: the raw text the model sent, else their JSON ('' where JSON has none). */
export function argumentsText(value: unknown): string {
  return typeof value === 'string' ? value : (jsonText(value) ?? '');
}

/** Renders messages as plain text for the runtime's own requests (compaction, memory extraction). */
export function renderTranscript(messages: readonly Message[]): string {
  const lines: string[] = [];
  for (const message of messages) {
    switch (message.type) {
      case 'user':
        lines.push(`[user]\n${renderBlocks(message.content)}`);
        break;
      case 'assistant':
        lines.push(
          `[assistant${message.status === 'incomplete' ? ' (interrupted)' : ''}]\n${renderBlocks(message.content)}`,
        );
        break;
      case 'tool_call':
        lines.push(`[tool call ${message.toolName} #${message.callId}]\n${argumentsText(message.arguments)}`);
        break;
      case 'tool_result':
        lines.push(
          `[tool result #${message.callId}${message.isError ? ' (error)' : ''}]\n${message.content}`,
        );
        break;
      case 'system':
        lines.push(`[system]\n${message.content}`);
        break;
    }
  }
  return lines.join('\n\n');
}
