import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { openPostgresStorage, type PostgresStorage } from '@youyou/postgres';
import type { Pool } from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { dropSchema, poolConfig, randomSchema, testPool } from '../../postgres/test/support/database.js';
import { ensureServerBuilt } from './support/build.js';
import { createSession, readSse, type SseMessage, startHarness, TOKENS } from './support/harness.js';

const fixture = fileURLToPath(new URL('./fixtures/server-process.mjs', import.meta.url));
const schema = randomSchema();
const TTL_MS = 1_500;
let admin: Pool;
let inspector: PostgresStorage;
const children: ChildProcess[] = [];

beforeAll(async () => {
  admin = testPool();
  // The children run the built packages, as deployed servers would.
  await ensureServerBuilt();
  inspector = await openPostgresStorage({ pool: admin, schema });
}, 240_000);

afterAll(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await inspector?.close();
  if (admin === undefined) return;
  await dropSchema(admin, schema);
  await admin.end();
});

/** Starts a server process on the shared schema with its own scripted model; answers its URL. */
async function startServer(responses: unknown[]): Promise<{ url: string; child: ChildProcess }> {
  const child = fork(fixture, [], {
    execArgv: [],
    env: {
      ...process.env,
      YOUYOU_SCALE_TEST: JSON.stringify({
        pool: poolConfig({ max: 4 }),
        schema,
        ttlMs: TTL_MS,
        responses,
        slowToolMs: 120_000,
      }),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (message: { url: string }) => resolve(message.url));
    child.once('exit', (code) => reject(new Error(`the server process exited (${code}) before listening`)));
  });
  return { url, child };
}

