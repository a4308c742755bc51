import { expect, test } from 'vitest';
import { AgentBuilder, AgentError, InMemorySessionStorage, type ToolHandler } from '../src/index.js';
import { ScriptedModelProvider } from '../src/testing/index.js';

function slowTool(release: Promise<void>): ToolHandler {
  return {
    name: 'slow',
    description: 'waits',
    parametersSchema: { type: 'object', properties: {} },
    isMutating: false,
    execute: async () => {
      await release;
      return { content: 'slow done', isError: false };
    },
  };
}

test('readSession reads a session while its turn runs, takes no slot and writes nothing', async () => {
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const storage = new InMemorySessionStorage();
  const agent = await new AgentBuilder({ defaultModel: 'scripted-model', maxActiveSessions: 1 })
    .registerModelProvider(
      new ScriptedModelProvider({
        responses: [
          [{ type: 'tool_call', toolName: 'slow', arguments: {}, callId: 'call_1' }],
          [{ type: 'text', text: 'finished' }],
        ],
      }),
    )
    .registerSessionStorage(storage)
    .registerTool(slowTool(released))
    .build();
  const session = await agent.newSession();
  const turn = await session.sendMessage('go');
  const events = turn.events()[Symbol.asyncIterator]();
  for (;;) {
    const next = await events.next();
    if (next.done === true || next.value.payload.type === 'tool_call_start') break;
  }
  const before = (await storage.loadSession(session.id))?.length;
  // The only slot is taken by the running session: a read needs none.
  const snapshot = await agent.readSession(session.id);
  expect(snapshot.messages.map((message) => message.type)).toEqual(['user', 'tool_call']);
  expect(snapshot.pendingApprovals).toEqual([]);
  expect(snapshot.turnCount).toBe(1);
  expect((await storage.loadSession(session.id))?.length).toBe(before);
  release();
  expect((await turn.done).status).toBe('completed');
  const after = await agent.readSession(session.id);
  expect(after.messages.map((message) => message.type)).toEqual([
    'user',
    'tool_call',
    'tool_result',
    'assistant',
  ]);
  expect(after.messages).toEqual(session.messages());
  await agent.shutdown();
});

test('readSession shows the calls a suspended turn waits on, and refuses an unknown or bad id', async () => {
  const storage = new InMemorySessionStorage();
  const agent = await new AgentBuilder({ defaultModel: 'scripted-model' })
    .registerModelProvider(
      new ScriptedModelProvider({
        responses: [[{ type: 'tool_call', toolName: 'deploy', arguments: { to: 'prod' }, callId: 'call_d' }]],
      }),
    )
    .registerSessionStorage(storage)
    .registerTool({
      name: 'deploy',
      description: 'deploys',
      parametersSchema: { type: 'object', properties: { to: { type: 'string' } } },
      isMutating: true,
      needsApproval: true,
      execute: async () => ({ content: 'deployed', isError: false }),
    })
    .build();
  const session = await agent.newSession();
  const turn = await session.sendMessage('ship');
  expect((await turn.done).status).toBe('suspended');
  const snapshot = await agent.readSession(session.id);
  expect(snapshot.pendingApprovals).toEqual([
    { callId: 'call_d', toolName: 'deploy', arguments: { to: 'prod' } },
  ]);
  expect(snapshot.pendingApprovals).toEqual(session.pendingApprovals());
  await expect(agent.readSession('no-such-session')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
  await expect(agent.readSession('' as string)).rejects.toBeInstanceOf(AgentError);
  await agent.shutdown();
  await expect(agent.readSession(session.id)).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
});
