import { describe, expect, test } from 'vitest';
import {
  type Agent,
  AgentBuilder,
  type AgentConfig,
  type AgentError,
  type AgentEvent,
  type ChatEvent,
  type ChatRequest,
  type HookEvent,
  type HookPayload,
  isAgentError,
  type ModelProvider,
  type Plugin,
  type RunningTurn,
  type Session,
  type SessionEvent,
  type SessionStorage,
  type ToolHandler,
  type ToolInput,
} from '../src/index.js';
import {
  InMemoryMemoryStorage,
  InMemorySessionStorage,
  ScriptedModelProvider,
  type ScriptedModelProviderOptions,
} from '../src/testing/index.js';

const EXTRACTED = '{"memories":[{"content":"The user drinks green tea","category":"preference"}]}';

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
}

function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** Lets pending work (promise chains, I/O callbacks, finalizers) run for a few macrotask turns. */
async function ticks(count = 5): Promise<void> {
  for (let index = 0; index < count; index += 1) await new Promise((resolve) => setImmediate(resolve));
}

/** A read-only tool that waits for `gate` (or forever) and records the signals it got. */
function gateTool(options: { name?: string; gate: Promise<void>; signals?: AbortSignal[] }): ToolHandler {
  return {
    name: options.name ?? 'wait',
    description: 'waits for the test to let it go',
    parametersSchema: { type: 'object', properties: {} },
    isMutating: false,
    async execute(input: ToolInput) {
      options.signals?.push(input.signal);
      await options.gate;
      return { content: 'released', isError: false };
    },
  };
}

/** A plugin that records, in `log`, every hook call it taps and its shutdown; a handler may throw. */
function recordingPlugin(options: {
  id: string;
  log: string[];
  taps?: readonly HookEvent[];
  payloads?: HookPayload[];
  throwOn?: readonly HookEvent[];
}): Plugin {
  return {
    id: options.id,
    displayName: options.id,
    description: `records for ${options.id}`,
    async initialize() {},
    apply(context) {
      for (const event of options.taps ?? []) {
        context.tap(event, (payload) => {
          options.log.push(`${options.id}:${event}`);
          options.payloads?.push(payload);
          if (options.throwOn?.includes(event)) throw new Error(`${options.id} fails in ${event}`);
        });
      }
    },
    async shutdown() {
      options.log.push(`${options.id}:shutdown`);
    },
  };
}

interface Harness {
  agent: Agent;
  provider: ScriptedModelProvider;
  storage: InMemorySessionStorage;
  memory: InMemoryMemoryStorage;
  background: AgentError[];
}

async function harness(
  options: {
    script?: ScriptedModelProviderOptions;
    config?: Partial<AgentConfig>;
    tools?: ToolHandler[];
    plugins?: Plugin[];
    provider?: ModelProvider;
    sessionStorage?: SessionStorage;
  } = {},
): Promise<Harness> {
  const provider = new ScriptedModelProvider(options.script);
  const storage = new InMemorySessionStorage();
  const memory = new InMemoryMemoryStorage();
  const background: AgentError[] = [];
  const builder = new AgentBuilder({
    defaultModel: 'scripted-model',
    onBackgroundError: (error) => background.push(error),
    ...options.config,
  })
    .registerModelProvider(options.provider ?? provider)
    .registerSessionStorage(options.sessionStorage ?? storage)
    .registerMemoryStorage(memory);
  for (const tool of options.tools ?? []) builder.registerTool(tool);
  for (const plugin of options.plugins ?? []) builder.registerPlugin(plugin);
  return { agent: await builder.build(), provider, storage, memory, background };
}

async function collect(turn: RunningTurn): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of turn) events.push(event);
  return events;
}

/** Reads events until one of `type` arrives. */
async function readUntil(turn: RunningTurn, type: AgentEvent['payload']['type']): Promise<void> {
  for await (const event of turn) if (event.payload.type === type) return;
  throw new Error(`the turn ended without a ${type} event`);
}

function payloadTypes(events: readonly SessionEvent[] | null): string[] {
  return (events ?? []).map((event) => event.payload.type);
}

async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(isAgentError(error), `expected a rejection with ${code}`).toBe(true);
  expect(error).toMatchObject({ code });
}

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
    expect(await turn.done).toBe('cancelled');
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
    expect(await turn.done).toBe('completed');
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
    expect(await turn.done).toBe('cancelled');
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
    expect(await turn.done).toBe('cancelled');
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
    expect(payloadTypes(await storage.loadSession(abandonedId))).toEqual(['metadata', 'user_message']);
    await agent.shutdown();
  });
});

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
    expect(await turn.done).toBe('cancelled');
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
    expect(await turn.done).toBe('completed');
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
