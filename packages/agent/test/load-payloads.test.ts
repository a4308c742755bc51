import { expect, test } from 'vitest';
import {
  AgentBuilder,
  InMemorySessionStorage,
  type SessionEvent,
  type SessionEventPayload,
  type SessionStorage,
} from '../src/index.js';
import { ScriptedModelProvider } from '../src/testing/index.js';

/** The in-memory storage as a host's storage that counts its loads; `withPayloads` false hides `loadPayloads`. */
function countingStorage(withPayloads: boolean) {
  const inner = new InMemorySessionStorage();
  const loads = { sessions: 0, payloads: 0 };
  const storage: SessionStorage = {
    saveEvent: (sessionId, event) => inner.saveEvent(sessionId, event),
    loadSession: (sessionId) => {
      loads.sessions += 1;
      return inner.loadSession(sessionId);
    },
    listSessions: (cursor, limit) => inner.listSessions(cursor, limit),
    findSession: (query) => inner.findSession(query),
    deleteSession: (sessionId) => inner.deleteSession(sessionId),
  };
  if (withPayloads) {
    storage.loadPayloads = (sessionId: string): Promise<SessionEventPayload[] | null> => {
      loads.payloads += 1;
      return inner.loadPayloads(sessionId);
    };
  }
  return { storage, loads };
}

async function agentOn(storage: SessionStorage) {
  return new AgentBuilder({ defaultModel: 'scripted-model' })
    .registerModelProvider(
      new ScriptedModelProvider({
        responses: [[{ type: 'text', text: 'first answer' }], [{ type: 'text', text: 'second answer' }]],
      }),
    )
    .registerSessionStorage(storage)
    .build();
}

for (const withPayloads of [true, false]) {
  test(`resume, read and fork read the log ${withPayloads ? 'by loadPayloads' : 'by loadSession'}, to the same history`, async () => {
    const { storage, loads } = countingStorage(withPayloads);
    const agent = await agentOn(storage);
    const session = await agent.newSession();
    await (await session.sendMessage('first question')).done;
    const history = session.messages();
    await session.close();
    loads.sessions = 0;
    loads.payloads = 0;

    const snapshot = await agent.readSession(session.id);
    expect(snapshot.messages).toEqual(history);
    const resumed = await agent.resumeSession(session.id);
    expect(resumed.messages()).toEqual(history);
    const done = await (await resumed.sendMessage('second question')).done;
    expect(done.status).toBe('completed');
    expect(resumed.messages().map((message) => message.type)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    await resumed.close();
    const fork = await agent.forkSession(session.id);
    expect(fork.messages()).toEqual(resumed.messages());
    await fork.close();

    // Four reads of a log (the read, the resume, the fork's source, the fork opened), each by one method of the port.
    expect(withPayloads ? loads : { sessions: loads.sessions }).toEqual(
      withPayloads ? { sessions: 0, payloads: 4 } : { sessions: 4 },
    );
    await agent.shutdown();
  });
}

test('InMemorySessionStorage.loadPayloads answers what loadSession answers, without the timestamps', async () => {
  const storage = new InMemorySessionStorage();
  const saved: SessionEvent[] = [
    { timestamp: new Date(1), payload: { type: 'user_message', content: [{ type: 'text', text: 'hi' }] } },
    {
      timestamp: new Date(2),
      payload: { type: 'tool_call', callId: 'c', toolName: 't', arguments: { n: 1 } },
    },
  ];
  for (const event of saved) await storage.saveEvent('s', event);
  const payloads = await storage.loadPayloads('s');
  expect(payloads).toEqual(saved.map((event) => event.payload));
  expect(payloads).toEqual((await storage.loadSession('s'))?.map((event) => event.payload));
  expect(await storage.loadPayloads('none')).toBeNull();
});

test('a subclass of the in-memory storage that overrides loadSession is resumed through its override', async () => {
  /** Leaves out the notes a newer version of the host wrote: what a migration in loadSession would do. */
  class FilteringStorage extends InMemorySessionStorage {
    override async loadSession(sessionId: string): Promise<SessionEvent[] | null> {
      const log = await super.loadSession(sessionId);
      return log?.filter((event) => event.payload.type !== 'system_message') ?? null;
    }
  }
  const storage = new FilteringStorage();
  const saved: SessionEventPayload[] = [
    { type: 'metadata', key: 'session_config', value: { modelId: 'scripted-model' } },
    { type: 'user_message', content: [{ type: 'text', text: 'hi' }] },
    { type: 'system_message', content: 'left out by the subclass' },
    { type: 'assistant_message', content: [{ type: 'text', text: 'hello' }], status: 'complete' },
  ];
  for (const payload of saved) await storage.saveEvent('s', { timestamp: new Date(1), payload });
  expect(await storage.loadPayloads('s')).toEqual(
    saved.filter((payload) => payload.type !== 'system_message'),
  );
  const agent = await agentOn(storage);
  const resumed = await agent.resumeSession('s');
  expect(resumed.messages().map((message) => message.type)).toEqual(['user', 'assistant']);
  await agent.shutdown();
});

test('a loadPayloads that fails or finds nothing: resume, read and fork reject with STORAGE_ERROR or SESSION_NOT_FOUND', async () => {
  const { storage } = countingStorage(true);
  const agent = await agentOn(storage);
  const session = await agent.newSession();
  await (await session.sendMessage('first question')).done;
  await session.close();

  storage.loadPayloads = () => Promise.reject(new Error('disk unreadable'));
  for (const read of [
    () => agent.resumeSession(session.id),
    () => agent.readSession(session.id),
    () => agent.forkSession(session.id),
  ]) {
    await expect(read()).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
  }
  storage.loadPayloads = () => Promise.resolve(null);
  for (const read of [
    () => agent.resumeSession(session.id),
    () => agent.readSession(session.id),
    () => agent.forkSession(session.id),
  ]) {
    await expect(read()).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
  }
  // A failed resume gave its slot back: the session opens once the storage answers again.
  delete storage.loadPayloads;
  const resumed = await agent.resumeSession(session.id);
  expect(resumed.messages()).toHaveLength(2);
  await agent.shutdown();
});
