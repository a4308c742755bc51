import { fileURLToPath } from 'node:url';
import type { ContentBlock as AcpContentBlock } from '@agentclientprotocol/sdk';
import type { ContentBlock, UserInput } from '@youyou/agent';
import { openFileToRead } from '../../tools/confined-fs.js';
import {
  displayPath,
  errorText,
  looksBinary,
  resolveInWorkspace,
  type Workspace,
} from '../../tools/workspace.js';

/** The most of one linked file a prompt takes: more would crowd the model's context. */
const MAX_LINKED_FILE_BYTES = 256 * 1024;

/** The image types the providers take. */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/** A file's text, read inside the workspace (confinement and hidden paths kept), or why it cannot be read. */
export async function readWorkspaceText(
  workspace: Workspace,
  given: string,
  maxBytes: number,
): Promise<{ ok: true; text: string; shown: string } | { ok: false; why: string }> {
  const resolved = await resolveInWorkspace(workspace, given);
  if (!resolved.ok) return { ok: false, why: resolved.output.content };
  try {
    const opened = await openFileToRead(workspace, resolved.path, given);
    try {
      if (opened.stats.size > maxBytes) {
        return { ok: false, why: `it holds ${opened.stats.size} bytes, more than ${maxBytes}` };
      }
      const bytes = await opened.handle.readFile();
      if (looksBinary(bytes)) return { ok: false, why: 'it is a binary file' };
      return { ok: true, text: bytes.toString('utf8'), shown: displayPath(workspace, opened.real) };
    } finally {
      await opened.handle.close();
    }
  } catch (error) {
    return { ok: false, why: errorText(error) };
  }
}

/** The path of a file:// URI, or undefined for any other URI. */
function filePathOf(uri: string): string | undefined {
  if (!uri.startsWith('file:')) return undefined;
  try {
    return fileURLToPath(uri);
  } catch {
    return undefined;
  }
}

function attachedFile(shown: string, text: string): ContentBlock {
  return { type: 'text', text: `The user attached the file ${shown}:\n\`\`\`\n${text}\n\`\`\`` };
}

async function linkedFile(workspace: Workspace, uri: string, name: string): Promise<ContentBlock> {
  const filePath = filePathOf(uri);
  if (filePath === undefined) {
    return {
      type: 'text',
      text: `The user referred to ${name} (${uri}); it was not read: not a local file.`,
    };
  }
  const read = await readWorkspaceText(workspace, filePath, MAX_LINKED_FILE_BYTES);
  if (!read.ok) {
    return { type: 'text', text: `The user referred to ${name}; it was not read: ${read.why}` };
  }
  return attachedFile(read.shown, read.text);
}

/** One ACP block as the model's content (resource links read inside the workspace). */
async function blockOf(workspace: Workspace, block: AcpContentBlock): Promise<ContentBlock> {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
      if (!IMAGE_TYPES.has(block.mimeType)) {
        return { type: 'text', text: `(an image of type ${block.mimeType} was left out: not supported)` };
      }
      return { type: 'image', data: block.data, mediaType: block.mimeType };
    case 'resource_link':
      return linkedFile(workspace, block.uri, block.name);
    case 'resource': {
      const resource = block.resource;
      if ('text' in resource) {
        // Embedded by the editor (its buffer, saved or not): the text as the user sees it.
        return attachedFile(resource.uri, resource.text);
      }
      if (resource.mimeType != null && IMAGE_TYPES.has(resource.mimeType)) {
        return { type: 'image', data: resource.blob, mediaType: resource.mimeType };
      }
      return { type: 'text', text: `(the binary resource ${resource.uri} was left out: not supported)` };
    }
    default:
      return { type: 'text', text: `(a ${block.type} block was left out: not supported)` };
  }
}

/** The user's input of one `session/prompt`. */
export async function userInputOf(workspace: Workspace, prompt: AcpContentBlock[]): Promise<UserInput> {
  const content: ContentBlock[] = [];
  for (const block of prompt) content.push(await blockOf(workspace, block));
  return { content };
}
