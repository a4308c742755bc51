import { describe, expect, test } from 'vitest';
import {
  type ChatEvent,
  type ChatRequest,
  isAgentError,
  type ModelProvider,
  type SessionStorage,
  type ToolHandler,
} from '../src/index.js';
import { InMemorySessionStorage, ScriptedModelProvider } from '../src/testing/index.js';

import {
  collect,
  deferred,
  expectCode,
  harness,
  payloadTypes,
  recordingPlugin,
  ticks,
} from './support/session-fixtures.js';

describe('shutdown() never hangs', () => {
  test('with a tool that ignores its signal and never resolves', async () => {
    const started = deferred();
    const stuck: ToolHandler = {
      name: 'stuck',
      description: 'never returns',
      parametersSchema: { type: 'object' },
      isMutating: true,
      execute() {
        started.resolve();
        return new Promise(() => {});
      },
    };
    const { agent } = await harness({
      script: { responses: [[{ type: 'tool_call', toolName: 'stuck' }], [{ type: 'hang' }]] },
      config: { toolTimeoutMs: 100 },
      tools: [stuck],
    });
    const session = await agent.newSession();
    const turn = await session.sendMessage('go');
    await started.promise;
    await agent.shutdown();
    expect((await turn.done).status).toBe('cancelled');
    await expectCode(session.sendMessage('again'), 'SESSION_CLOSED');
  });

  test('with a provider stream that hangs and ignores its signal', async () => {
    const called = deferred();
    const deaf: ModelProvider = {
      id: 'deaf',
      models: new ScriptedModelProvider().models,
      chat(_request: ChatRequest, _signal: AbortSignal): AsyncIterable<ChatEvent> {
        called.resolve();
        return { [Symbol.asyncIterator]: () => ({ next: () => new Promise(() => {}) }) };
      },
    };
    const { agent } = await harness({ provider: deaf, config: { toolTimeoutMs: 100 } });
    const session = await agent.newSession();
    await session.sendMessage('go');
    await called.promise;
    await agent.shutdown();
    await expectCode(session.sendMessage('again'), 'SESSION_CLOSED');
  });

  test('after shutdown, newSession, resumeSession and sendMessage reject SESSION_CLOSED', async () => {
    const { agent } = await harness();
    const session = await agent.newSession();
    await agent.shutdown();
    await agent.shutdown();
    await expectCode(agent.newSession(), 'SESSION_CLOSED');
    await expectCode(agent.resumeSession(session.id), 'SESSION_CLOSED');
    await expectCode(session.sendMessage('hi'), 'SESSION_CLOSED');
    await session.close();
  });

  test('a newSession still setting up when shutdown() is called rejects with SESSION_CLOSED', async () => {
    const inner = new InMemorySessionStorage();
    const gate = deferred();
    const gated: SessionStorage = {
      saveEvent: async (sessionId, event) => {
        await gate.promise;
        await inner.saveEvent(sessionId, event);
      },
      loadSession: (sessionId) => inner.loadSession(sessionId),
      listSessions: (cursor, limit) => inner.listSessions(cursor, limit),
      findSession: (query) => inner.findSession(query),
      deleteSession: (sessionId) => inner.deleteSession(sessionId),
    };
    const log: string[] = [];
    const { agent } = await harness({
      sessionStorage: gated,
      plugins: [recordingPlugin({ id: 'p', log, taps: ['SessionStart', 'SessionEnd'] })],
    });
    const pending = agent.newSession();
    await ticks();
    const shutdown = agent.shutdown();
    await ticks();
    gate.resolve();
    await shutdown;
    // Nothing of the plugin runs after its shutdown, whatever the outcome of the pending call.
    const outcome = pending.then(
      () => undefined,
      () => undefined,
    );
    await outcome;
    expect(log.at(-1)).toBe('p:shutdown');
    await expectCode(pending, 'SESSION_CLOSED');
  });
});

