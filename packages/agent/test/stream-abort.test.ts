import { describe, expect, test, vi } from 'vitest';
import { AgentBuilder, type AgentConfig, type AgentEvent, type RunningTurn } from '../src/index.js';
import { InMemoryMemoryStorage, InMemorySessionStorage } from '../src/testing/index.js';
import { type RawAnswer, RawProvider } from './support/raw-provider.js';

/** Long enough that a wait bounded by it would fail the test: nothing below may wait for the tool timeout. */
const TOOL_TIMEOUT_MS = 60_000;
/** The timers and clocks a test takes over to count a bound in the runtime's own time. */
const FAKED_TIMERS: NonNullable<Parameters<typeof vi.useFakeTimers>[0]>['toFake'] = [
  'setTimeout',
  'clearTimeout',
  'setImmediate',
  'clearImmediate',
  'performance',
  'Date',
];
/**
 * Starts `start` on timers and clocks the test owns, advances them by each of `steps` in turn, and tells after each
 * step whether its promise has settled: a bound is counted in the runtime's own milliseconds, so a loaded machine
 * cannot make it look longer.
 */
async function settledAfter(start: () => Promise<unknown>, steps: number[]): Promise<boolean[]> {
  vi.useFakeTimers({ toFake: FAKED_TIMERS });
  try {
    let settled = false;
    const running = start().then(() => {
      settled = true;
    });
    const seen: boolean[] = [];
    for (const ms of steps) {
      await vi.advanceTimersByTimeAsync(ms);
      seen.push(settled);
    }
    if (settled) await running;
    return seen;
  } finally {
    vi.useRealTimers();
  }
}
/** What "promptly" means here. */
const PROMPT_MS = 2_000;

