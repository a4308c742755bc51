import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, test } from 'vitest';
import {
  type AgentEvent,
  type ChatEvent,
  type ChatRequest,
  type ModelProvider,
  type RunningTurn,
  templates,
} from '../src/index.js';
import { ScriptedModelProvider, scriptedModel } from '../src/testing/index.js';
import {
  aborted,
  buildAgent,
  ControllableSessionStorage,
  collectTurn,
  deferred,
  defineTool,
  hookPlugin,
  nextMacrotask,
  recordOf,
  runTurn,
  SignalRecordingProvider,
  shutdownAgents,
  storedPayloads,
  userMessage,
} from './support/agent-fixtures.js';

afterEach(shutdownAgents);

/** Reads a turn, calling `onEvent` for each event as it is read; returns the events. */
async function readTurn(turn: RunningTurn, onEvent: (event: AgentEvent) => void): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of turn) {
    events.push(event);
    onEvent(event);
  }
  return events;
}

describe('between stream events', () => {
  test('cancel after the first text_delta while the next step hangs: partial saved incomplete, signal aborted', async () => {
    const storage = new ControllableSessionStorage();
    const provider = new SignalRecordingProvider({
      responses: [[{ type: 'text', text: 'Hel' }, { type: 'hang' }]],
    });
    const { agent } = await buildAgent({ provider, sessionStorage: storage });
    const session = await agent.newSession();
    const turn = await session.sendMessage('hello');
    const events = await readTurn(turn, (event) => {
      if (event.payload.type === 'text_delta') turn.cancel();
    });
    const record = recordOf(events);

    expect(record.types).toEqual(['text_delta', 'turn_cancelled']);
    expect((await turn.done).status).toBe('cancelled');
    expect(provider.signals[0]?.aborted).toBe(true);
    const partial = { type: 'assistant', content: [{ type: 'text', text: 'Hel' }], status: 'incomplete' };
    expect(session.messages()).toEqual([
      userMessage('hello'),
      partial,
      { type: 'system', content: templates.INTERRUPTED_MESSAGE_NOTICE },
    ]);
    // The partial answer is saved, then the record that the turn ended (it was not cut by a crash).
    expect((await storedPayloads(storage, session.id)).slice(-2)).toMatchObject([
      { ...partial, type: 'assistant_message' },
      { type: 'metadata', key: 'turn_ended', value: { status: 'cancelled' } },
    ]);
  });

  test('a provider that ignores the signal: the event after the cancel is dropped and its stream is closed', async () => {
    const release = deferred();
    let closed = false;
    const stubborn: ModelProvider = {
      id: 'stubborn',
      models: [scriptedModel()],
      async *chat(_request: ChatRequest, _signal: AbortSignal): AsyncGenerator<ChatEvent> {
        try {
          yield { type: 'text_delta', text: 'Hel' };
          await release.promise;
          yield { type: 'text_delta', text: 'lo' };
          yield { type: 'done', stopReason: 'end_turn' };
        } finally {
          closed = true;
        }
      },
    };
    const { agent } = await buildAgent({ provider: stubborn });
    const session = await agent.newSession();
    const turn = await session.sendMessage('hello');
    const events = await readTurn(turn, (event) => {
      if (event.payload.type === 'text_delta') {
        turn.cancel();
        release.resolve();
      }
    });

    expect(recordOf(events).payloads).toEqual([
      { type: 'text_delta', text: 'Hel' },
      { type: 'turn_cancelled' },
    ]);
    expect(closed).toBe(true);
    expect(session.messages()[1]).toEqual({
      type: 'assistant',
      content: [{ type: 'text', text: 'Hel' }],
      status: 'incomplete',
    });
  });
});

