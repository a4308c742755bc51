/** An agent with tools that need approval, on a storage a test can share between agents. */
import {
  type Agent,
  AgentBuilder,
  type AgentConfig,
  type AgentError,
  type ChatRequest,
  type HookPayload,
  InMemorySessionStorage,
  type Message,
  type Plugin,
  type SessionStorage,
  type ToolHandler,
} from '../../src/index.js';
import { ScriptedModelProvider, type ScriptedResponse } from '../../src/testing/index.js';

/** Counts the runs of the approval tools, by tool name, with the arguments each got. */
export interface Runs {
  deploy: unknown[];
  write: unknown[];
  lookup: unknown[];
}

/** `deploy` always needs approval; `write` only for paths outside `src/`; `lookup` never. */
export function approvalTools(runs: Runs): ToolHandler[] {
  return [
    {
      name: 'deploy',
      description: 'deploys a service',
      parametersSchema: {
        type: 'object',
        properties: { service: { type: 'string' } },
        required: ['service'],
      },
      isMutating: true,
      needsApproval: true,
      execute: async (input) => {
        runs.deploy.push(input.arguments);
        return { content: `deployed ${(input.arguments as { service: string }).service}`, isError: false };
      },
    },
    {
      name: 'write',
      description: 'writes a file',
      parametersSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      isMutating: true,
      needsApproval: (args) => !(args as { path: string }).path.startsWith('src/'),
      execute: async (input) => {
        runs.write.push(input.arguments);
        return { content: `wrote ${(input.arguments as { path: string }).path}`, isError: false };
      },
    },
    {
      name: 'lookup',
      description: 'looks a word up',
      parametersSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      isMutating: false,
      execute: async (input) => {
        runs.lookup.push(input.arguments);
        return { content: `found ${(input.arguments as { q: string }).q}`, isError: false };
      },
    },
  ];
}

/** A plugin that records the TurnEnd payloads. */
export function turnEndRecorder(calls: HookPayload[]): Plugin {
  return {
    id: 'turn-end-recorder',
    displayName: 'TurnEnd recorder',
    description: 'records TurnEnd',
    async initialize() {},
    apply(context) {
      context.tap('TurnEnd', (payload) => void calls.push(payload));
    },
    async shutdown() {},
  };
}

/** One agent of a test: its provider, its tools' runs and its background errors. */
export interface ApprovalHarness {
  agent: Agent;
  provider: ScriptedModelProvider;
  runs: Runs;
  background: AgentError[];
}

/** Builds an agent with the approval tools on `storage` (a fresh in-memory one when absent). */
export async function approvalAgent(
  options: {
    storage?: SessionStorage;
    responses?: readonly ScriptedResponse[];
    config?: Partial<AgentConfig>;
    plugins?: Plugin[];
    tools?: ToolHandler[];
  } = {},
): Promise<ApprovalHarness> {
  const runs: Runs = { deploy: [], write: [], lookup: [] };
  const background: AgentError[] = [];
  const provider = new ScriptedModelProvider({ responses: options.responses ?? [] });
  const builder = new AgentBuilder({
    defaultModel: 'scripted-model',
    onBackgroundError: (error) => background.push(error),
    ...options.config,
  })
    .registerModelProvider(provider)
    .registerSessionStorage(options.storage ?? new InMemorySessionStorage());
  for (const tool of [...approvalTools(runs), ...(options.tools ?? [])]) builder.registerTool(tool);
  for (const plugin of options.plugins ?? []) builder.registerPlugin(plugin);
  return { agent: await builder.build(), provider, runs, background };
}

/** The tool results of a request's messages. */
export function resultsIn(request: ChatRequest | undefined): Extract<Message, { type: 'tool_result' }>[] {
  return (request?.messages ?? []).filter(
    (message): message is Extract<Message, { type: 'tool_result' }> => message.type === 'tool_result',
  );
}
