/** Shared fixtures of the @youyou/ai-sdk tests: model info, stream parts, a request and event collectors. */
import type { LanguageModelV3StreamPart, LanguageModelV3Usage } from '@ai-sdk/provider';
import {
  type Agent,
  AgentBuilder,
  type AgentEventPayload,
  type ChatEvent,
  type ChatRequest,
  type Message,
  type ModelInfo,
  type ModelProvider,
  type Session,
  type ToolHandler,
  type UserInput,
} from '@youyou/agent';
import { simulateReadableStream } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';

/** The model id the tests' provider offers. */
export const MODEL_ID = 'mock-model';

/** The ModelInfo of the tests' model; vision and tool use on. */
export function modelInfo(overrides: Partial<ModelInfo> = {}): ModelInfo {
  return {
    id: MODEL_ID,
    displayName: 'Mock model',
    contextWindow: 100_000,
    capabilities: { toolUse: true, vision: true, streaming: true },
    ...overrides,
  };
}

/** A V3 usage with only the given counts reported. */
export function usage(counts: {
  input?: number;
  noCache?: number;
  cacheRead?: number;
  cacheWrite?: number;
  output?: number;
  text?: number;
  reasoning?: number;
}): LanguageModelV3Usage {
  return {
    inputTokens: {
      total: counts.input,
      noCache: counts.noCache,
      cacheRead: counts.cacheRead,
      cacheWrite: counts.cacheWrite,
    },
    outputTokens: { total: counts.output, text: counts.text, reasoning: counts.reasoning },
  };
}

/** A `finish` part with the given unified reason. */
export function finish(
  unified: 'stop' | 'tool-calls' | 'length' | 'content-filter' | 'error' | 'other' = 'stop',
  counts: Parameters<typeof usage>[0] = { input: 10, noCache: 10, output: 5 },
): LanguageModelV3StreamPart {
  return { type: 'finish', finishReason: { unified, raw: unified }, usage: usage(counts) };
}

/** The parts of a plain text answer, with the text in the given pieces. */
export function textParts(...pieces: string[]): LanguageModelV3StreamPart[] {
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'response-metadata', id: 'response-1', modelId: MODEL_ID },
    { type: 'text-start', id: 'text-1' },
    ...pieces.map((delta): LanguageModelV3StreamPart => ({ type: 'text-delta', id: 'text-1', delta })),
    { type: 'text-end', id: 'text-1' },
  ];
}

/** A doStream result that replays the given parts without delays. */
export function streamOf(chunks: LanguageModelV3StreamPart[]): {
  stream: ReadableStream<LanguageModelV3StreamPart>;
} {
  return { stream: simulateReadableStream({ chunks, initialDelayInMs: null, chunkDelayInMs: null }) };
}

/** The AI SDK's mock model, answering each doStream call with the next list of parts. */
export function mockModel(
  answers: LanguageModelV3StreamPart[][],
  provider = 'mock-provider',
): MockLanguageModelV3 {
  return new MockLanguageModelV3({ provider, modelId: MODEL_ID, doStream: answers.map(streamOf) });
}

/** A request of the tests' model with the given history. */
export function chatRequest(messages: Message[], overrides: Partial<ChatRequest> = {}): ChatRequest {
  return {
    modelId: MODEL_ID,
    systemPrompt: 'You are a test.',
    systemPromptParts: { stable: 'You are a test.', dynamic: '' },
    messages,
    tools: [],
    purpose: 'turn',
    ...overrides,
  };
}

/** Every event of one `chat` call, read to its end. */
export async function collect(
  provider: ModelProvider,
  request: ChatRequest,
  signal: AbortSignal = new AbortController().signal,
): Promise<ChatEvent[]> {
  const events: ChatEvent[] = [];
  for await (const event of await provider.chat(request, signal)) events.push(event);
  return events;
}

/** The error one `chat` call throws (fails the test if it throws none). */
export async function chatError(provider: ModelProvider, request: ChatRequest): Promise<unknown> {
  try {
    await collect(provider, request);
  } catch (error) {
    return error;
  }
  throw new Error('expected chat to throw');
}

/** The agents' one system instruction, so their system prompt is not empty. */
export const SYSTEM_INSTRUCTION = 'Answer briefly.';

const agents: Agent[] = [];

/** An agent around the provider, with the given tools; shut down by `shutdownAgents`. */
export async function buildAgent(provider: ModelProvider, tools: ToolHandler[] = []): Promise<Agent> {
  let builder = new AgentBuilder({
    defaultModel: MODEL_ID,
    systemInstructions: [SYSTEM_INSTRUCTION],
  }).registerModelProvider(provider);
  for (const tool of tools) builder = builder.registerTool(tool);
  const agent = await builder.build();
  agents.push(agent);
  return agent;
}

/** Shuts down every agent the test built. */
export async function shutdownAgents(): Promise<void> {
  await Promise.all(agents.splice(0).map((agent) => agent.shutdown()));
}

/** Sends one message and returns the payloads of the turn's events. */
export async function runTurn(session: Session, input: UserInput | string): Promise<AgentEventPayload[]> {
  const turn = await session.sendMessage(input);
  const payloads: AgentEventPayload[] = [];
  for await (const event of turn) payloads.push(event.payload);
  return payloads;
}
