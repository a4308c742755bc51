import {
  type Agent,
  AgentBuilder,
  type AgentEvent,
  type RunningTurn,
  type Session,
  type ToolHandler,
} from '@youyou/agent';
import { ScriptedModelProvider, type ScriptedModelProviderOptions } from '@youyou/agent/testing';
import type { PostgresStorage } from '../../src/index.js';

/** A read-only tool the scripted model calls. */
export const lookupTool: ToolHandler = {
  name: 'lookup',
  description: 'Looks a word up.',
  parametersSchema: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
  isMutating: false,
  async execute(input) {
    return { content: `definition of ${(input.arguments as { word: string }).word}`, isError: false };
  },
};

/** A memory extraction answer that extracts nothing. */
const NO_MEMORIES = [{ type: 'text' as const, text: '{"memories": []}' }];

/**
 * An Agent with a scripted model, the lookup tool and both PostgreSQL storages. Memory extractions get
 * `script.byPurpose.memory_extraction`, else answers that extract nothing, so they never eat turn answers.
 */
export async function agentOn(
  storage: PostgresStorage,
  script: ScriptedModelProviderOptions = {},
): Promise<{ agent: Agent; provider: ScriptedModelProvider }> {
  const provider = new ScriptedModelProvider({
    ...script,
    byPurpose: { memory_extraction: Array.from({ length: 20 }, () => NO_MEMORIES), ...script.byPurpose },
  });
  const agent = await new AgentBuilder({ defaultModel: 'scripted-model', onBackgroundError: () => undefined })
    .registerModelProvider(provider)
    .registerTool(lookupTool)
    .registerSessionStorage(storage.sessions)
    .registerMemoryStorage(storage.memories)
    .build();
  return { agent, provider };
}

/** Every event of a turn. */
export async function drain(turn: RunningTurn): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of turn) events.push(event);
  return events;
}

/** Sends a message and reads the whole turn. */
export async function runTurn(session: Session, text: string): Promise<AgentEvent[]> {
  return drain(await session.sendMessage(text));
}

/** The payload types of a turn's events, in order. */
export function eventTypes(events: readonly AgentEvent[]): string[] {
  return events.map((event) => event.payload.type);
}
