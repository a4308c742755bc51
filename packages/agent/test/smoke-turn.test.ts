import { expect, test } from 'vitest';
import { AgentBuilder, type AgentEvent } from '../src/index.js';
import { ScriptedModelProvider } from '../src/testing/index.js';

test('a turn streams text and ends with turn_complete', async () => {
  const provider = new ScriptedModelProvider({
    responses: [
      [
        { type: 'text', text: 'Hel' },
        { type: 'text', text: 'lo' },
      ],
    ],
  });
  const agent = await new AgentBuilder({ defaultModel: 'scripted-model' })
    .registerModelProvider(provider)
    .build();
  const session = await agent.newSession();
  const turn = await session.sendMessage('hi');
  const events: AgentEvent[] = [];
  for await (const event of turn) events.push(event);
  expect(events.map((event) => event.payload.type)).toEqual(['text_delta', 'text_delta', 'turn_complete']);
  expect(session.messages()).toEqual([
    { type: 'user', content: [{ type: 'text', text: 'hi' }] },
    { type: 'assistant', content: [{ type: 'text', text: 'Hello' }], status: 'complete' },
  ]);
  await session.close();
  await agent.shutdown();
});
