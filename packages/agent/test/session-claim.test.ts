import { expect, test } from 'vitest';
import { AgentBuilder, AgentError, InMemorySessionStorage, type SessionClaim } from '../src/index.js';
import { ScriptedModelProvider } from '../src/testing/index.js';

/** An in-memory storage that hands out one claim per session, like a lease shared by processes. */
class ClaimingStorage extends InMemorySessionStorage {
  readonly held = new Set<string>();
  readonly log: string[] = [];

  async acquireSession(sessionId: string): Promise<SessionClaim> {
    if (this.held.has(sessionId)) {
      throw new AgentError({ code: 'SESSION_BUSY', message: `session '${sessionId}' is held elsewhere` });
    }
    this.held.add(sessionId);
    this.log.push(`acquire ${sessionId}`);
    return {
      release: async () => {
        this.held.delete(sessionId);
        this.log.push(`release ${sessionId}`);
      },
    };
  }
}

async function agentOn(storage: InMemorySessionStorage) {
  return new AgentBuilder({ defaultModel: 'scripted-model', memoryCheckpointInterval: 0 })
    .registerModelProvider(new ScriptedModelProvider({ responses: [[{ type: 'text', text: 'ok' }]] }))
    .registerSessionStorage(storage)
    .build();
}

test('newSession and resumeSession claim the session; close releases it; a second Agent gets SESSION_BUSY', async () => {
  const storage = new ClaimingStorage();
  const first = await agentOn(storage);
  const second = await agentOn(storage);
  const session = await first.newSession();
  expect(storage.held.has(session.id)).toBe(true);
  await expect(second.resumeSession(session.id)).rejects.toMatchObject({ code: 'SESSION_BUSY' });
  // The refused agent's slot is free again.
  await (await second.newSession()).close();
  await session.close();
  expect(storage.held.has(session.id)).toBe(false);
  const resumed = await second.resumeSession(session.id);
  expect(storage.held.has(session.id)).toBe(true);
  await second.shutdown();
  expect(storage.held.has(resumed.id)).toBe(false);
  await first.shutdown();
});

test('a resume that fails after the claim releases it', async () => {
  const storage = new ClaimingStorage();
  const agent = await agentOn(storage);
  await expect(agent.resumeSession('missing')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
  expect(storage.log).toEqual(['acquire missing', 'release missing']);
  await agent.shutdown();
});