describe('tools', () => {
  test('before each tool of a serial batch: tools 2 and 3 do not run and get cancelled results', async () => {
    const storage = new ControllableSessionStorage();
    const turnReady = deferred<RunningTurn>();
    const ran: string[] = [];
    const write = defineTool({
      name: 'write',
      isMutating: true,
      execute: async (input) => {
        ran.push(input.callId);
        (await turnReady.promise).cancel();
        return { content: `wrote ${input.callId}`, isError: false };
      },
    });
    const calls = ['w1', 'w2', 'w3'].map((callId) => ({
      type: 'tool_call' as const,
      toolName: 'write',
      callId,
    }));
    const provider = new ScriptedModelProvider({ responses: [calls, [{ type: 'text', text: 'never' }]] });
    const { agent } = await buildAgent({ provider, tools: [write], sessionStorage: storage });
    const session = await agent.newSession();
    const turn = await session.sendMessage('write three');
    turnReady.resolve(turn);
    const record = await collectTurn(turn);

    expect(ran).toEqual(['w1']);
    expect(record.types.at(-1)).toBe('turn_cancelled');
    expect(provider.requests).toHaveLength(1);
    const results = session.messages().filter((message) => message.type === 'tool_result');
    expect(results.map((result) => [result.callId, result.isError])).toEqual([
      ['w1', false],
      ['w2', true],
      ['w3', true],
    ]);
    for (const result of results.slice(1)) expect(result.content.toLowerCase()).toContain('cancelled');
    const ends = record.payloads.filter((payload) => payload.type === 'tool_call_end');
    expect(ends.map((end) => end.success)).toEqual([true, false, false]);

    // Every tool_call has its tool_result, in the context and in the storage.
    const saved = await storedPayloads(storage, session.id);
    const savedCalls = saved
      .filter((payload) => payload.type === 'tool_call')
      .map((payload) => payload.callId);
    const savedResults = saved
      .filter((payload) => payload.type === 'tool_result')
      .map((payload) => payload.callId);
    expect(savedCalls).toEqual(['w1', 'w2', 'w3']);
    expect(savedResults).toEqual(['w1', 'w2', 'w3']);
  });

  test('a started tool is not abandoned: its signal fires and the turn waits for it to settle', async () => {
    const started = deferred<AbortSignal>();
    const finish = deferred();
    const slow = defineTool({
      name: 'slow',
      execute: async (input) => {
        started.resolve(input.signal);
        await aborted(input.signal);
        await finish.promise;
        return { content: 'stopped early', isError: false };
      },
    });
    const provider = new ScriptedModelProvider({
      responses: [[{ type: 'tool_call', toolName: 'slow', callId: 's1' }], [{ type: 'text', text: 'never' }]],
    });
    const { agent } = await buildAgent({ provider, tools: [slow], config: { toolTimeoutMs: 10_000 } });
    const session = await agent.newSession();
    const turn = await session.sendMessage('run slow');
    const reading = collectTurn(turn);
    let settled = false;
    void turn.done.then(() => {
      settled = true;
    });

    const toolSignal = await started.promise;
    turn.cancel();
    await aborted(toolSignal);
    await nextMacrotask();
    await nextMacrotask();
    expect(settled).toBe(false);

    finish.resolve();
    const record = await reading;
    expect(record.types).toEqual(['tool_call_start', 'tool_call_end', 'turn_cancelled']);
    expect(session.messages().at(-1)).toEqual({
      type: 'tool_result',
      callId: 's1',
      content: 'stopped early',
      isError: false,
    });
  });
});

describe('cancel and a concurrent batch', () => {
  test('every running tool of a concurrent batch hears of the cancel, and the turn waits for all of them', async () => {
    const signals: AbortSignal[] = [];
    const bothStarted = deferred();
    const wait = defineTool({
      name: 'wait',
      isMutating: false,
      execute: async (input) => {
        const signal = input.signal;
        signals.push(signal);
        if (signals.length === 2) bothStarted.resolve();
        await aborted(signal);
        return { content: `stopped (${String((signal.reason as Error).name)})`, isError: false };
      },
    });
    const provider = new SignalRecordingProvider({
      responses: [
        [
          { type: 'tool_call', toolName: 'wait', callId: 'w1' },
          { type: 'tool_call', toolName: 'wait', callId: 'w2' },
        ],
        [{ type: 'text', text: 'never' }],
      ],
    });
    const { agent } = await buildAgent({ provider, tools: [wait], config: { toolTimeoutMs: 10_000 } });
    const session = await agent.newSession();
    const turn = await session.sendMessage('wait twice');
    const reading = collectTurn(turn);

    await bothStarted.promise;
    turn.cancel();
    const record = await reading;
    expect(signals.map((signal) => signal.aborted)).toEqual([true, true]);
    expect(record.types.at(-1)).toBe('turn_cancelled');
    expect(session.messages().slice(-2)).toEqual([
      { type: 'tool_result', callId: 'w1', content: 'stopped (AbortError)', isError: false },
      { type: 'tool_result', callId: 'w2', content: 'stopped (AbortError)', isError: false },
    ]);
    for (const signal of [...signals, ...provider.signals]) {
      expect(getEventListeners(signal, 'abort')).toHaveLength(0);
    }
  });
});

