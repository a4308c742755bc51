import { createHook } from 'node:async_hooks';
import { EventEmitter } from 'node:events';
import { describe, expect, test } from 'vitest';
import {
  AgentBuilder,
  type ChatEvent,
  type ChatRequest,
  type ModelProvider,
  type Plugin,
  type ToolHandler,
} from '../src/index.js';
import { InMemorySessionStorage, scriptedModel } from '../src/testing/index.js';

// The short soak of issue 25 (bench/soak/ runs the long one): many sessions of several turns with tool calls
// in one process, then a full gc. What it asserts cannot be noisy: every closed session, its turns, their
// events and the signals handed to the model and the tools are collected (their WeakRefs cleared), and no
// timer or other handle is left open. RSS is not asserted here (bench/soak/ measures it).

const SESSIONS = 40;
const TURNS = 3;

/** Answers with one tool call, then, once the tool's result is in, with a text. */
function toolThenTextProvider(): ModelProvider {
  return {
    id: 'soak',
    models: [scriptedModel()],
    async *chat(request: ChatRequest, signal: AbortSignal): AsyncIterable<ChatEvent> {
      tracked.signals.push(new WeakRef(signal));
      const last = request.messages.at(-1);
      if (last?.type === 'tool_result') {
        yield { type: 'text_delta', text: 'done: ' };
        yield { type: 'text_delta', text: last.content };
        yield { type: 'usage', usage: { inputTokens: 10, outputTokens: 2 } };
        yield { type: 'done', stopReason: 'end_turn' };
        return;
      }
      const callId = `call-${request.messages.length}`;
      yield { type: 'tool_call', callId, toolName: 'echo', arguments: '{"n":7}' };
      yield { type: 'usage', usage: { inputTokens: 10, outputTokens: 2 } };
      yield { type: 'done', stopReason: 'tool_use' };
    },
  };
}

const echoTool: ToolHandler = {
  name: 'echo',
  description: 'echoes n',
  parametersSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
  isMutating: false,
  async execute(input) {
    tracked.signals.push(new WeakRef(input.signal));
    return { content: `n=${JSON.stringify(input.arguments)}`, isError: false };
  },
};

/** Weak references to what a closed session must not keep alive. */
const tracked = {
  sessions: [] as WeakRef<object>[],
  turns: [] as WeakRef<object>[],
  events: [] as WeakRef<object>[],
  signals: [] as WeakRef<object>[],
};

function resetTracked(): void {
  for (const list of Object.values(tracked)) list.length = 0;
}

/** A plugin with async no-op hooks and an observer, as a host's telemetry would have. */
const tidyPlugin: Plugin = {
  id: 'soak-tidy',
  displayName: 'Soak tidy',
  description: 'taps the turn and tool hooks and observes, keeping nothing',
  initialize: async () => undefined,
  apply(context) {
    for (const event of ['TurnStart', 'TurnEnd', 'BeforeToolUse', 'AfterToolUse'] as const)
      context.tap(event, async () => undefined);
    context.observe(() => undefined);
  },
  shutdown: async () => undefined,
};

/**
 * The planted leak: a plugin, through the public observe API, adds a listener to a long-lived host emitter
 * for every event it sees and never removes it; each listener holds the event. The soak must catch it.
 */
function leakyPlugin(hostEvents: EventEmitter): Plugin {
  return {
    id: 'soak-leaky',
    displayName: 'Soak leaky',
    description: 'adds a listener per event and never removes it',
    initialize: async () => undefined,
    apply(context) {
      context.observe((observation) => {
        if (observation.type !== 'agent_event') return;
        const held = observation.event;
        hostEvents.on('reload', () => held.payload.type);
      });
    },
    shutdown: async () => undefined,
  };
}

/** The other planted leak: a plugin starts a timer at every TurnStart and never clears it. */
function timerLeakPlugin(timers: NodeJS.Timeout[]): Plugin {
  return {
    id: 'soak-timers',
    displayName: 'Soak timers',
    description: 'starts a timer per turn and never clears it',
    initialize: async () => undefined,
    apply(context) {
      context.tap('TurnStart', async () => {
        timers.push(setInterval(() => undefined, 3_600_000).unref());
        return undefined;
      });
    },
    shutdown: async () => undefined,
  };
}

/**
 * Watches the handles (timers, sockets, file requests; not promises) created from the runtime's or this
 * file's code while it is enabled: `open()` lists those not destroyed yet. The creating stack tells them from
 * the test runner's own timers.
 */