describe('turns and events', () => {
  test('a consumer that never reads events: the turn still completes and is persisted', async () => {
    const { agent, storage } = await harness({
      script: {
        responses: [
          [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        ],
      },
    });
    const session = await agent.newSession();
    const turn = await session.sendMessage('hello');
    expect((await turn.done).status).toBe('completed');
    expect((await storage.loadSession(session.id))?.at(-1)?.payload).toEqual({
      type: 'assistant_message',
      content: [{ type: 'text', text: 'ab' }],
      status: 'complete',
    });
    await agent.shutdown();
  });

  test('sequence strictly increases across two turns of one session', async () => {
    const { agent } = await harness({
      script: {
        responses: [
          [
            { type: 'text', text: 'one' },
            { type: 'text', text: 'two' },
          ],
          [{ type: 'text', text: 'three' }],
        ],
      },
    });
    const session = await agent.newSession();
    const first = await collect(await session.sendMessage('a'));
    const second = await collect(await session.sendMessage('b'));
    const sequences = [...first, ...second].map((event) => event.sequence);
    expect(sequences).toHaveLength(5);
    for (let index = 1; index < sequences.length; index += 1) {
      expect(sequences[index]).toBeGreaterThan(sequences[index - 1] as number);
    }
    expect(new Set(first.map((event) => event.turnId)).size).toBe(1);
    expect(first[0]?.turnId).not.toBe(second[0]?.turnId);
    await agent.shutdown();
  });
});

describe('background errors never reject the call that caused them', () => {
  test('SessionStart and SessionEnd handlers that throw go to onBackgroundError', async () => {
    const log: string[] = [];
    const { agent, background } = await harness({
      plugins: [
        recordingPlugin({
          id: 'p',
          log,
          taps: ['SessionStart', 'SessionEnd'],
          throwOn: ['SessionStart', 'SessionEnd'],
        }),
      ],
    });
    const session = await agent.newSession();
    expect(background.map((error) => error.code)).toEqual(['PLUGIN_ERROR']);
    await session.close();
    expect(background.map((error) => error.code)).toEqual(['PLUGIN_ERROR', 'PLUGIN_ERROR']);
    expect(log).toEqual(['p:SessionStart', 'p:SessionEnd']);
    await agent.shutdown();
  });

  test('a malformed memory extraction answer at close goes to onBackgroundError', async () => {
    const { agent, background, memory } = await harness({
      script: {
        responses: [[{ type: 'text', text: 'noted' }]],
        byPurpose: { memory_extraction: [[{ type: 'text', text: 'I would rather not.' }]] },
      },
    });
    const session = await agent.newSession();
    await (await session.sendMessage('I drink green tea')).done;
    await session.close();
    expect(background.map((error) => error.code)).toEqual(['MEMORY_ERROR']);
    expect(await memory.search('default', '', 10)).toEqual([]);
    await agent.newSession();
    await agent.shutdown();
  });

  test('a provider failure during extraction at close goes to onBackgroundError', async () => {
    const { agent, background } = await harness({
      script: {
        responses: [[{ type: 'text', text: 'noted' }]],
        byPurpose: { memory_extraction: [[{ type: 'error', error: new Error('rate limited') }]] },
      },
    });
    const session = await agent.newSession();
    await (await session.sendMessage('I drink green tea')).done;
    await session.close();
    expect(background).toHaveLength(1);
    expect(background[0]?.message).toContain('rate limited');
    await agent.shutdown();
  });

  test('close() does not hang when the extraction model ignores its signal', async () => {
    const scripted = new ScriptedModelProvider({ responses: [[{ type: 'text', text: 'noted' }]] });
    const deafForMemory: ModelProvider = {
      id: scripted.id,
      models: scripted.models,
      chat(request, signal) {
        if (request.purpose === 'turn') return scripted.chat(request, signal);
        return { [Symbol.asyncIterator]: () => ({ next: () => new Promise(() => {}) }) };
      },
    };
    const { agent } = await harness({ provider: deafForMemory, config: { toolTimeoutMs: 100 } });
    const session = await agent.newSession();
    await (await session.sendMessage('I drink green tea')).done;
    await session.close();
    await agent.newSession();
    await agent.shutdown();
  }, 5_000);

  test('an onBackgroundError that throws neither rejects newSession nor leaves the slot taken', async () => {
    const log: string[] = [];
    const { agent } = await harness({
      config: {
        onBackgroundError: () => {
          throw new Error('the host handler is broken');
        },
      },
      plugins: [recordingPlugin({ id: 'p', log, taps: ['SessionStart'], throwOn: ['SessionStart'] })],
    });
    const outcome = await agent.newSession().then(
      (session) => session.close(),
      (error: unknown) => error,
    );
    expect.soft(outcome, 'newSession (or close) rejected').toBeUndefined();
    const next = await agent.newSession().catch((error: unknown) => error);
    expect(isAgentError(next) ? next.code : 'a session', 'the slot stayed taken').toBe('a session');
    await agent.shutdown();
  });

  test('a storage that fails saveEvent makes newSession reject with STORAGE_ERROR and frees the slot', async () => {
    const inner = new InMemorySessionStorage();
    let failing = true;
    const flaky: SessionStorage = {
      saveEvent: (sessionId, event) =>
        failing ? Promise.reject(new Error('disk full')) : inner.saveEvent(sessionId, event),
      loadSession: (sessionId) => inner.loadSession(sessionId),
      listSessions: (cursor, limit) => inner.listSessions(cursor, limit),
      findSession: (query) => inner.findSession(query),
      deleteSession: (sessionId) => inner.deleteSession(sessionId),
    };
    const { agent } = await harness({ sessionStorage: flaky });
    await expectCode(agent.newSession(), 'STORAGE_ERROR');
    failing = false;
    const session = await agent.newSession();
    expect(payloadTypes(await inner.loadSession(session.id))).toEqual(['metadata']);
    await agent.shutdown();
  });
});
