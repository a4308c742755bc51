import { afterEach, describe, expect, test } from 'vitest';
import type { Message } from '../src/kernel/types.js';
import { MEMORY_RESPONSE_FORMAT, MemoryManager } from '../src/memory/memory.js';
import { InMemoryMemoryStorage, ScriptedModelProvider, scriptedModel } from '../src/testing/index.js';
import { buildAgent, collectTurn, shutdownAgents } from './support/agent-fixtures.js';

afterEach(shutdownAgents);

const NATIVE = scriptedModel({
  capabilities: { toolUse: true, vision: true, streaming: true, structuredOutput: true },
});

const CONVERSATION: Message[] = [
  { type: 'user', content: [{ type: 'text', text: 'I always use tabs, and I live in Oslo.' }] },
  { type: 'assistant', content: [{ type: 'text', text: 'Noted.' }], status: 'complete' },
];

function manager(storage: InMemoryMemoryStorage, maxItems = 10): MemoryManager {
  return new MemoryManager({ storage, namespace: 'ns', maxItems });
}

describe('memory extraction and consolidation with structured output', () => {
  test('a model that honours responseFormat is asked for the memories schema; its JSON answer is saved', async () => {
    const provider = new ScriptedModelProvider({
      models: [NATIVE],
      byPurpose: {
        memory_extraction: [
          [
            {
              type: 'json',
              value: {
                memories: [
                  { content: 'The user indents with tabs.', category: 'preference' },
                  { content: 'The user lives in Oslo.', category: null },
                ],
              },
              chunks: 3,
            },
          ],
        ],
      },
    });
    const storage = new InMemoryMemoryStorage();
    const saved = await manager(storage).extract({
      messages: CONVERSATION,
      provider,
      modelId: NATIVE.id,
      sessionId: 's1',
      signal: new AbortController().signal,
    });
    expect(saved.map((memory) => [memory.content, memory.category])).toEqual([
      ['The user indents with tabs.', 'preference'],
      ['The user lives in Oslo.', undefined],
    ]);
    expect(provider.requests[0]?.responseFormat).toEqual(MEMORY_RESPONSE_FORMAT);
    expect((await storage.search('ns', '', 10)).length).toBe(2);
  });

  test('consolidation asks for the same schema and replaces the store with the merged answer', async () => {
    const storage = new InMemoryMemoryStorage();
    for (const [index, content] of ['A one.', 'A two.', 'B.'].entries()) {
      const at = new Date(Date.UTC(2025, 0, 1, 0, 0, index));
      await storage.save({ id: `m${index}`, namespace: 'ns', content, createdAt: at, updatedAt: at });
    }
    const provider = new ScriptedModelProvider({
      models: [NATIVE],
      byPurpose: {
        memory_extraction: [[{ type: 'json', value: { memories: [{ content: 'C.', category: null }] } }]],
        memory_consolidation: [
          [
            {
              type: 'json',
              value: {
                memories: [
                  { content: 'A.', category: 'fact' },
                  { content: 'B and C.', category: null },
                ],
              },
            },
          ],
        ],
      },
    });
    await manager(storage, 3).extract({
      messages: CONVERSATION,
      provider,
      modelId: NATIVE.id,
      sessionId: 's1',
      signal: new AbortController().signal,
    });
    const consolidation = provider.requests.find((request) => request.purpose === 'memory_consolidation');
    expect(consolidation?.responseFormat).toEqual(MEMORY_RESPONSE_FORMAT);
    expect((await storage.search('ns', '', 10)).map((memory) => memory.content).sort()).toEqual([
      'A.',
      'B and C.',
    ]);
  });

  test('a model without it gets no responseFormat, and JSON in prose is still read', async () => {
    const provider = new ScriptedModelProvider({
      byPurpose: {
        memory_extraction: [
          [{ type: 'text', text: 'Here you go:\n```json\n{"memories":[{"content":"Likes tea."}]}\n```' }],
        ],
      },
    });
    const storage = new InMemoryMemoryStorage();
    const saved = await manager(storage).extract({
      messages: CONVERSATION,
      provider,
      modelId: 'scripted-model',
      sessionId: 's1',
      signal: new AbortController().signal,
    });
    expect(saved.map((memory) => memory.content)).toEqual(['Likes tea.']);
    expect(provider.requests[0]?.responseFormat).toBeUndefined();
  });

  test('the checkpoint of a turn on a structured-output model sends the format', async () => {
    const provider = new ScriptedModelProvider({
      models: [NATIVE],
      responses: [[{ type: 'text', text: 'Hi.' }]],
      byPurpose: { memory_extraction: [[{ type: 'json', value: { memories: [] } }]] },
    });
    const { agent } = await buildAgent({
      provider,
      memoryStorage: new InMemoryMemoryStorage(),
      config: { memoryCheckpointInterval: 1 },
    });
    const session = await agent.newSession();
    const turn = await collectTurn(await session.sendMessage('I like tea.'));
    expect(turn.errors).toEqual([]);
    const extraction = provider.requests.find((request) => request.purpose === 'memory_extraction');
    expect(extraction?.responseFormat?.name).toBe('memories');
  });
});
