import { AgentBuilder } from '@youyou/agent';
import { ScriptedModelProvider } from '@youyou/agent/testing';
import { openPostgresStorage, type PostgresStorage } from '@youyou/postgres';
import type { Pool } from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { dropSchema, randomSchema, testPool } from '../../postgres/test/support/database.js';
import { createServer, type ListeningServer, listen, TENANT_METADATA_KEY } from '../src/index.js';
import { readSse, type SseMessage, TOKENS } from './support/harness.js';

// The cross-process tail on a real PostgreSQL, in one process: the server's storage and a second storage on
// the same schema (another server process as PostgreSQL sees it) that writes events and announces them.
const schema = randomSchema();
let admin: Pool;
let served: PostgresStorage;
let writer: PostgresStorage;
let listening: ListeningServer;
let shutdown: () => Promise<void>;
/** The log reads the server's storage answered, counted around the real method. */
let reads = 0;

beforeAll(async () => {
  admin = testPool();
  served = await openPostgresStorage({ pool: testPool(), schema, onBackgroundError: () => undefined });
  writer = await openPostgresStorage({ pool: testPool(), schema, eventNotifications: true });
  const readEventsAfter = served.sessions.readEventsAfter.bind(served.sessions);
  served.sessions.readEventsAfter = (...args) => {
    reads += 1;
    return readEventsAfter(...args);
  };
  const agent = await new AgentBuilder({ defaultModel: 'scripted-model', maxActiveSessions: 4 })
    .registerModelProvider(new ScriptedModelProvider({ responses: [] }))
    .registerSessionStorage(served.sessions)
    .build();
  const server = createServer({
    agent,
    storage: served.sessions,
    auth: { tokens: { [TOKENS.alice]: 'alice' } },
    // No poll within a test: every read comes from a wake-up or a full page.
    limits: { logPollMs: 600_000 },
  });
  listening = await listen(server);
  shutdown = async () => {
    await listening.close();
    await agent.shutdown();
  };
}, 60_000);

afterAll(async () => {
  await shutdown?.();
  for (const storage of [served, writer]) {
    await storage?.close();
    await storage?.pool.end();
  }
  if (admin === undefined) return;
  await dropSchema(admin, schema);
  await admin.end();
});

const headers = { authorization: `Bearer ${TOKENS.alice}` };

async function newSession(): Promise<string> {
  const created = await fetch(`${listening.url}/sessions`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: '{}',
  });
  return ((await created.json()) as { sessionId: string }).sessionId;
}

function write(sessionId: string, index: number): Promise<void> {
  return writer.sessions.saveEvent(sessionId, {
    timestamp: new Date(),
    payload: { type: 'metadata', key: 'step', value: index },
  });
}

