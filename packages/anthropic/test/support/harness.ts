import {
  type Agent,
  AgentBuilder,
  type AgentConfig,
  type AgentEvent,
  type ChatEvent,
  type ChatRequest,
  type Message,
  type RunningTurn,
  type SessionStorage,
  type ToolHandler,
} from '@youyou/agent';
import type { WireServer } from '../../../../test-support/wire-server.js';
import { type AnthropicProviderOptions, anthropicProvider } from '../../src/index.js';

/** The key every test sends; no error, event or stored row may show it. */
export const API_KEY = 'sk-ant-test-0123456789-secret';

/** A read-only tool that answers `found <q>`, and records what it was called with. */
export function lookupTool(calls: unknown[] = []): ToolHandler {
  return {
    name: 'lookup',
    description: 'Looks a word up.',
    parametersSchema: {
      type: 'object',
      properties: { q: { type: 'string' } },
      required: ['q'],
      additionalProperties: false,
    },
    isMutating: false,
    execute: async (input) => {
      calls.push(input.arguments);
      return { content: `found ${(input.arguments as { q: string }).q}`, isError: false };
    },
  };
}

/** An Anthropic provider pointed at the wire server, with the test key and no retry wait unless asked. */
export function providerFor(server: WireServer, options: AnthropicProviderOptions = {}) {
  return anthropicProvider({ apiKey: API_KEY, baseURL: server.url, ...options });
}

/** An agent whose only provider talks to the wire server. */
export async function agentFor(options: {
  server: WireServer;
  provider?: AnthropicProviderOptions;
  config?: Partial<AgentConfig>;
  tools?: ToolHandler[];
  storage?: SessionStorage;
}): Promise<Agent> {
  const builder = new AgentBuilder({
    defaultModel: 'claude-sonnet-5-5',
    systemInstructions: ['You are a test assistant.'],
    environmentContext: { cwd: '/work', platform: 'linux' },
    onBackgroundError: () => undefined,
    ...options.config,
  }).registerModelProvider(providerFor(options.server, options.provider));
  for (const tool of options.tools ?? []) builder.registerTool(tool);
  if (options.storage !== undefined) builder.registerSessionStorage(options.storage);
  return builder.build();
}

/** Every event of a turn, in order. */
export async function collect(turn: RunningTurn): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of turn) events.push(event);
  return events;
}

/** The payload types of a turn's events, in order. */
export function types(events: readonly AgentEvent[]): string[] {
  return events.map((event) => event.payload.type);
}

/** The error of a turn's `error` event. */
export function turnError(events: readonly AgentEvent[]) {
  const found = events.find((event) => event.payload.type === 'error')?.payload;
  if (found?.type !== 'error') throw new Error('the turn had no error event');
  return found.error;
}

/** A ChatRequest for calling the provider directly. */
export function chatRequest(overrides: Partial<ChatRequest> = {}): ChatRequest {
  const messages: Message[] = [{ type: 'user', content: [{ type: 'text', text: 'hello' }] }];
  return {
    modelId: 'claude-sonnet-5-5',
    purpose: 'turn',
    systemPrompt: 'Be brief.',
    systemPromptParts: { stable: 'Be brief.', dynamic: '' },
    messages,
    tools: [],
    ...overrides,
  };
}

/** Runs a provider stream to its end: the events it gave, and what it threw (if anything). */
export async function drain(
  stream: AsyncIterable<ChatEvent> | Promise<AsyncIterable<ChatEvent>>,
): Promise<{ events: ChatEvent[]; error: unknown }> {
  const events: ChatEvent[] = [];
  try {
    for await (const event of await stream) events.push(event);
    return { events, error: undefined };
  } catch (error) {
    return { events, error };
  }
}

/** The JSON body of the server's request number `index`, as a plain record. */
export function bodyOf(server: WireServer, index: number): Record<string, unknown> {
  const request = server.requests[index];
  if (request === undefined) throw new Error(`the server got no request #${index}`);
  return request.body as Record<string, unknown>;
}

/** The dynamic prompt part of `agentFor`'s agent, as it arrives: `<system>` text before the user's words. */
export const ENVIRONMENT_BLOCK = {
  type: 'text',
  text: '<system>\n<environment_context>\ncwd: /work\nplatform: linux\n</environment_context>\n</system>',
};

/** A copy of a request body without its `cache_control` marks: what the prompt cache compares. */
export function withoutCacheMarks(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutCacheMarks);
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (key !== 'cache_control') copy[key] = withoutCacheMarks(field);
  }
  return copy;
}

/** Where a request body carries `cache_control` marks, as paths such as `messages.2.content.1`. */
export function cacheMarks(value: unknown, path = ''): string[] {
  if (typeof value !== 'object' || value === null) return [];
  const marks: string[] = [];
  for (const [key, field] of Object.entries(value)) {
    if (key === 'cache_control') marks.push(path);
    else marks.push(...cacheMarks(field, path === '' ? key : `${path}.${key}`));
  }
  return marks;
}
