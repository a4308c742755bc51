import {
  AgentBuilder,
  type AgentEvent,
  type ModelProvider,
  type RunningTurn,
  type SessionStorage,
  type ToolHandler,
} from '@youyou/agent';
import {
  chatFinish,
  chatRequestProblems,
  chatTextChunks,
  chatToolCallChunks,
  responsesCompleted,
  responsesFunctionCall,
  responsesOpening,
  responsesRequestProblems,
  responsesText,
  sseReply,
  type WireToolCall,
} from '../../../../test-support/openai-wire.js';
import type { WireEvent, WireReply, WireServer } from '../../../../test-support/wire-server.js';
import { openaiChatProvider, openaiCompatibleProvider, openaiResponsesProvider } from '../../src/index.js';

/** The API key the tests use; no request, event or stored row may contain it. */
export const TEST_API_KEY = 'sk-test-0123456789abcdefSECRET';

/** One provider of this package and how to script its wire format. */
export interface Dialect {
  name: 'openai-chat' | 'openai-responses' | 'openai-compatible';
  api: 'chat' | 'responses';
  /** The request path the provider posts to. */
  path: string;
  modelId: string;
  provider(options: { server: WireServer; maxRetries?: number }): ModelProvider;
  /** A complete streamed text answer. */
  text(parts: readonly string[]): WireReply;
  /** The events of a text answer that has not finished. */
  partialText(parts: readonly string[]): WireEvent[];
  /** A complete answer made of these parallel tool calls. */
  toolCalls(calls: readonly WireToolCall[]): WireReply;
  /** What the request body breaks of the API's rules. */
  problems(body: unknown): string[];
}

const chatWire = {
  api: 'chat' as const,
  path: '/v1/chat/completions',
  text: (parts: readonly string[]) => sseReply([...chatTextChunks(parts), ...chatFinish()]),
  partialText: (parts: readonly string[]) => chatTextChunks(parts),
  toolCalls: (calls: readonly WireToolCall[]) =>
    sseReply([...chatToolCallChunks(calls), ...chatFinish({ finishReason: 'tool_calls' })]),
  problems: chatRequestProblems,
};

/** The three providers, each with the wire format it speaks. */
export const DIALECTS: readonly Dialect[] = [
  {
    ...chatWire,
    name: 'openai-chat',
    modelId: 'gpt-4o-mini',
    provider: ({ server, maxRetries }) =>
      openaiChatProvider({
        apiKey: TEST_API_KEY,
        baseURL: `${server.url}/v1`,
        ...(maxRetries === undefined ? {} : { maxRetries }),
      }),
  },
  {
    name: 'openai-responses',
    api: 'responses',
    path: '/v1/responses',
    modelId: 'gpt-5-mini',
    provider: ({ server, maxRetries }) =>
      openaiResponsesProvider({
        apiKey: TEST_API_KEY,
        baseURL: `${server.url}/v1`,
        ...(maxRetries === undefined ? {} : { maxRetries }),
      }),
    text: (parts) => sseReply([...responsesOpening(), ...responsesText(parts), responsesCompleted()]),
    partialText: (parts) => [...responsesOpening(), ...responsesText(parts).slice(0, 2 + parts.length)],
    toolCalls: (calls) =>
      sseReply([
        ...responsesOpening(),
        ...calls.flatMap((call, index) => responsesFunctionCall(call, { outputIndex: index })),
        responsesCompleted(),
      ]),
    problems: responsesRequestProblems,
  },
  {
    ...chatWire,
    name: 'openai-compatible',
    modelId: 'llama3.2',
    provider: ({ server, maxRetries }) =>
      openaiCompatibleProvider({
        baseURL: `${server.url}/v1`,
        apiKey: TEST_API_KEY,
        models: [
          {
            id: 'llama3.2',
            displayName: 'Llama 3.2',
            contextWindow: 131_072,
            capabilities: { toolUse: true, vision: true, streaming: true },
          },
        ],
        ...(maxRetries === undefined ? {} : { maxRetries }),
      }),
  },
];

/** An agent on `provider` with one open session on `modelId`. */
export async function startSession(options: {
  provider: ModelProvider;
  modelId: string;
  storage?: SessionStorage;
  tools?: readonly ToolHandler[];
}) {
  let builder = new AgentBuilder({
    defaultModel: options.modelId,
    systemInstructions: ['You are a test agent.'],
  }).registerModelProvider(options.provider);
  for (const tool of options.tools ?? []) builder = builder.registerTool(tool);
  if (options.storage !== undefined) builder = builder.registerSessionStorage(options.storage);
  const agent = await builder.build();
  const session = await agent.newSession();
  return { agent, session };
}

/** Reads a turn's events to its end. */
export async function collect(turn: RunningTurn): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of turn) events.push(event);
  return events;
}

/** The payload types of a turn's events, in order. */
export function typesOf(events: readonly AgentEvent[]): string[] {
  return events.map((event) => event.payload.type);
}

/** The error payloads of a turn's events. */
export function errorsOf(events: readonly AgentEvent[]) {
  return events.flatMap((event) => (event.payload.type === 'error' ? [event.payload.error] : []));
}

/** A read-only tool that answers `found:<q>`. */
export function lookupTool(): ToolHandler {
  return {
    name: 'lookup',
    description: 'Looks a word up.',
    parametersSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
    isMutating: false,
    execute: async (input) => ({ content: `found:${(input.arguments as { q: string }).q}`, isError: false }),
  };
}