function handleWatch() {
  const live = new Map<number, string>();
  let recording = false;
  const hook = createHook({
    init(asyncId, type) {
      if (!recording || type === 'PROMISE') return;
      const stack = new Error().stack ?? '';
      if (stack.includes('/packages/agent/')) live.set(asyncId, type);
    },
    destroy(asyncId) {
      live.delete(asyncId);
    },
  });
  return {
    start: () => {
      recording = true;
      hook.enable();
    },
    /** Stops recording new handles; those recorded are still followed to their end. */
    pause: () => {
      recording = false;
    },
    stop: () => hook.disable(),
    open: () => [...live.values()],
  };
}

/** Runs the sessions and their turns; nothing of them stays referenced here but the WeakRefs. */
async function runSessions(plugins: readonly Plugin[]): Promise<void> {
  const storage = new InMemorySessionStorage();
  let builder = new AgentBuilder({ defaultModel: scriptedModel().id })
    .registerModelProvider(toolThenTextProvider())
    .registerTool(echoTool)
    .registerSessionStorage(storage);
  for (const plugin of plugins) builder = builder.registerPlugin(plugin);
  const agent = await builder.build();
  for (let index = 0; index < SESSIONS; index += 1) {
    const session = await agent.newSession();
    tracked.sessions.push(new WeakRef(session));
    for (let turnIndex = 0; turnIndex < TURNS; turnIndex += 1) {
      const turn = await session.sendMessage(`turn ${turnIndex} of session ${index}`);
      tracked.turns.push(new WeakRef(turn));
      for await (const event of turn) {
        tracked.events.push(new WeakRef(event));
        if (event.payload.type === 'error') throw event.payload.error;
      }
    }
    await session.close();
    await storage.deleteSession(session.id);
  }
  await agent.shutdown();
}

/** Full gcs with macrotask turns between them (a WeakRef's target lives at least to the end of its job). */
async function collectGarbage(): Promise<void> {
  const gc = globalThis.gc;
  if (gc === undefined) throw new Error('run the tests with node --expose-gc (vitest.config.ts sets it)');
  for (let round = 0; round < 6; round += 1) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
}

function alive(list: readonly WeakRef<object>[]): number {
  return list.filter((ref) => ref.deref() !== undefined).length;
}

async function soak(plugins: readonly Plugin[]) {
  resetTracked();
  const handles = handleWatch();
  handles.start();
  await runSessions(plugins);
  handles.pause();
  await collectGarbage();
  handles.stop();
  return {
    counts: {
      sessions: tracked.sessions.length,
      turns: tracked.turns.length,
      events: tracked.events.length,
      signals: tracked.signals.length,
    },
    alive: {
      sessions: alive(tracked.sessions),
      turns: alive(tracked.turns),
      events: alive(tracked.events),
      signals: alive(tracked.signals),
    },
    openHandles: handles.open(),
  };
}

describe('soak: closed sessions leave nothing behind', () => {
  test(`${SESSIONS} sessions × ${TURNS} turns with tool calls: all collected, no handle left open`, async () => {
    const result = await soak([tidyPlugin]);
    expect(result.counts.sessions).toBe(SESSIONS);
    expect(result.counts.turns).toBe(SESSIONS * TURNS);
    // A tool step and an answer per turn: each turn's events are more than its text deltas.
    expect(result.counts.events).toBeGreaterThan(SESSIONS * TURNS * 4);
    // Two model calls and one tool call per turn, each with its signal.
    expect(result.counts.signals).toBe(SESSIONS * TURNS * 3);
    expect(result.alive).toEqual({ sessions: 0, turns: 0, events: 0, signals: 0 });
    expect(result.openHandles).toEqual([]);
  });

  test('a planted leak (an observer adding a listener per event, never removed) is caught', async () => {
    const hostEvents = new EventEmitter();
    hostEvents.setMaxListeners(0);
    const result = await soak([tidyPlugin, leakyPlugin(hostEvents)]);
    expect(hostEvents.listenerCount('reload')).toBe(result.counts.events);
    // The soak's own check fails: the events the listeners hold are still alive.
    expect(result.alive.events).toBe(result.counts.events);
    hostEvents.removeAllListeners();
  });

  test('a planted leak (a timer started per turn, never cleared) is caught', async () => {
    const timers: NodeJS.Timeout[] = [];
    const result = await soak([tidyPlugin, timerLeakPlugin(timers)]);
    expect(timers).toHaveLength(SESSIONS * TURNS);
    expect(result.openHandles).toEqual(timers.map(() => 'Timeout'));
    for (const timer of timers) clearInterval(timer);
  });
});
