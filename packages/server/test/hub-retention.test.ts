import { AgentBuilder, InMemorySessionStorage } from '@youyou/agent';
import { ScriptedModelProvider } from '@youyou/agent/testing';
import { afterEach, expect, test } from 'vitest';
import { SessionHub } from '../src/sessions/hub.js';
import type { SessionJournal } from '../src/sessions/journal.js';
import type { JournalBudget } from '../src/sessions/journal-budget.js';
import {
  createSession,
  type Harness,
  isTurnEnd,
  readSse,
  readUntil,
  startHarness,
  untilForgotten,
} from './support/harness.js';
import { eventually } from './support/ui-chat.js';

let harness: Harness | undefined;
let hub: SessionHub | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await hub?.close();
  hub = undefined;
});

/** The hub's retention (a private field), whose maps and budget are private fields too. */
function retentionOf(target: SessionHub): Record<string, unknown> {
  return (target as unknown as { retention: Record<string, unknown> }).retention;
}

/**
 * How many entries each per-session map of the hub and its retention holds (private fields: what a
 * long-running server keeps).
 */
function heldBy(target: SessionHub): Record<string, number> {
  const fields = { ...(target as unknown as Record<string, unknown>), ...retentionOf(target) };
  const names = ['open', 'opening', 'journals', 'tenants', 'forgetTimers'] as const;
  return Object.fromEntries(names.map((name) => [name, (fields[name] as Map<string, unknown>)?.size ?? -1]));
}

/** The hub's byte budget over its journals (a private field of its retention). */
function budgetOf(target: SessionHub): JournalBudget {
  return retentionOf(target).budget as JournalBudget;
}

const NOTHING_HELD = { open: 0, opening: 0, journals: 0, tenants: 0, forgetTimers: 0 };

test('after the sessions close and the retention passes, the hub holds nothing of them and their journals are collected', async () => {
  const sessions = new InMemorySessionStorage();
  const turns = 6;
  const agent = await new AgentBuilder({ defaultModel: 'scripted-model', maxActiveSessions: 8 })
    .registerModelProvider(
      new ScriptedModelProvider({
        responses: Array.from({ length: turns }, (_, index) => [{ type: 'text', text: `answer ${index}` }]),
      }),
    )
    .registerSessionStorage(sessions)
    .build();
  const options = {
    agent,
    turnOptionsOf: async () => undefined,
    storage: sessions,
    idleMs: 10,
    journalCapacity: 100,
    journalRetentionMs: 10,
    journalMaxBytes: 64 * 2 ** 20,
    busyRetryAfterSeconds: 1,
    autoContinue: false,
  };
  hub = new SessionHub(options);
  const journals: WeakRef<SessionJournal>[] = [];
  const ids: string[] = [];
  for (let index = 0; index < turns; index++) {
    const { sessionId, journal } = await runOneTurn(hub, index);
    ids.push(sessionId);
    journals.push(journal);
  }
  // Another hub on the same storage looks the sessions up (a listing) and tails one it never opens.
  const other = new SessionHub(options);
  journals.push(await tailWhileHeld(other, ids));
  await eventually(() => JSON.stringify(heldBy(hub as SessionHub)) === JSON.stringify(NOTHING_HELD));
  // The forgotten journals' bytes left the byte budget too (it would otherwise fill up and drop live sessions').
  expect(budgetOf(hub as SessionHub).keptBytes).toBe(0);
  await other.close();
  const gc = globalThis.gc;
  if (gc === undefined) throw new Error('run with --expose-gc (the vitest config does)');
  gc();
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  expect(journals.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
});

/** Creates a session on `hub` and runs one turn while a stream reads its journal; a WeakRef to the journal. */
async function runOneTurn(
  target: SessionHub,
  index: number,
): Promise<{ sessionId: string; journal: WeakRef<SessionJournal> }> {
  const sessionId = await target.create('alice', {});
  const session = await target.session(sessionId);
  const journal = target.journal(sessionId);
  const subscription = journal.subscribe(0, () => undefined);
  const turn = await session.sendMessage(`question ${index}`);
  target.track(sessionId, turn);
  await turn.done;
  subscription.unsubscribe();
  return { sessionId, journal: new WeakRef(journal) };
}

/** Looks up `ids` on `other`, tails the first, checks what it holds meanwhile, and leaves; a WeakRef to the tail. */
async function tailWhileHeld(other: SessionHub, ids: readonly string[]): Promise<WeakRef<SessionJournal>> {
  for (const sessionId of ids) expect(await other.ownerOf(sessionId)).toBe('alice');
  const tail = other.journal(ids[0] ?? '');
  const reading = tail.subscribe(0, () => undefined);
  // The tailed session stays while its stream reads: its tenant and its journal, nothing else.
  await eventually(() => heldBy(other).tenants === 1 && heldBy(other).forgetTimers === 0);
  expect(heldBy(other)).toEqual({ ...NOTHING_HELD, journals: 1, tenants: 1 });
  reading.unsubscribe();
  await eventually(() => JSON.stringify(heldBy(other)) === JSON.stringify(NOTHING_HELD));
  return new WeakRef(tail);
}

test('a client back with a cursor of a forgotten journal is told to resync, and new events number after it', async () => {
  harness = await startHarness({
    limits: { idleSessionMs: 10, journalRetentionMs: 10 },
    responses: [[{ type: 'text', text: 'one' }], [{ type: 'text', text: 'two' }]],
  });
  const sessionId = await createSession(harness);
  const first = await readUntil(
    await harness.request(`/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'a' } }),
    isTurnEnd,
  );
  const oldCursor = first.at(-1)?.id ?? '';
  expect(Number(oldCursor)).toBeGreaterThan(0);
  await untilForgotten(harness, sessionId);
  const back = readSse(
    await harness.request(`/sessions/${sessionId}/events`, { headers: { 'last-event-id': oldCursor } }),
  );
  const resync = (await back.next()).value;
  expect(resync?.event).toBe('resync');
  // Never behind the client's own cursor.
  expect(resync?.id).toBe(oldCursor);
  // The session's next turn, while that client still reads: it sees every event, each numbered after its cursor.
  const second = await readUntil(
    await harness.request(`/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'b' } }),
    isTurnEnd,
  );
  expect(Number(second[0]?.id)).toBeGreaterThan(Number(oldCursor));
  const seen: string[] = [];
  for await (const message of back) {
    seen.push(message.id ?? '');
    if (isTurnEnd(message)) break;
  }
  expect(seen).toEqual(second.map((message) => message.id));
  // A cursor of the new journal is continued.
  const fromSecond = readSse(
    await harness.request(`/sessions/${sessionId}/events`, {
      headers: { 'last-event-id': second[0]?.id ?? '' },
    }),
  );
  expect((await fromSecond.next()).value?.id).toBe(second[1]?.id);
  await fromSecond.return(undefined);
  // The history is whole in the storage, where a resynced client reads it.
  const history = (await (await harness.request(`/sessions/${sessionId}/messages`)).json()) as {
    messages: unknown[];
  };
  expect(JSON.stringify(history.messages)).toContain('one');
  expect(JSON.stringify(history.messages)).toContain('two');
});