describe('compaction', () => {
  const smallModel = scriptedModel({ contextWindow: 2_000 });

  test('a BeforeCompact hook that cancels the turn: no compaction request is sent, turn_cancelled', async () => {
    const turnReady = deferred<RunningTurn>();
    const provider = new ScriptedModelProvider({
      models: [smallModel],
      byPurpose: { compaction: [[{ type: 'text', text: 'summary' }]] },
      responses: [[{ type: 'text', text: 'first answer' }]],
    });
    const canceller = hookPlugin({
      id: 'canceller',
      hooks: {
        BeforeCompact: async () => {
          (await turnReady.promise).cancel();
        },
      },
    });
    const { agent } = await buildAgent({ provider, plugins: [canceller], config: { compactThreshold: 0.5 } });
    const session = await agent.newSession();
    await runTurn(session, 'short question');
    const turn = await session.sendMessage('x'.repeat(6_000));
    turnReady.resolve(turn);
    const record = await collectTurn(turn);

    expect(record.types).toEqual(['turn_cancelled']);
    expect(provider.requests.map((request) => request.purpose)).toEqual(['turn']);
  });

  test('cancel while the compaction request runs: no turn request follows, turn_cancelled', async () => {
    const compactionStarted = deferred();
    const provider = new SignalRecordingProvider({
      models: [smallModel],
      byPurpose: {
        compaction: [
          () => {
            compactionStarted.resolve();
            return [{ type: 'hang' }];
          },
        ],
      },
      responses: [[{ type: 'text', text: 'first answer' }]],
    });
    const { agent } = await buildAgent({ provider, config: { compactThreshold: 0.5 } });
    const session = await agent.newSession();
    await runTurn(session, 'short question');
    const turn = await session.sendMessage('y'.repeat(6_000));
    const reading = collectTurn(turn);
    await compactionStarted.promise;
    turn.cancel();
    const record = await reading;

    expect(record.types).toEqual(['turn_cancelled']);
    expect(provider.requests.map((request) => request.purpose)).toEqual(['turn', 'compaction']);
    expect(provider.signals[1]?.aborted).toBe(true);
  });
});

describe('cancel outside the model stream', () => {
  test('cancel before the model is called: the model is never called', async () => {
    const storage = new ControllableSessionStorage();
    const holdUserMessage = deferred();
    storage.beforeSave = async (event) => {
      if (event.payload.type === 'user_message') await holdUserMessage.promise;
    };
    const provider = new ScriptedModelProvider({ responses: [[{ type: 'text', text: 'never' }]] });
    const { agent } = await buildAgent({ provider, sessionStorage: storage });
    const session = await agent.newSession();
    const turn = await session.sendMessage('hello');
    turn.cancel();
    holdUserMessage.resolve();
    const record = await collectTurn(turn);

    expect(record.types).toEqual(['turn_cancelled']);
    expect(provider.requests).toHaveLength(0);
    expect(session.messages()).toEqual([userMessage('hello')]);
  });

  test('cancel after the turn ended is harmless', async () => {
    const provider = new ScriptedModelProvider({
      responses: [[{ type: 'text', text: 'one' }], [{ type: 'text', text: 'two' }]],
    });
    const { agent } = await buildAgent({ provider });
    const session = await agent.newSession();
    const turn = await session.sendMessage('first');
    const record = await collectTurn(turn);
    turn.cancel();
    turn.cancel();

    expect(record.types.at(-1)).toBe('turn_complete');
    expect((await turn.done).status).toBe('completed');
    const again: AgentEvent[] = [];
    for await (const event of turn) again.push(event);
    expect(again).toEqual([]);
    expect((await runTurn(session, 'second')).types).toEqual(['text_delta', 'turn_complete']);
  });
});

