import {
  type Agent,
  AgentBuilder,
  type AgentError,
  type AgentEvent,
  type RunningTurn,
  type SessionEventPayload,
  type ToolHandler,
} from '@youyou/agent';
import { ScriptedModelProvider, type ScriptedResponse } from '@youyou/agent/testing';
import type { SqliteStorage } from '../../src/index.js';

/** A read-only tool that answers at once. */
export const lookupTool: ToolHandler = {
  name: 'lookup',
  description: 'looks a word up',
  parametersSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  isMutating: false,
  execute: async (input) => ({ content: `found ${(input.arguments as { q: string }).q}`, isError: false }),
};

/** An agent on the SQLite storages with a scripted model; background errors are collected, not printed. */
export async function buildAgent(options: {
  storage: SqliteStorage;
  responses?: readonly ScriptedResponse[];
  memoryAnswers?: readonly ScriptedResponse[];
}): Promise<{ agent: Agent; provider: ScriptedModelProvider; background: AgentError[] }> {
  const background: AgentError[] = [];
  const provider = new ScriptedModelProvider({
    responses: options.responses ?? [],
    byPurpose: { memory_extraction: options.memoryAnswers ?? [[{ type: 'text', text: '{"memories":[]}' }]] },
  });
  const agent = await new AgentBuilder({
    defaultModel: 'scripted-model',
    onBackgroundError: (error) => background.push(error),
  })
    .registerModelProvider(provider)
    .registerTool(lookupTool)
    .registerSessionStorage(options.storage.sessions)
    .registerMemoryStorage(options.storage.memories)
    .build();
  return { agent, provider, background };
}

/** Every event of a turn, read to its end. */
export async function eventsOf(turn: RunningTurn): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of turn) events.push(event);
  return events;
}

/** A compact view of a stored log: the type of each event, with its text where it has one. */
export function describeLog(payloads: readonly SessionEventPayload[]): string[] {
  return payloads.map((payload) => {
    switch (payload.type) {
      case 'user_message':
      case 'assistant_message':
        return `${payload.type}: ${payload.content.map((block) => ('text' in block ? block.text : block.type)).join('')}`;
      case 'tool_call':
        return `tool_call: ${payload.toolName} ${payload.callId}`;
      case 'tool_result':
        return `tool_result: ${payload.callId} ${payload.isError ? 'error' : 'ok'}`;
      case 'system_message':
        return `system_message: ${payload.content}`;
      default:
        return `metadata: ${payload.key}`;
    }
  });
}
