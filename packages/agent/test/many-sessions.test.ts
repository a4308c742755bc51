import { describe, expect, test } from 'vitest';
import { type AgentEvent, isAgentError, type ModelProvider, type Session } from '../src/index.js';
import { ScriptedModelProvider } from '../src/testing/index.js';
import {
  collect,
  deferred,
  EXTRACTED,
  expectCode,
  harness,
  payloadTypes,
  recordingPlugin,
} from './support/session-fixtures.js';

/** Tries newSession until a slot is free, running the garbage collector between tries. */
async function newSessionAfterGc(agent: { newSession(): Promise<Session> }): Promise<Session | undefined> {
  for (let round = 0; round < 200; round += 1) {
    globalThis.gc?.();
    await new Promise((resolve) => setImmediate(resolve));
    try {
      return await agent.newSession();
    } catch (error) {
      if (!isAgentError(error) || error.code !== 'SESSION_BUSY') throw error;
    }
  }
  return undefined;
}

describe('maxActiveSessions', () => {
  test('N sessions stream at once on one Agent; the (N+1)th is SESSION_BUSY', async () => {
    const release = deferred();
    const provider = new ScriptedModelProvider({
      responses: [0, 1, 2].map(() => [{ type: 'text', text: 'answer' }] as const),
    });
    // Every answer waits until all three requests are in: the three streams are open at once.
    const gated: ModelProvider = {
      id: provider.id,
      models: provider.models,
      async *chat(request, signal) {
        const stream = provider.chat(request, signal);
        await release.promise;
        yield* stream;
      },
    };
    const { agent, storage } = await harness({ config: { maxActiveSessions: 3 }, provider: gated });
    const sessions = [await agent.newSession(), await agent.newSession(), await agent.newSession()];
    await expectCode(agent.newSession(), 'SESSION_BUSY');
    const turns = await Promise.all(
      sessions.map((session) => session.sendMessage(`hello from ${session.id}`)),
    );
    for (let round = 0; round < 50 && provider.requests.length < 3; round += 1) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(provider.requests).toHaveLength(3);
    expect(sessions.every((session) => session.isTurnRunning)).toBe(true);
    release.resolve();
    const streams = await Promise.all(turns.map((turn) => collect(turn)));
    for (const [index, events] of streams.entries()) {
      expect(events.map((event: AgentEvent) => event.payload.type)).toEqual(['text_delta', 'turn_complete']);
      expect(new Set(events.map((event) => event.sessionId))).toEqual(new Set([sessions[index]?.id]));
    }
    for (const session of sessions) {
      expect(payloadTypes(await storage.loadSession(session.id))).toEqual([
        'metadata',
        'user_message',
        'assistant_message',
      ]);
    }
    await agent.shutdown();
  });

  test('each session has its own turn guard: TURN_BUSY in one does not block another', async () => {
    const { agent } = await harness({
      config: { maxActiveSessions: 2 },
      script: { responses: [[{ type: 'hang' }], [{ type: 'text', text: 'free' }]] },
    });
    const busy = await agent.newSession();
    const free = await agent.newSession();
    const hanging = await busy.sendMessage('hang');
    await expectCode(busy.sendMessage('again'), 'TURN_BUSY');
    const answered = await collect(await free.sendMessage('go'));
    expect(answered.at(-1)?.payload.type).toBe('turn_complete');
    hanging.cancel();
    expect((await hanging.done).status).toBe('cancelled');
    await agent.shutdown();
  });

  test('resuming a session already active on the agent is SESSION_BUSY, even with free slots', async () => {
    const { agent } = await harness({ config: { maxActiveSessions: 4 } });
    const session = await agent.newSession();
    await expectCode(agent.resumeSession(session.id), 'SESSION_BUSY');
    await session.close();
    const resumed = await agent.resumeSession(session.id);
    expect(resumed.id).toBe(session.id);
    await agent.shutdown();
  });

  test('close() frees exactly its own slot', async () => {
    const { agent } = await harness({
      config: { maxActiveSessions: 2 },
      script: { responses: [[{ type: 'text', text: 'yes' }]] },
    });
    const first = await agent.newSession();
    const second = await agent.newSession();
    await expectCode(agent.newSession(), 'SESSION_BUSY');
    await first.close();
    const third = await agent.newSession();
    await expectCode(agent.newSession(), 'SESSION_BUSY');
    // The other session is untouched by the close.
    expect((await collect(await second.sendMessage('still here'))).at(-1)?.payload.type).toBe(
      'turn_complete',
    );
    await expectCode(first.sendMessage('closed'), 'SESSION_CLOSED');
    expect(third.id).not.toBe(first.id);
    await agent.shutdown();
  });

  test('shutdown() closes every active session: turns cancelled, SessionEnd once per session', async () => {
    const log: string[] = [];
    const { agent, background } = await harness({
      config: { maxActiveSessions: 3 },
      script: {
        responses: [[{ type: 'hang' }], [{ type: 'hang' }]],
        byPurpose: {
          memory_extraction: [[{ type: 'text', text: EXTRACTED }], [{ type: 'text', text: EXTRACTED }]],
        },
      },
      plugins: [recordingPlugin({ id: 'p', log, taps: ['SessionEnd'] })],
    });
    const sessions = [await agent.newSession(), await agent.newSession(), await agent.newSession()];
    const turns = [await sessions[0]!.sendMessage('a'), await sessions[1]!.sendMessage('b')];
    await agent.shutdown();
    expect((await Promise.all(turns.map((turn) => turn.done))).map((result) => result.status)).toEqual([
      'cancelled',
      'cancelled',
    ]);
    expect(log).toEqual(['p:SessionEnd', 'p:SessionEnd', 'p:SessionEnd', 'p:shutdown']);
    for (const session of sessions) await expectCode(session.sendMessage('after'), 'SESSION_CLOSED');
    expect(background).toEqual([]);
  });

  test('an abandoned session (garbage-collected) frees exactly its own slot, without SessionEnd', async () => {
    const log: string[] = [];
    const { agent } = await harness({
      config: { maxActiveSessions: 2 },
      script: { responses: [[{ type: 'hang' }], [{ type: 'text', text: 'hello' }]] },
      plugins: [recordingPlugin({ id: 'p', log, taps: ['SessionEnd'] })],
    });
    const kept = await agent.newSession();
    async function openAndDrop(): Promise<void> {
      const dropped = await agent.newSession();
      await dropped.sendMessage('left running');
    }
    await openAndDrop();
    const next = await newSessionAfterGc(agent);
    expect(next, 'the abandoned session never freed its slot').toBeDefined();
    // Two active again (kept and next): the slot of the kept session was not freed.
    await expectCode(agent.newSession(), 'SESSION_BUSY');
    expect((await collect(await kept.sendMessage('hi'))).at(-1)?.payload.type).toBe('turn_complete');
    expect(log).toEqual([]);
    await agent.shutdown();
    expect(log).toEqual(['p:SessionEnd', 'p:SessionEnd', 'p:shutdown']);
  });
});
