import { expect, test } from 'vitest';
import { AgentBuilder, type AgentEvent, type ModelInfo } from '../src/index.js';
import { InMemorySessionStorage, ScriptedModelProvider, scriptedModel } from '../src/testing/index.js';

test('an unexpected exception in a turn is INTERNAL_ERROR with its cause kept, not STORAGE_ERROR', async () => {
  // A model description that breaks after build() (a getter of the host's that starts throwing): the turn
  // meets an exception no part of the runtime expects, while the storage works.
  const fault = new TypeError('capabilities are gone');
  let broken = false;
  const plain = scriptedModel();
  const model: ModelInfo = {
    id: plain.id,
    displayName: plain.displayName,
    contextWindow: plain.contextWindow,
    get capabilities() {
      if (broken) throw fault;
      return plain.capabilities;
    },
  };
  const provider = new ScriptedModelProvider({
    models: [model],
    responses: [[{ type: 'text', text: 'hi' }]],
  });
  const storage = new InMemorySessionStorage();
  const agent = await new AgentBuilder({ defaultModel: model.id })
    .registerModelProvider(provider)
    .registerSessionStorage(storage)
    .build();
  const session = await agent.newSession();
  broken = true;

  const turn = await session.sendMessage('hello');
  const events: AgentEvent[] = [];
  for await (const event of turn) events.push(event);
  expect((await turn.done).status).toBe('failed');
  const errors = events.flatMap((event) => (event.payload.type === 'error' ? [event.payload.error] : []));
  expect(errors).toHaveLength(1);
  expect(errors[0]?.code).toBe('INTERNAL_ERROR');
  expect(errors[0]?.sourceComponent).toBe('agent');
  expect(errors[0]?.cause).toBe(fault);
  expect(events.at(-1)?.payload.type).toBe('turn_complete');

  // The storage was fine all along: the user message is saved.
  const saved = (await storage.loadSession(session.id)) ?? [];
  // The record that the failed turn ended follows its user message.
  expect(saved.map((event) => event.payload.type)).toEqual(['metadata', 'user_message', 'metadata']);
  await agent.shutdown();
});

test('a storage failure in a turn is still STORAGE_ERROR', async () => {
  let failing = false;
  class FailingStorage extends InMemorySessionStorage {
    override async saveEvent(...args: Parameters<InMemorySessionStorage['saveEvent']>): Promise<void> {
      if (failing) throw new Error('disk full');
      return super.saveEvent(...args);
    }
  }
  const storage = new FailingStorage();
  const provider = new ScriptedModelProvider({ responses: [[{ type: 'text', text: 'hi' }]] });
  const agent = await new AgentBuilder({ defaultModel: 'scripted-model' })
    .registerModelProvider(provider)
    .registerSessionStorage(storage)
    .build();
  const session = await agent.newSession();
  failing = true;
  const turn = await session.sendMessage('hello');
  const codes: string[] = [];
  for await (const event of turn) if (event.payload.type === 'error') codes.push(event.payload.error.code);
  expect(codes).toEqual(['STORAGE_ERROR']);
  await agent.shutdown();
});
