import type { ReadResourceResult, Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import type { ToolHandler, ToolOutput } from '@youyou/agent';
import { redact } from './config.js';
import { describeFailure, isRequestTimeout } from './failure.js';
import { base64ByteLength } from './result.js';
import type { ServerClient } from './server-client.js';

/** The MCP names of the two resource tools, before the server's prefix (`files__list_resources`). */
export const RESOURCE_TOOL_NAMES = ['list_resources', 'read_resource'] as const;

function describeResource(resource: Resource): string {
  const kind = resource.mimeType === undefined ? '' : ` (${resource.mimeType})`;
  const about = resource.description === undefined ? '' : `: ${resource.description}`;
  return `- ${resource.uri} — ${resource.title ?? resource.name}${kind}${about}`;
}

function describeTemplate(template: ResourceTemplate): string {
  const about = template.description === undefined ? '' : `: ${template.description}`;
  return `- ${template.uriTemplate} — ${template.title ?? template.name}${about}`;
}

/** The list as text for the model. */
function listingText(options: {
  server: string;
  readTool: string;
  resources: readonly Resource[];
  templates: readonly ResourceTemplate[];
}): string {
  const { resources, templates } = options;
  if (resources.length === 0 && templates.length === 0)
    return `MCP server "${options.server}" lists no resources.`;
  const lines = [`Resources of MCP server "${options.server}" (read one with ${options.readTool}):`];
  lines.push(...resources.map(describeResource));
  if (templates.length > 0) {
    lines.push('URI templates (fill in the {placeholders}, then read the URI):');
    lines.push(...templates.map(describeTemplate));
  }
  return lines.join('\n');
}

/** A resources/read answer as text: texts as they are, binary contents as a one-line summary. */
export function resourceText(result: ReadResourceResult): string {
  const several = result.contents.length > 1;
  return result.contents
    .map((content) => {
      const head = several ? `[${content.uri}]\n` : '';
      if ('text' in content && typeof content.text === 'string') return head + content.text;
      if ('blob' in content && typeof content.blob === 'string') {
        return `[resource: ${content.uri}, ${content.mimeType ?? 'unknown type'}, ${base64ByteLength(content.blob)} bytes; binary content is not shown]`;
      }
      return `[resource: ${content.uri}, no content]`;
    })
    .join('\n');
}

function failed(server: ServerClient, error: unknown): ToolOutput {
  const detail = isRequestTimeout(error) ? `no answer within the server's timeoutMs` : describeFailure(error);
  return {
    content: redact(`MCP server "${server.config.name}" failed: ${detail}`, server.config.transport),
    isError: true,
  };
}

/**
 * The read-only tools over a server's resources: one lists them (with URI templates), one reads one by URI.
 * Like every tool they never throw; a failure is an `isError` output. `names` are the runtime's names.
 */
export function resourceTools(options: {
  server: ServerClient;
  names: { list: string; read: string };
}): ToolHandler[] {
  const { server, names } = options;
  const serverName = server.config.name;
  const list: ToolHandler = {
    name: names.list,
    description: `Lists the resources (files, records, documents) that the MCP server "${serverName}" offers, with their URIs. Read one with ${names.read}.`,
    parametersSchema: { type: 'object', properties: {}, additionalProperties: false },
    isMutating: false,
    idempotent: true,
    execute: async (input) => {
      try {
        const resources = await server.listResources(input.signal);
        const templates = await server.listResourceTemplates(input.signal);
        return {
          content: listingText({ server: serverName, readTool: names.read, resources, templates }),
          isError: false,
        };
      } catch (error) {
        return failed(server, error);
      }
    },
  };
  const read: ToolHandler = {
    name: names.read,
    description: `Reads one resource of the MCP server "${serverName}" by its URI (see ${names.list}).`,
    parametersSchema: {
      type: 'object',
      properties: { uri: { type: 'string', description: 'The URI of the resource.' } },
      required: ['uri'],
      additionalProperties: false,
    },
    isMutating: false,
    idempotent: true,
    execute: async (input) => {
      const uri = (input.arguments as { uri?: unknown }).uri;
      if (typeof uri !== 'string' || uri === '')
        return { content: 'uri must be a non-empty string', isError: true };
      try {
        return { content: resourceText(await server.readResource(uri, input.signal)), isError: false };
      } catch (error) {
        return failed(server, error);
      }
    },
  };
  return [list, read];
}
