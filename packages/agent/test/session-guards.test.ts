import { describe, expect, test } from 'vitest';
import { type HookPayload, isAgentError, type ModelProvider, type Session } from '../src/index.js';
import { ScriptedModelProvider } from '../src/testing/index.js';

import {
  collect,
  deferred,
  EXTRACTED,
  expectCode,
  gateTool,
  harness,
  payloadTypes,
  readUntil,
  recordingPlugin,
  ticks,
} from './support/session-fixtures.js';

describe('one active session, one turn per session', () => {
  test('a second newSession is SESSION_BUSY until the first is closed', async () => {
    const { agent } = await harness();
    const first = await agent.newSession();
    await expectCode(agent.newSession(), 'SESSION_BUSY');
    await expectCode(agent.newSession(), 'SESSION_BUSY');
    await first.close();
    const second = await agent.newSession();
    expect(second.id).not.toBe(first.id);
    await agent.shutdown();
  });

  test('sendMessage while a turn runs is TURN_BUSY; after it ends a new turn runs', async () => {
    const { agent } = await harness({
      script: {
        responses: [[{ type: 'text', text: 'thinking' }, { type: 'hang' }], [{ type: 'text', text: 'ok' }]],
      },
    });
    const session = await agent.newSession();
    const turn = await session.sendMessage('first');
    await readUntil(turn, 'text_delta');
    expect(session.isTurnRunning).toBe(true);
    await expectCode(session.sendMessage('second'), 'TURN_BUSY');
    turn.cancel();
    expect((await turn.done).status).toBe('cancelled');
    const next = await session.sendMessage('third');
    expect((await collect(next)).at(-1)?.payload.type).toBe('turn_complete');
    await agent.shutdown();
  });
});

describe('running-guard semantics (0006 §8)', () => {
  test('close() with a running turn waits for it to end and does not cancel it', async () => {
    const gate = deferred();
    const signals: AbortSignal[] = [];
    const { agent, storage } = await harness({
      script: {
        responses: [[{ type: 'tool_call', toolName: 'wait' }], [{ type: 'text', text: 'finished' }]],
      },
      tools: [gateTool({ gate: gate.promise, signals })],
    });
    const session = await agent.newSession();
    const turn = await session.sendMessage('go');
    await readUntil(turn, 'tool_call_start');
    let closed = false;
    const closing = session.close().then(() => {
      closed = true;
    });
    await ticks(20);
    expect(closed).toBe(false);
    expect(signals[0]?.aborted).toBe(false);
    gate.resolve();
    await closing;
    expect((await turn.done).status).toBe('completed');
    const events = await collect(turn);
    expect(events.at(-1)?.payload.type).toBe('turn_complete');
    const log = await storage.loadSession(session.id);
    expect(log?.at(-1)?.payload).toEqual({
      type: 'assistant_message',
      content: [{ type: 'text', text: 'finished' }],
      status: 'complete',
    });
    await agent.shutdown();
  });

  test('turn.cancel() ends the turn with turn_cancelled', async () => {
    const { agent } = await harness({
      script: { responses: [[{ type: 'text', text: 'par' }, { type: 'hang' }]] },
    });
    const session = await agent.newSession();
    const turn = await session.sendMessage('go');
    await readUntil(turn, 'text_delta');
    turn.cancel();
    const rest = await collect(turn);
    expect(rest.map((event) => event.payload.type)).toEqual(['turn_cancelled']);
    expect((await turn.done).status).toBe('cancelled');
    await agent.shutdown();
  });

  test('dropping the RunningTurn frees nothing: the turn runs to its end and is persisted', async () => {
    const gate = deferred();
    const signals: AbortSignal[] = [];
    const { agent, storage } = await harness({
      script: {
        responses: [[{ type: 'tool_call', toolName: 'wait' }], [{ type: 'text', text: 'done anyway' }]],
      },
      tools: [gateTool({ gate: gate.promise, signals })],
    });
    const session = await agent.newSession();
    await session.sendMessage('go');
    for (let round = 0; round < 10 && signals.length === 0; round += 1) {
      globalThis.gc?.();
      await ticks();
    }
    expect(signals).toHaveLength(1);
    expect(signals[0]?.aborted).toBe(false);
    expect(session.isTurnRunning).toBe(true);
    await expectCode(session.sendMessage('again'), 'TURN_BUSY');
    gate.resolve();
    await session.close();
    expect(payloadTypes(await storage.loadSession(session.id))).toEqual([
      'metadata',
      'user_message',
      'tool_call',
      'tool_result',
      'assistant_message',
    ]);
    await agent.shutdown();
  });
});