describe('listeners', () => {
  test('no abort listener is left on the signals a tool and the provider received', async () => {
    const toolSignals: AbortSignal[] = [];
    const record = (name: string, isMutating: boolean) =>
      defineTool({
        name,
        isMutating,
        execute: (input) => {
          toolSignals.push(input.signal);
          return { content: name, isError: false };
        },
      });
    const provider = new SignalRecordingProvider({
      responses: [
        [
          { type: 'delay', ms: 1 },
          { type: 'tool_call', toolName: 'read' },
          { type: 'tool_call', toolName: 'read' },
        ],
        [
          { type: 'tool_call', toolName: 'write' },
          { type: 'tool_call', toolName: 'read' },
        ],
        [{ type: 'text', text: 'done' }],
      ],
    });
    const { agent } = await buildAgent({ provider, tools: [record('read', false), record('write', true)] });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'go');

    expect(turn.types.at(-1)).toBe('turn_complete');
    expect(toolSignals).toHaveLength(4);
    for (const signal of [...toolSignals, ...provider.signals]) {
      expect(getEventListeners(signal, 'abort')).toHaveLength(0);
    }
  });
  test('a turn puts no abort listener of its own on its signal through all its model calls and batches', async () => {
    const seen: unknown[][] = [];
    let turnSignal: AbortSignal | undefined;
    const listeners = (): unknown[] => getEventListeners(turnSignal as AbortSignal, 'abort');
    const echo = defineTool({
      name: 'echo',
      execute: () => {
        seen.push(listeners());
        return { content: 'ok', isError: false };
      },
    });
    class WatchingProvider extends SignalRecordingProvider {
      override chat(request: ChatRequest, signal: AbortSignal): AsyncIterable<ChatEvent> {
        turnSignal = signal;
        const inner = super.chat(request, signal);
        return (async function* () {
          for await (const event of inner) {
            seen.push(listeners());
            yield event;
          }
        })();
      }
    }
    const provider = new WatchingProvider({
      responses: [
        [{ type: 'tool_call', toolName: 'echo' }],
        [
          { type: 'tool_call', toolName: 'echo' },
          { type: 'tool_call', toolName: 'echo' },
        ],
        [{ type: 'text', text: 'done' }],
      ],
    });
    const { agent } = await buildAgent({ provider, tools: [echo] });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'go');

    expect(turn.types.at(-1)).toBe('turn_complete');
    expect(provider.signals).toHaveLength(3);
    expect(new Set(provider.signals).size).toBe(1);
    // Three model calls (each seen at every event) and three tool runs: the turn's controller tells its cancel
    // scope itself, so the runtime listens on the signal at no point.
    expect(seen.length).toBeGreaterThanOrEqual(6);
    for (const during of seen) expect(during).toHaveLength(0);
    expect(listeners()).toHaveLength(0);
  });

  test('a turn cancelled in a model call, then one cancelled in a tool run, leave no listener on their signals', async () => {
    const toolStarted = deferred();
    const wait = defineTool({
      name: 'wait',
      execute: async (input) => {
        toolStarted.resolve();
        await aborted(input.signal);
        return { content: 'stopped', isError: true };
      },
    });
    const provider = new SignalRecordingProvider({
      responses: [
        [{ type: 'text', text: 'Hel' }, { type: 'hang' }],
        [{ type: 'tool_call', toolName: 'wait' }],
      ],
    });
    const { agent } = await buildAgent({ provider, tools: [wait], config: { toolTimeoutMs: 10_000 } });
    const session = await agent.newSession();
    const inModel = await session.sendMessage('first');
    const first = await readTurn(inModel, (event) => {
      if (event.payload.type === 'text_delta') inModel.cancel();
    });
    expect(recordOf(first).types.at(-1)).toBe('turn_cancelled');

    const inTool = await session.sendMessage('second');
    const reading = collectTurn(inTool);
    await toolStarted.promise;
    inTool.cancel();
    expect((await reading).types.at(-1)).toBe('turn_cancelled');
    expect((await inTool.done).status).toBe('cancelled');

    expect(provider.signals).toHaveLength(2);
    expect(provider.signals.every((signal) => signal.aborted)).toBe(true);
    for (const signal of provider.signals) expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });
});
