import type {
  CallToolResult,
  CompatibilityCallToolResult,
  ContentBlock,
} from '@modelcontextprotocol/sdk/types.js';
import type { ToolOutput } from '@youyou/agent';

/** The bytes that base64 text encodes, counted without decoding it. */
export function base64ByteLength(data: string): number {
  const length = data.replace(/[^A-Za-z0-9+/]/g, '').length;
  return Math.floor((length * 3) / 4);
}

function describeBinary(kind: string, mimeType: string | undefined, data: string): string {
  return `[${kind}: ${mimeType ?? 'unknown type'}, ${base64ByteLength(data)} bytes]`;
}

/** One content block as text; the runtime's results are text, so binary parts become a short description. */
function contentText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return describeBinary(block.type, block.mimeType, block.data);
    case 'resource_link':
      return `[resource: ${block.uri}]`;
    case 'resource': {
      const { resource } = block;
      if ('text' in resource && typeof resource.text === 'string') return resource.text;
      if ('blob' in resource && typeof resource.blob === 'string') {
        return `[resource: ${resource.uri}, ${resource.mimeType ?? 'unknown type'}, ${base64ByteLength(resource.blob)} bytes]`;
      }
      return `[resource: ${resource.uri}]`;
    }
    default: {
      // A content kind newer than this adapter: say that it was there rather than drop it silently.
      const kind = (block as { type?: unknown }).type;
      return `[${typeof kind === 'string' ? kind : 'unknown'} content]`;
    }
  }
}

/**
 * A tools/call result as the runtime's ToolOutput: the content parts' texts joined by newlines; the
 * `structuredContent` JSON when there are no content parts; `isError` as the server set it. A result of
 * the 2024-10-07 protocol (`toolResult`) is shown as its JSON.
 */
export function toToolOutput(result: CallToolResult | CompatibilityCallToolResult): ToolOutput {
  if (!('content' in result) || !Array.isArray(result.content)) {
    return { content: JSON.stringify(result.toolResult) ?? '', isError: false };
  }
  const blocks: ContentBlock[] = result.content;
  let content = blocks.map(contentText).join('\n');
  if (blocks.length === 0 && result.structuredContent !== undefined) {
    content = JSON.stringify(result.structuredContent);
  }
  return { content, isError: result.isError === true };
}
