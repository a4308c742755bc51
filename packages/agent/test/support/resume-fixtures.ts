import {
  type Agent,
  AgentBuilder,
  type AgentConfig,
  type AgentError,
  type ChatRequest,
  type HookEvent,
  type HookPayload,
  type Message,
  type ModelInfo,
  type Plugin,
  type SessionEventPayload,
  type SessionStorage,
  type SkillDefinition,
  type ToolHandler,
  templates,
} from '../../src/index.js';
import {
  InMemoryMemoryStorage,
  InMemorySessionStorage,
  ScriptedModelProvider,
  type ScriptedModelProviderOptions,
} from '../../src/testing/index.js';

export { collect, expectCode, readUntil } from './common.js';

export const NO_MEMORIES = [{ type: 'text', text: '{"memories":[]}' }] as const;

export const lookup: ToolHandler = {
  name: 'lookup',
  description: 'looks a word up',
  parametersSchema: {
    type: 'object',
    properties: { q: { type: 'string' } },
    required: ['q'],
    additionalProperties: false,
  },
  isMutating: false,
  execute: async (input) => ({ content: `found ${(input.arguments as { q: string }).q}`, isError: false }),
};

export const explode: ToolHandler = {
  name: 'explode',
  description: 'always fails',
  parametersSchema: { type: 'object' },
  isMutating: true,
  execute: async () => {
    throw new Error('boom');
  },
};

export const review: SkillDefinition = {
  name: 'review',
  description: 'reviews a plan',
  prompt: 'Review carefully.',
};

/** A plugin that records which session hooks ran, with their payloads. */
export function sessionHooksPlugin(calls: HookPayload[]): Plugin {
  const events: HookEvent[] = ['SessionStart', 'SessionEnd'];
  return {
    id: 'recorder',
    displayName: 'Recorder',
    description: 'records session hooks',
    async initialize() {},
    apply(context) {
      for (const event of events) context.tap(event, (payload) => void calls.push(payload));
    },
    async shutdown() {},
  };
}

export interface Harness {
  agent: Agent;
  provider: ScriptedModelProvider;
  storage: InMemorySessionStorage;
  memory: InMemoryMemoryStorage;
  background: AgentError[];
}

export async function harness(
  options: {
    script?: ScriptedModelProviderOptions;
    config?: Partial<AgentConfig>;
    models?: ModelInfo[];
    withMemory?: boolean;
    sessionStorage?: SessionStorage | null;
    plugins?: Plugin[];
  } = {},
): Promise<Harness> {
  const provider = new ScriptedModelProvider({
    ...options.script,
    ...(options.models === undefined ? {} : { models: options.models }),
  });
  const storage = new InMemorySessionStorage();
  const memory = new InMemoryMemoryStorage();
  const background: AgentError[] = [];
  const builder = new AgentBuilder({
    defaultModel: 'scripted-model',
    onBackgroundError: (error) => background.push(error),
    ...options.config,
  })
    .registerModelProvider(provider)
    .registerTool(lookup)
    .registerTool(explode)
    .registerSkill(review);
  if (options.sessionStorage !== null) builder.registerSessionStorage(options.sessionStorage ?? storage);
  if (options.withMemory) builder.registerMemoryStorage(memory);
  for (const plugin of options.plugins ?? []) builder.registerPlugin(plugin);
  return { agent: await builder.build(), provider, storage, memory, background };
}

/** Writes a log by hand, as another process (or a crash) would have left it. */
export async function writeLog(
  storage: SessionStorage,
  sessionId: string,
  payloads: SessionEventPayload[],
): Promise<void> {
  for (const payload of payloads) await storage.saveEvent(sessionId, { timestamp: new Date(), payload });
}

export function userText(text: string): SessionEventPayload {
  return { type: 'user_message', content: [{ type: 'text', text }] };
}

export function assistantText(text: string): SessionEventPayload {
  return { type: 'assistant_message', content: [{ type: 'text', text }], status: 'complete' };
}

export function turnRequests(provider: ScriptedModelProvider): ChatRequest[] {
  return provider.requests.filter((request) => request.purpose === 'turn');
}

export function lastTurnRequest(provider: ScriptedModelProvider): ChatRequest {
  const request = turnRequests(provider).at(-1);
  if (request === undefined) throw new Error('no turn request was made');
  return request;
}

export const NOTICE: Message = { type: 'system', content: templates.INTERRUPTED_MESSAGE_NOTICE };