/** Tails the session's log from `after` into `received` until stopped. */
function tail(sessionId: string, after: number, received: SseMessage[]) {
  const controller = new AbortController();
  const done = (async () => {
    const response = await fetch(`${listening.url}/sessions/${sessionId}/log?after=${after}`, {
      headers,
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    for await (const message of readSse(response)) received.push(message);
  })().catch(() => undefined);
  return {
    stop: async () => {
      controller.abort();
      await done;
    },
  };
}

async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

test('a tail reads the log once per announced event, not once more after each', async () => {
  const sessionId = await newSession();
  const start = (await writer.sessions.readEventsAfter(sessionId, 0)).length;
  const received: SseMessage[] = [];
  const readsAtStart = reads;
  const tailing = tail(sessionId, start, received);
  await until(() => reads > readsAtStart, 'the first read of the tail');
  const readsBefore = reads;
  const events = 20;
  for (let index = 1; index <= events; index += 1) {
    await write(sessionId, index);
    await until(() => received.length === index, `event ${index} on the tail`);
  }
  const readsForEvents = reads - readsBefore;
  await tailing.stop();
  expect(received.map((message) => Number(message.id))).toEqual(
    Array.from({ length: events }, (_, index) => start + index + 1),
  );
  // One read per wake-up (a wake-up that came during a read may cost one more); two per event before.
  expect(readsForEvents).toBeLessThanOrEqual(events + 2);
}, 60_000);

test('a log longer than a page reaches the tail at once, page after page, in order', async () => {
  const sessionId = await newSession();
  const start = (await writer.sessions.readEventsAfter(sessionId, 0)).length;
  const events = 1_200;
  for (let index = 1; index <= events; index += 1) await write(sessionId, index);
  const received: SseMessage[] = [];
  const readsBefore = reads;
  const tailing = tail(sessionId, 0, received);
  await until(() => received.length === start + events, 'the whole log on the tail');
  await tailing.stop();
  expect(received.map((message) => Number(message.id))).toEqual(
    Array.from({ length: start + events }, (_, index) => index + 1),
  );
  // Three pages and the read that found the end; no poll was needed (it is ten minutes here).
  expect(reads - readsBefore).toBeLessThanOrEqual(5);
}, 120_000);

test('another server finds the tenant of a long session from the start of its log, not by loading it whole', async () => {
  const sessionId = await newSession();
  for (let index = 1; index <= 300; index += 1) await write(sessionId, index);
  // A second server on the same storage (a process that did not create the session), loads counted.
  const loadSession = served.sessions.loadSession.bind(served.sessions);
  let loads = 0;
  served.sessions.loadSession = (id) => {
    loads += 1;
    return loadSession(id);
  };
  const agent = await new AgentBuilder({ defaultModel: 'scripted-model', maxActiveSessions: 1 })
    .registerModelProvider(new ScriptedModelProvider({ responses: [] }))
    .registerSessionStorage(served.sessions)
    .build();
  const other = await listen(
    createServer({
      agent,
      storage: served.sessions,
      auth: { tokens: { [TOKENS.alice]: 'alice', [TOKENS.bob]: 'bob' } },
    }),
  );
  try {
    const asBob = await fetch(`${other.url}/sessions/${sessionId}`, {
      headers: { authorization: `Bearer ${TOKENS.bob}` },
    });
    expect(asBob.status).toBe(404);
    const asAlice = await fetch(`${other.url}/sessions/${sessionId}`, { headers });
    expect(asAlice.status).toBe(200);
    const listed = (await (await fetch(`${other.url}/sessions`, { headers })).json()) as {
      sessions: { sessionId: string }[];
    };
    expect(listed.sessions.map((summary) => summary.sessionId)).toContain(sessionId);
    expect(loads).toBe(0);
  } finally {
    served.sessions.loadSession = loadSession;
    await other.close();
    await agent.shutdown();
  }
}, 60_000);

test('a tenant written after the start of the log is still found (the whole log is read then)', async () => {
  const sessionId = 'written-elsewhere';
  for (let index = 1; index <= 30; index += 1) await write(sessionId, index);
  await writer.sessions.saveEvent(sessionId, {
    timestamp: new Date(),
    payload: { type: 'metadata', key: TENANT_METADATA_KEY, value: 'alice' },
  });
  const found = await fetch(`${listening.url}/sessions/${sessionId}`, { headers });
  expect(found.status).toBe(200);
  const unknown = await fetch(`${listening.url}/sessions/no-such-session`, { headers });
  expect(unknown.status).toBe(404);
});

test('an idle tail woken by notifications polls less and less often, and still gets the next event at once', async () => {
  const agent = await new AgentBuilder({ defaultModel: 'scripted-model', maxActiveSessions: 1 })
    .registerModelProvider(new ScriptedModelProvider({ responses: [] }))
    .registerSessionStorage(served.sessions)
    .build();
  const polling = await listen(
    createServer({
      agent,
      storage: served.sessions,
      auth: { tokens: { [TOKENS.alice]: 'alice' } },
      limits: { logPollMs: 20 },
    }),
  );
  const sessionId = await newSession();
  const received: SseMessage[] = [];
  const controller = new AbortController();
  const done = (async () => {
    const response = await fetch(`${polling.url}/sessions/${sessionId}/log?after=0`, {
      headers,
      signal: controller.signal,
    });
    for await (const message of readSse(response)) received.push(message);
  })().catch(() => undefined);
  try {
    await until(() => received.length > 0, 'the session start on the tail');
    const before = reads;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    // Every 20 ms would be ~75 reads; backing off to 160 ms makes about a dozen (a slow machine makes fewer).
    expect(reads - before).toBeLessThan(30);
    const seen = received.length;
    await write(sessionId, 1);
    await until(() => received.length > seen, 'the written event on the idle tail', 5_000);
  } finally {
    controller.abort();
    await done;
    await polling.close();
    await agent.shutdown();
  }
});