function request(url: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> {
  const { json, ...rest } = init;
  const headers = new Headers(rest.headers);
  headers.set('authorization', `Bearer ${TOKENS.alice}`);
  if (json !== undefined) headers.set('content-type', 'application/json');
  return fetch(url, { ...rest, headers, ...(json === undefined ? {} : { body: JSON.stringify(json) }) });
}

/** A tail of `/sessions/:id/log` read in the background into `received`; `done` settles when the stream ends. */
function tail(
  url: string,
  lastEventId: string | undefined,
  received: SseMessage[],
): { done: Promise<void>; stop: () => void } {
  const controller = new AbortController();
  const headers: Record<string, string> = lastEventId === undefined ? {} : { 'last-event-id': lastEventId };
  const done = (async () => {
    const response = await request(url, { headers, signal: controller.signal });
    expect(response.status).toBe(200);
    for await (const message of readSse(response)) received.push(message);
  })().catch(() => undefined);
  return { done, stop: () => controller.abort() };
}

async function until(
  check: () => boolean | Promise<boolean>,
  what: () => string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const types = (messages: SseMessage[]) => messages.map((message) => message.event);
const ids = (messages: SseMessage[]) => messages.map((message) => Number(message.id));

test('a turn on A is tailed from B; A killed mid-turn, the session continues on B and a reconnecting client gets every committed event once, in order', async () => {
  const a = await startServer([
    [{ type: 'tool_call', toolName: 'slow', arguments: {}, callId: 'call_slow' }],
  ]);
  const b = await startServer([[{ type: 'text', text: 'finished on B' }]]);

  const created = await request(`${a.url}/sessions`, { method: 'POST', json: {} });
  expect(created.status).toBe(201);
  const { sessionId } = (await created.json()) as { sessionId: string };

  // Client 1 tails from B; client 2 tails from A and will reconnect to B after A dies.
  const onB: SseMessage[] = [];
  const tailB = tail(`${b.url}/sessions/${sessionId}/log`, undefined, onB);
  const onA: SseMessage[] = [];
  const tailA = tail(`${a.url}/sessions/${sessionId}/log`, undefined, onA);

  // A viewer of B's live stream: the turn runs on A, so B tells it to reload the history as A commits.
  const watchingB: SseMessage[] = [];
  const tailWatching = tail(`${b.url}/sessions/${sessionId}/events`, undefined, watchingB);
  // B holds no session: it starts with a resync (whatever was committed before it listened), then listens.
  await until(
    () => types(watchingB).includes('resync'),
    () => `the first resync on B's live stream: ${types(watchingB)}`,
  );

  const turn = await request(`${a.url}/sessions/${sessionId}/messages`, {
    method: 'POST',
    json: { content: 'go' },
  });
  expect(turn.status).toBe(200);
  const turnEvents = readSse(turn);
  // A streams the tool call live; B sees the same turn's committed events through the log. The servers' safety
  // poll is longer than the test (fixtures/server-process.mjs), so only the NOTIFY can have woken B's tail.
  await until(
    () => types(onB).includes('tool_call'),
    () => `the tool call tailed from B: A ${types(onA)} B ${types(onB)}`,
  );
  await until(
    () => types(onA).includes('tool_call'),
    () => `the tool call tailed from A: A ${types(onA)} B ${types(onB)}`,
  );
  await until(
    () => types(watchingB).length >= 2,
    () => `a resync on B's live stream after A's commits: ${types(watchingB)}`,
  );
  tailWatching.stop();
  await tailWatching.done;
  expect(new Set(types(watchingB))).toEqual(new Set(['resync']));
  expect(new Set(ids(watchingB))).toEqual(new Set([0]));

  // B reads the history while A holds the lease and runs the turn: no SESSION_BUSY, the call shows unanswered.
  const read = await request(`${b.url}/sessions/${sessionId}/messages`);
  expect(read.status).toBe(200);
  const history = (await read.json()) as { messages: { type: string }[] };
  expect(history.messages.map((message) => message.type)).toEqual(['user', 'tool_call']);

  // A client of the live stream saw A's first event; it will reconnect to B's live stream with that cursor.
  const liveOnA = (await turnEvents.next()).value as SseMessage | undefined;
  expect(liveOnA?.id).toBeDefined();
  await turnEvents.return(undefined);

  a.child.kill('SIGKILL');
  await tailA.done;
  const lastSeenOnA = onA.at(-1)?.id;
  expect(lastSeenOnA).toBeDefined();

  // The reconnecting client resumes on B from the last id it saw.
  const resumed: SseMessage[] = [];
  const tailResumed = tail(`${b.url}/sessions/${sessionId}/log`, lastSeenOnA, resumed);
  const liveOnB: SseMessage[] = [];
  const tailLive = tail(`${b.url}/sessions/${sessionId}/events`, liveOnA?.id, liveOnB);
  await until(
    () => liveOnB.length > 0,
    () => 'the resync on B',
  );

  // The next request runs on B once A's lease has expired (SESSION_BUSY until then).
  let next: Response;
  for (;;) {
    next = await request(`${b.url}/sessions/${sessionId}/messages`, {
      method: 'POST',
      json: { content: 'go on' },
    });
    if (next.status !== 409) break;
    await next.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  expect(next.status).toBe(200);
  const bTurn: SseMessage[] = [];
  for await (const message of readSse(next)) {
    bTurn.push(message);
    if (['turn_complete', 'turn_cancelled', 'turn_suspended'].includes(message.data.payload.type)) break;
  }
  expect(bTurn.at(-1)?.data.payload.type).toBe('turn_complete');

  // B replayed the log with the interrupted call answered as such, then ran the rest of the turn.
  const messages = (await (await request(`${b.url}/sessions/${sessionId}/messages`)).json()) as {
    messages: { type: string; callId?: string; isError?: boolean; content?: unknown }[];
  };
  expect(
    messages.messages.some((m) => m.type === 'tool_result' && m.callId === 'call_slow' && m.isError === true),
  ).toBe(true);
  expect(JSON.stringify(messages.messages.at(-1))).toContain('finished on B');

  const committed = await inspector.sessions.readEventsAfter(sessionId, 0);
  const lastCommitted = committed.at(-1)?.sequence ?? 0;
  await until(
    () => (onB.at(-1) ? Number(onB.at(-1)?.id) : 0) >= lastCommitted,
    () => `B tail to catch up: A ${types(onA)} B ${types(onB)}`,
  );
  await until(
    () => (resumed.at(-1) ? Number(resumed.at(-1)?.id) : 0) >= lastCommitted,
    () => `resumed tail to catch up: ${types(resumed)}`,
  );
  await until(
    () => types(liveOnB).includes('turn_complete'),
    () => `B's turn on the live tail: ${types(liveOnB)}`,
  );
  tailB.stop();
  tailResumed.stop();
  tailLive.stop();
  await Promise.all([tailB.done, tailResumed.done, tailLive.done]);

  // The live stream cannot carry A's events to B (they were in A's memory): B says resync, never moves the
  // client's cursor back, and numbers B's turn after everything A relayed, so the client drops nothing new.
  expect(liveOnB[0]?.event).toBe('resync');
  expect(Number(liveOnB[0]?.id)).toBeGreaterThanOrEqual(Number(liveOnA?.id));
  const liveIds = ids(liveOnB);
  expect(liveIds).toEqual([...liveIds].sort((x, y) => x - y));
  expect(new Set(liveIds).size).toBe(liveIds.length);
  expect(ids(bTurn).every((id) => id > Number(liveOnA?.id))).toBe(true);
  expect(ids(liveOnB.filter((message) => message.event !== 'resync'))).toEqual(ids(bTurn));

  // Every committed event exactly once, in log order, with the payload the log holds.
  const expected = committed.map((event) => event.sequence);
  expect(expected).toEqual(Array.from({ length: expected.length }, (_, index) => index + 1));
  const reconnecting = [...onA, ...resumed];
  expect(ids(reconnecting)).toEqual(expected);
  expect(ids(onB)).toEqual(expected);
  expect(reconnecting.map((message) => message.data.payload.type)).toEqual(
    committed.map((event) => event.payload.type),
  );
  // Events of both processes' turns are in the log the client saw.
  expect(JSON.stringify(reconnecting.map((message) => message.data.payload))).toContain('finished on B');
}, 120_000);

test('the log route refuses a bad cursor and another tenant', async () => {
  const server = await startServer([]);
  const created = await request(`${server.url}/sessions`, { method: 'POST', json: {} });
  const { sessionId } = (await created.json()) as { sessionId: string };
  const bad = await request(`${server.url}/sessions/${sessionId}/log`, { headers: { 'last-event-id': 'x' } });
  expect(bad.status).toBe(400);
  expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('INVALID_INPUT');
  const foreign = await fetch(`${server.url}/sessions/${sessionId}/log`, {
    headers: { authorization: `Bearer ${TOKENS.bob}` },
  });
  expect(foreign.status).toBe(404);
  expect(((await foreign.json()) as { error: { code: string } }).error.code).toBe('SESSION_NOT_FOUND');
}, 60_000);

test('on SQLite (one process) the log route answers 501 NOT_SUPPORTED', async () => {
  const harness = await startHarness({ responses: [[{ type: 'text', text: 'hi' }]] });
  try {
    const sessionId = await createSession(harness);
    const response = await harness.request(`/sessions/${sessionId}/log`);
    expect(response.status).toBe(501);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('NOT_SUPPORTED');
  } finally {
    await harness.close();
  }
});
