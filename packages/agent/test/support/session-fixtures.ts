import {
  type Agent,
  AgentBuilder,
  type AgentConfig,
  type AgentError,
  type HookEvent,
  type HookPayload,
  type ModelProvider,
  type Plugin,
  type SessionEvent,
  type SessionStorage,
  type ToolHandler,
  type ToolInput,
} from '../../src/index.js';
import {
  InMemoryMemoryStorage,
  InMemorySessionStorage,
  ScriptedModelProvider,
  type ScriptedModelProviderOptions,
} from '../../src/testing/index.js';

export { collect, type Deferred, deferred, expectCode, readUntil } from './common.js';

export const EXTRACTED = '{"memories":[{"content":"The user drinks green tea","category":"preference"}]}';

/** Lets pending work (promise chains, I/O callbacks, finalizers) run for a few macrotask turns. */
export async function ticks(count = 5): Promise<void> {
  for (let index = 0; index < count; index += 1) await new Promise((resolve) => setImmediate(resolve));
}

/** A read-only tool that waits for `gate` (or forever) and records the signals it got. */
export function gateTool(options: {
  name?: string;
  gate: Promise<void>;
  signals?: AbortSignal[];
}): ToolHandler {
  return {
    name: options.name ?? 'wait',
    description: 'waits for the test to let it go',
    parametersSchema: { type: 'object', properties: {} },
    isMutating: false,
    async execute(input: ToolInput) {
      options.signals?.push(input.signal);
      await options.gate;
      return { content: 'released', isError: false };
    },
  };
}

/** A plugin that records, in `log`, every hook call it taps and its shutdown; a handler may throw. */
export function recordingPlugin(options: {
  id: string;
  log: string[];
  taps?: readonly HookEvent[];
  payloads?: HookPayload[];
  throwOn?: readonly HookEvent[];
}): Plugin {
  return {
    id: options.id,
    displayName: options.id,
    description: `records for ${options.id}`,
    async initialize() {},
    apply(context) {
      for (const event of options.taps ?? []) {
        context.tap(event, (payload) => {
          options.log.push(`${options.id}:${event}`);
          options.payloads?.push(payload);
          if (options.throwOn?.includes(event)) throw new Error(`${options.id} fails in ${event}`);
        });
      }
    },
    async shutdown() {
      options.log.push(`${options.id}:shutdown`);
    },
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
    tools?: ToolHandler[];
    plugins?: Plugin[];
    provider?: ModelProvider;
    sessionStorage?: SessionStorage;
  } = {},
): Promise<Harness> {
  const provider = new ScriptedModelProvider(options.script);
  const storage = new InMemorySessionStorage();
  const memory = new InMemoryMemoryStorage();
  const background: AgentError[] = [];
  const builder = new AgentBuilder({
    defaultModel: 'scripted-model',
    onBackgroundError: (error) => background.push(error),
    ...options.config,
  })
    .registerModelProvider(options.provider ?? provider)
    .registerSessionStorage(options.sessionStorage ?? storage)
    .registerMemoryStorage(memory);
  for (const tool of options.tools ?? []) builder.registerTool(tool);
  for (const plugin of options.plugins ?? []) builder.registerPlugin(plugin);
  return { agent: await builder.build(), provider, storage, memory, background };
}

export function payloadTypes(events: readonly SessionEvent[] | null): string[] {
  return (events ?? []).map((event) => event.payload.type);
}