describe('close paths (0006 §8, SPEC §4)', () => {
  test('close() runs SessionEnd with the turn count and extracts memories', async () => {
    const log: string[] = [];
    const payloads: HookPayload[] = [];
    const { agent, provider, memory } = await harness({
      script: {
        responses: [[{ type: 'text', text: 'noted' }]],
        byPurpose: { memory_extraction: [[{ type: 'text', text: EXTRACTED }]] },
      },
      plugins: [recordingPlugin({ id: 'p', log, taps: ['SessionEnd'], payloads })],
    });
    const session = await agent.newSession();
    await (await session.sendMessage('I drink green tea')).done;
    await session.close();
    expect(log).toEqual(['p:SessionEnd']);
    expect(payloads[0]).toMatchObject({ event: 'SessionEnd', sessionId: session.id, data: { turnCount: 1 } });
    expect(provider.requests.filter((request) => request.purpose === 'memory_extraction')).toHaveLength(1);
    const stored = await memory.search('default', '', Number.POSITIVE_INFINITY);
    expect(stored.map((item) => item.content)).toEqual(['The user drinks green tea']);
    expect(stored[0]?.sourceSessionId).toBe(session.id);
    await agent.shutdown();
  });

  test('close() is idempotent: SessionEnd and extraction run once', async () => {
    const log: string[] = [];
    const { agent, provider } = await harness({
      script: {
        responses: [[{ type: 'text', text: 'noted' }]],
        byPurpose: { memory_extraction: [[{ type: 'text', text: EXTRACTED }]] },
      },
      plugins: [recordingPlugin({ id: 'p', log, taps: ['SessionEnd'] })],
    });
    const session = await agent.newSession();
    await (await session.sendMessage('I drink green tea')).done;
    await Promise.all([session.close(), session.close()]);
    await session.close();
    expect(log).toEqual(['p:SessionEnd']);
    expect(provider.requests.filter((request) => request.purpose === 'memory_extraction')).toHaveLength(1);
    await agent.shutdown();
    expect(log).toEqual(['p:SessionEnd', 'p:shutdown']);
  });

  test('shutdown() cancels the running turn, runs SessionEnd and extraction, then shuts plugins down in reverse', async () => {
    const log: string[] = [];
    const payloads: HookPayload[] = [];
    const { agent, provider, memory } = await harness({
      script: {
        responses: [[{ type: 'hang' }]],
        byPurpose: { memory_extraction: [[{ type: 'text', text: EXTRACTED }]] },
      },
      plugins: [
        recordingPlugin({ id: 'a', log, taps: ['SessionEnd', 'TurnEnd'], payloads }),
        recordingPlugin({ id: 'b', log }),
      ],
    });
    const session = await agent.newSession();
    const turn = await session.sendMessage('I drink green tea');
    await agent.shutdown();
    expect((await turn.done).status).toBe('cancelled');
    expect((await collect(turn)).at(-1)?.payload.type).toBe('turn_cancelled');
    expect(log).toEqual(['a:TurnEnd', 'a:SessionEnd', 'b:shutdown', 'a:shutdown']);
    expect(payloads[1]).toMatchObject({ event: 'SessionEnd', data: { turnCount: 1 } });
    expect(provider.requests.filter((request) => request.purpose === 'memory_extraction')).toHaveLength(1);
    expect(await memory.search('default', '', 10)).toHaveLength(1);
  });

  test('await using closes the session (Symbol.asyncDispose)', async () => {
    const log: string[] = [];
    const { agent } = await harness({ plugins: [recordingPlugin({ id: 'p', log, taps: ['SessionEnd'] })] });
    let id = '';
    {
      await using session = await agent.newSession();
      id = session.id;
      await expectCode(agent.newSession(), 'SESSION_BUSY');
    }
    expect(log).toEqual(['p:SessionEnd']);
    const next = await agent.newSession();
    expect(next.id).not.toBe(id);
    await agent.shutdown();
  });

  test('an abandoned idle session frees the slot without SessionEnd', async () => {
    const log: string[] = [];
    const { agent } = await harness({ plugins: [recordingPlugin({ id: 'p', log, taps: ['SessionEnd'] })] });
    async function openAndDrop(): Promise<void> {
      await agent.newSession();
    }
    await openAndDrop();
    let next: Session | undefined;
    for (let round = 0; round < 200 && next === undefined; round += 1) {
      globalThis.gc?.();
      await new Promise((resolve) => setImmediate(resolve));
      next = await agent.newSession().catch((error: unknown) => {
        if (!isAgentError(error) || error.code !== 'SESSION_BUSY') throw error;
        return undefined;
      });
    }
    expect(next, 'the abandoned session never freed the slot').toBeDefined();
    expect(log).toEqual([]);
    await agent.shutdown();
  });

  test('an abandoned session is cleaned up by the FinalizationRegistry: turn cancelled, no SessionEnd, no extraction', async () => {
    expect(typeof globalThis.gc).toBe('function');
    const log: string[] = [];
    const signals: AbortSignal[] = [];
    const called = deferred();
    const scripted = new ScriptedModelProvider({
      responses: [[{ type: 'hang' }]],
      byPurpose: { memory_extraction: [[{ type: 'text', text: EXTRACTED }]] },
    });
    const recording: ModelProvider = {
      id: scripted.id,
      models: scripted.models,
      chat(request, signal) {
        signals.push(signal);
        called.resolve();
        return scripted.chat(request, signal);
      },
    };
    const { agent, storage } = await harness({
      provider: recording,
      plugins: [recordingPlugin({ id: 'p', log, taps: ['SessionStart', 'SessionEnd'] })],
    });

    // Nothing outside this function keeps the Session or the RunningTurn.
    async function startAndDrop(): Promise<string> {
      const session = await agent.newSession();
      await session.sendMessage('I drink green tea');
      return session.id;
    }
    const abandonedId = await startAndDrop();
    await called.promise;
    expect(signals).toHaveLength(1);
    expect(signals[0]?.aborted).toBe(false);

    let next: Session | undefined;
    for (let round = 0; round < 200 && next === undefined; round += 1) {
      globalThis.gc?.();
      await new Promise((resolve) => setImmediate(resolve));
      try {
        next = await agent.newSession();
      } catch (error) {
        if (!isAgentError(error) || error.code !== 'SESSION_BUSY') throw error;
      }
    }
    expect(next, 'the abandoned session never freed the slot').toBeDefined();
    expect(signals[0]?.aborted).toBe(true);
    expect(log).toEqual(['p:SessionStart', 'p:SessionStart']);
    expect(scripted.requests.filter((request) => request.purpose === 'memory_extraction')).toHaveLength(0);
    // The abandoned turn was persisted up to where it was cancelled.
    // The cancelled turn's end is recorded after its user message.
    expect(payloadTypes(await storage.loadSession(abandonedId))).toEqual([
      'metadata',
      'user_message',
      'metadata',
    ]);
    await agent.shutdown();
  });
});
