import { expect } from 'vitest';
import {
  type Agent,
  AgentBuilder,
  type AgentConfig,
  type AgentError,
  type AgentEvent,
  type AgentEventPayload,
  type ChatEvent,
  type ChatRequest,
  type HookEvent,
  type HookHandler,
  InMemorySessionStorage,
  type JsonSchema,
  type MemoryStorage,
  type Message,
  type ModelProvider,
  type Plugin,
  type RunningTurn,
  type Session,
  type SessionEvent,
  type SessionEventPayload,
  type SessionStorage,
  type SkillDefinition,
  type ToolHandler,
  type ToolInput,
  type ToolOutput,
  templates,
  type UserInput,
} from '../../src/index.js';
import { ScriptedModelProvider } from '../../src/testing/index.js';

export { type Deferred, deferred } from './common.js';

/** Lets every queued callback and I/O callback run once; used only to show that something does NOT happen. */
export function nextMacrotask(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Resolves when the signal aborts (at once when it already has). */
export function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/** A ScriptedModelProvider that also keeps the signal of every request. */
export class SignalRecordingProvider extends ScriptedModelProvider {
  /** The signal each request was given, in request order. */
  readonly signals: AbortSignal[] = [];

  override chat(request: ChatRequest, signal: AbortSignal): AsyncIterable<ChatEvent> {
    this.signals.push(signal);
    return super.chat(request, signal);
  }
}

/**
 * An InMemorySessionStorage whose `saveEvent` first runs `beforeSave`: a test makes it throw to simulate an
 * outage, or await a deferred to hold a save. `attempts` records every call, `failures` every refused one.
 */
export class ControllableSessionStorage extends InMemorySessionStorage {
  beforeSave: ((event: SessionEvent) => Promise<void> | void) | undefined;
  readonly attempts: SessionEventPayload[] = [];
  failures = 0;

  override async saveEvent(sessionId: string, event: SessionEvent): Promise<void> {
    this.attempts.push(event.payload);
    try {
      await this.beforeSave?.(event);
    } catch (error) {
      this.failures += 1;
      throw error;
    }
    await super.saveEvent(sessionId, event);
  }
}

/** What `buildAgent` takes; everything but the provider is optional. */
export interface AgentSetup {
  provider: ModelProvider;
  config?: Partial<AgentConfig>;
  tools?: ToolHandler[];
  skills?: SkillDefinition[];
  plugins?: Plugin[];
  sessionStorage?: SessionStorage;
  memoryStorage?: MemoryStorage;
}

/** A built agent and the errors it reported through `onBackgroundError`. */
export interface BuiltAgent {
  agent: Agent;
  backgroundErrors: AgentError[];
}

const liveAgents = new Set<Agent>();

/** Builds an agent on the scripted model (unless `config.defaultModel` says otherwise); shut down by `shutdownAgents`. */
export async function buildAgent(setup: AgentSetup): Promise<BuiltAgent> {
  const backgroundErrors: AgentError[] = [];
  let builder = new AgentBuilder({
    defaultModel: 'scripted-model',
    onBackgroundError: (error) => backgroundErrors.push(error),
    ...setup.config,
  }).registerModelProvider(setup.provider);
  for (const tool of setup.tools ?? []) builder = builder.registerTool(tool);
  for (const skill of setup.skills ?? []) builder = builder.registerSkill(skill);
  for (const plugin of setup.plugins ?? []) builder = builder.registerPlugin(plugin, { from: plugin.id });
  if (setup.sessionStorage !== undefined) builder = builder.registerSessionStorage(setup.sessionStorage);
  if (setup.memoryStorage !== undefined) builder = builder.registerMemoryStorage(setup.memoryStorage);
  const agent = await builder.build();
  liveAgents.add(agent);
  return { agent, backgroundErrors };
}

/** Shuts down every agent `buildAgent` made; call it from `afterEach`. */
export async function shutdownAgents(): Promise<void> {
  const agents = [...liveAgents];
  liveAgents.clear();
  await Promise.all(agents.map((agent) => agent.shutdown()));
}

/** What a read turn produced. */
export interface TurnRecord {
  events: AgentEvent[];
  payloads: AgentEventPayload[];
  types: AgentEventPayload['type'][];
  errors: AgentError[];
}

/** Checks the event contract of one turn: one terminal event, last; ids constant; sequence increasing. */
export function expectTurnInvariants(events: readonly AgentEvent[]): void {
  const terminal = events.filter(
    (event) => event.payload.type === 'turn_complete' || event.payload.type === 'turn_cancelled',
  );
  expect(terminal).toHaveLength(1);
  expect(events.at(-1)).toBe(terminal[0]);
  const first = events[0];
  for (const [index, event] of events.entries()) {
    expect(event.turnId).toBe(first?.turnId);
    expect(event.sessionId).toBe(first?.sessionId);
    expect(event.timestamp).toBeInstanceOf(Date);
    if (index > 0) expect(event.sequence).toBeGreaterThan(events[index - 1]?.sequence ?? Number.NaN);
  }
}

/** Reads a turn to its end, checks its invariants and returns what it emitted. */
export async function collectTurn(turn: RunningTurn): Promise<TurnRecord> {
  const events: AgentEvent[] = [];
  for await (const event of turn) events.push(event);
  expectTurnInvariants(events);
  for (const event of events) expect(event.turnId).toBe(turn.turnId);
  return recordOf(events);
}

/** The views of a list of events that tests compare. */
export function recordOf(events: AgentEvent[]): TurnRecord {
  const payloads = events.map((event) => event.payload);
  return {
    events,
    payloads,
    types: payloads.map((payload) => payload.type),
    errors: payloads.flatMap((payload) => (payload.type === 'error' ? [payload.error] : [])),
  };
}

/** Sends a message and reads the whole turn. */
export async function runTurn(session: Session, input: UserInput | string): Promise<TurnRecord> {
  return collectTurn(await session.sendMessage(input));
}

/** The payloads of a stored session, in save order ([] for an unknown session). */
export async function storedPayloads(
  storage: SessionStorage,
  sessionId: string,
): Promise<SessionEventPayload[]> {
  const events = await storage.loadSession(sessionId);
  return (events ?? []).map((event) => event.payload);
}

/** A ToolHandler for tests; by default read-only, `{ type: 'object' }` schema, answering `<name> ok`. */
export function defineTool(options: {
  name: string;
  isMutating?: boolean;
  parametersSchema?: JsonSchema;
  execute?: (input: ToolInput) => Promise<ToolOutput> | ToolOutput;
}): ToolHandler {
  const execute = options.execute ?? (() => ({ content: `${options.name} ok`, isError: false }));
  return {
    name: options.name,
    description: `The ${options.name} tool.`,
    parametersSchema: options.parametersSchema ?? { type: 'object' },
    isMutating: options.isMutating ?? false,
    execute: async (input) => execute(input),
  };
}

/** A plugin that taps the given handlers (a list runs in order) and does nothing else. */
export function hookPlugin(options: {
  id: string;
  hooks: Partial<Record<HookEvent, HookHandler | HookHandler[]>>;
}): Plugin {
  return {
    id: options.id,
    displayName: `Plugin ${options.id}`,
    description: `Test plugin ${options.id}.`,
    initialize: async () => undefined,
    apply: (context) => {
      for (const [event, handlers] of Object.entries(options.hooks)) {
        const list = Array.isArray(handlers) ? handlers : handlers === undefined ? [] : [handlers];
        for (const handler of list) context.tap(event as HookEvent, handler);
      }
    },
    shutdown: async () => undefined,
  };
}

/** A user message as it enters the context. */
export function userMessage(text: string): Message {
  return { type: 'user', content: [{ type: 'text', text }] };
}

/** A complete assistant text message as it enters the context. */
export function assistantMessage(text: string): Message {
  return { type: 'assistant', content: [{ type: 'text', text }], status: 'complete' };
}

/** The text of a request's first user message (the runtime's own requests hold exactly one). */
export function requestText(request: ChatRequest | undefined): string {
  const first = request?.messages[0];
  if (first?.type !== 'user') return '';
  return first.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

/** The requests of one purpose, in order. */
export function requestsOf(provider: ScriptedModelProvider, purpose: ChatRequest['purpose']): ChatRequest[] {
  return provider.requests.filter((request) => request.purpose === purpose);
}

/** The system message a compaction puts in place of the history it summarised. */
export function summaryOf(summary: string): Message {
  return { type: 'system', content: `${templates.COMPACT_SUMMARY_PREFIX}\n\n${summary}` };
}

/** The text blocks of a user or assistant message, joined ('' for other messages). */
export function textOf(message: Message): string {
  if (message.type !== 'user' && message.type !== 'assistant') return '';
  return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

/** The characters of the text of user and assistant messages. */
export function textChars(messages: readonly Message[]): number {
  return messages.reduce((sum, message) => sum + textOf(message).length, 0);
}

/** Every tool_call has its tool_result after it, in the same order, and no result lacks its call. */
export function expectToolPairsWhole(messages: readonly Message[]): void {
  const calls = messages.flatMap((message) => (message.type === 'tool_call' ? [message.callId] : []));
  const results = messages.flatMap((message) => (message.type === 'tool_result' ? [message.callId] : []));
  expect(results).toEqual(calls);
  for (const callId of calls) {
    const call = messages.findIndex((message) => message.type === 'tool_call' && message.callId === callId);
    const result = messages.findIndex(
      (message) => message.type === 'tool_result' && message.callId === callId,
    );
    expect(result).toBeGreaterThan(call);
  }
}