/** Settles with the promise's value, or rejects once `ms` passed: a hang fails the test instead of hanging it. */
function within<T>(promise: Promise<T>, ms = PROMPT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting after ${ms}ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function setUp(options: {
  answers?: RawAnswer[];
  byPurpose?: ConstructorParameters<typeof RawProvider>[0]['byPurpose'];
  config?: Partial<AgentConfig>;
  memory?: boolean;
}) {
  const provider = new RawProvider({ answers: options.answers ?? [], byPurpose: options.byPurpose ?? {} });
  const storage = new InMemorySessionStorage();
  let builder = new AgentBuilder({
    defaultModel: 'scripted-model',
    toolTimeoutMs: TOOL_TIMEOUT_MS,
    onBackgroundError: () => undefined,
    ...options.config,
  })
    .registerModelProvider(provider)
    .registerSessionStorage(storage);
  if (options.memory) builder = builder.registerMemoryStorage(new InMemoryMemoryStorage());
  const agent = await builder.build();
  const session = await agent.newSession();
  return { agent, session, storage, provider };
}

/** Reads the turn until its first event of `type` (the turn is then inside the model call that hangs). */
async function readUntil(
  turn: RunningTurn,
  type: string,
  events: AgentEvent[],
): Promise<AsyncIterator<AgentEvent>> {
  const iterator = turn[Symbol.asyncIterator]();
  while (true) {
    const step = await iterator.next();
    if (step.done) throw new Error(`the turn ended before ${type}`);
    events.push(step.value);
    if (step.value.payload.type === type) return iterator;
  }
}

async function rest(iterator: AsyncIterator<AgentEvent>, events: AgentEvent[]): Promise<AgentEvent[]> {
  while (true) {
    const step = await iterator.next();
    if (step.done) return events;
    events.push(step.value);
  }
}

/** Waits until the provider has been asked `count` times. */
async function requested(provider: RawProvider, count: number): Promise<void> {
  while (provider.requests.length < count) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('a provider that ignores its abort signal cannot hang a turn', () => {
  test('turn.cancel() mid-stream ends the turn promptly with turn_cancelled; the partial answer is saved', async () => {
    const { agent, session, storage } = await setUp({
      answers: [{ values: [{ type: 'text_delta', text: 'half an ans' }], hang: true }],
    });
    const turn = await session.sendMessage('hello');
    const events: AgentEvent[] = [];
    const iterator = await readUntil(turn, 'text_delta', events);
    turn.cancel();
    await within(rest(iterator, events));
    expect(events.at(-1)?.payload.type).toBe('turn_cancelled');
    expect((await within(turn.done)).status).toBe('cancelled');
    const saved = (await storage.loadSession(session.id)) ?? [];
    // The partial answer, then the record that the cancelled turn ended.
    expect(saved.slice(-2).map((event) => event.payload)).toMatchObject([
      { type: 'assistant_message', content: [{ type: 'text', text: 'half an ans' }], status: 'incomplete' },
      { type: 'metadata', key: 'turn_ended', value: { status: 'cancelled' } },
    ]);
    await within(session.close());
    await within(agent.shutdown());
  });

  test('turn.cancel() before the first event, while chat() itself never answers', async () => {
    const { agent, session, provider } = await setUp({});
    provider.chat = (() => new Promise(() => undefined)) as unknown as RawProvider['chat'];
    const turn = await session.sendMessage('hello');
    await new Promise((resolve) => setTimeout(resolve, 20));
    turn.cancel();
    expect((await within(turn.done)).status).toBe('cancelled');
    await within(agent.shutdown());
  });

  test('the session can go on after the cancelled turn', async () => {
    const { agent, session } = await setUp({ answers: [{ values: [], hang: true }] });
    const first = await session.sendMessage('hello');
    await new Promise((resolve) => setTimeout(resolve, 20));
    first.cancel();
    expect((await within(first.done)).status).toBe('cancelled');
    const second = await session.sendMessage('again');
    expect((await within(second.done)).status).toBe('completed');
    await within(agent.shutdown());
  });

  test('agent.shutdown() during a hung stream returns promptly, not after 4 × toolTimeoutMs', async () => {
    const { agent, session, provider } = await setUp({ answers: [{ values: [], hang: true }] });
    const turn = await session.sendMessage('hello');
    await requested(provider, 1);
    // On the test's clock: shutdown needs no timer to fire, let alone the 60 s tool timeout.
    expect(await settledAfter(() => agent.shutdown(), [0])).toEqual([true]);
    expect((await within(turn.done)).status).toBe('cancelled');
  });

  test('session.close() after cancel returns promptly', async () => {
    const { agent, session, provider } = await setUp({ answers: [{ values: [], hang: true }] });
    const turn = await session.sendMessage('hello');
    await requested(provider, 1);
    turn.cancel();
    await within(session.close());
    expect((await turn.done).status).toBe('cancelled');
    await within(agent.shutdown());
  });
});

describe('the runtime’s own model calls race the signal too', () => {
  test('a hung compaction request: cancel ends the turn promptly', async () => {
    const { agent, session, provider } = await setUp({
      // A tiny threshold: the turn compacts before its model call.
      config: { compactThreshold: 0.0001 },
      byPurpose: { compaction: [{ values: [], hang: true }] },
    });
    const turn = await session.sendMessage(
      `a message long enough to pass the threshold: ${'x'.repeat(2_000)}`,
    );
    while (!provider.requests.some((request) => request.purpose === 'compaction')) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    turn.cancel();
    expect((await within(turn.done)).status).toBe('cancelled');
    await within(agent.shutdown());
  });

  test('a hung memory checkpoint: cancel ends the turn promptly', async () => {
    const { agent, session, provider } = await setUp({
      memory: true,
      config: { memoryCheckpointInterval: 1 },
      answers: [{ values: [{ type: 'text_delta', text: 'an answer worth remembering' }] }],
      byPurpose: { memory_extraction: [{ values: [], hang: true }] },
    });
    const turn = await session.sendMessage('remember that I like tea');
    while (!provider.requests.some((request) => request.purpose === 'memory_extraction')) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    turn.cancel();
    expect((await within(turn.done)).status).toBe('cancelled');
    await within(agent.shutdown());
  });

  test('shutdown() with a hung turn and a hung extraction at close is bounded by toolTimeoutMs, not more', async () => {
    const { agent, session, provider } = await setUp({
      memory: true,
      config: { toolTimeoutMs: 300 },
      answers: [{ values: [{ type: 'text_delta', text: 'something' }], hang: true }],
      byPurpose: { memory_extraction: [{ values: [], hang: true }] },
    });
    const turn = await session.sendMessage('remember that I like tea');
    await requested(provider, 1);
    // On the test's clock: the turn ends at once; the extraction at close waits its one bound (300 ms) and is
    // abandoned: not done at 250 ms, done at 400, well before a second bound, let alone 4 × toolTimeoutMs.
    expect(await settledAfter(() => agent.shutdown(), [250, 150])).toEqual([false, true]);
    expect((await within(turn.done)).status).toBe('cancelled');
  });
});

describe('close() is bounded like every other wait', () => {
  test('a storage that stops answering at close: close() returns after toolTimeoutMs and reports STORAGE_ERROR', async () => {
    let mode: 'ok' | 'refuse' | 'hang' = 'ok';
    class StallingStorage extends InMemorySessionStorage {
      override saveEvent(...args: Parameters<InMemorySessionStorage['saveEvent']>): Promise<void> {
        if (mode === 'refuse') return Promise.reject(new Error('disk full'));
        if (mode === 'hang') return new Promise(() => undefined);
        return super.saveEvent(...args);
      }
    }
    const background: string[] = [];
    const agent = await new AgentBuilder({
      defaultModel: 'scripted-model',
      toolTimeoutMs: 200,
      onBackgroundError: (error) => background.push(error.code),
    })
      .registerModelProvider(new RawProvider({}))
      .registerSessionStorage(new StallingStorage())
      .build();
    const session = await agent.newSession();
    mode = 'refuse';
    // The turn's saves are refused and stay queued in the session's log.
    expect((await within((await session.sendMessage('hello')).done)).status).toBe('failed');
    mode = 'hang';
    // On the test's clock: close waits its one bound (200 ms), not done at 150 ms, done at 300.
    expect(await settledAfter(() => session.close(), [150, 150])).toEqual([false, true]);
    expect(background).toContain('STORAGE_ERROR');
    await within(agent.shutdown());
  });
});
