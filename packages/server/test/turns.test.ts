import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import {
  createSession,
  type Harness,
  isTurnEnd,
  readSse,
  readUntil,
  type SseMessage,
  startHarness,
  untilForgotten,
} from './support/harness.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

test('a turn is streamed over SSE with id = sequence, and the answer is saved in the session', async () => {
  harness = await startHarness({
    responses: [
      [
        { type: 'text', text: 'Hello ' },
        { type: 'text', text: 'there.' },
      ],
    ],
  });
  const sessionId = await createSession(harness);
  const response = await harness.request(`/sessions/${sessionId}/messages`, {
    method: 'POST',
    json: { content: 'Hi' },
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  const messages = await readUntil(response, isTurnEnd);
  expect(messages.map((message) => message.event)).toEqual(['text_delta', 'text_delta', 'turn_complete']);
  const ids = messages.map((message) => Number(message.id));
  expect(ids).toEqual([...ids].sort((a, b) => a - b));
  expect(new Set(ids).size).toBe(3);
  expect(messages.map((message) => message.data.sequence)).toEqual(ids);
  expect(messages.every((message) => message.data.turnId === messages[0]?.data.turnId)).toBe(true);

  const saved = await harness.request(`/sessions/${sessionId}/messages`);
  const body = (await saved.json()) as { messages: { type: string; content: unknown }[] };
  expect(body.messages.map((message) => message.type)).toEqual(['user', 'assistant']);
  expect(JSON.stringify(body.messages[1]?.content)).toContain('Hello there.');
});

test('a client that drops mid-turn and reconnects with Last-Event-ID gets the rest exactly once', async () => {
  const steps = [];
  for (let index = 0; index < 8; index++) {
    steps.push({ type: 'text' as const, text: `part${index} ` }, { type: 'delay' as const, ms: 60 });
  }
  harness = await startHarness({ responses: [steps] });
  const sessionId = await createSession(harness);
  const abort = new AbortController();
  const first = await harness.request(`/sessions/${sessionId}/messages`, {
    method: 'POST',
    json: { content: 'Count' },
    signal: abort.signal,
  });
  const seen: string[] = [];
  for await (const message of readSse(first)) {
    seen.push(message.id ?? '');
    if (seen.length === 3) break;
  }
  abort.abort();
  const lastId = seen.at(-1) ?? '';
  const resumed = await harness.request(`/sessions/${sessionId}/events`, {
    headers: { 'last-event-id': lastId },
  });
  expect(resumed.status).toBe(200);
  const rest = await readUntil(resumed, isTurnEnd);
  const all = [...seen, ...rest.map((message) => message.id)].map(Number);
  expect(all).toHaveLength(9);
  expect(new Set(all).size).toBe(9);
  expect(all).toEqual([...all].sort((a, b) => a - b));
  expect(rest.at(-1)?.event).toBe('turn_complete');
  const text = rest
    .filter((message) => message.event === 'text_delta')
    .map((message) => message.data.payload.text)
    .join('');
  expect(text).toBe('part3 part4 part5 part6 part7 ');

  // The same tail by ?after= from the start, after the turn: the committed events, each once.
  const replay = await harness.request(`/sessions/${sessionId}/events?after=0`);
  const replayed = await readUntil(replay, isTurnEnd);
  expect(replayed.map((message) => Number(message.id))).toEqual(all);
});

test('cancel ends the running turn with turn_cancelled', async () => {
  harness = await startHarness({ responses: [[{ type: 'text', text: 'Thinking' }, { type: 'hang' }]] });
  const sessionId = await createSession(harness);
  const response = await harness.request(`/sessions/${sessionId}/messages`, {
    method: 'POST',
    json: { content: 'Go' },
  });
  const stream = readSse(response);
  expect((await stream.next()).value?.event).toBe('text_delta');
  const cancel = await harness.request(`/sessions/${sessionId}/cancel`, { method: 'POST' });
  expect(await cancel.json()).toEqual({ cancelled: true });
  const rest: string[] = [];
  for await (const message of stream) rest.push(message.event ?? '');
  expect(rest.at(-1)).toBe('turn_cancelled');
  const state = await harness.request(`/sessions/${sessionId}`);
  expect(((await state.json()) as { turnRunning: boolean }).turnRunning).toBe(false);
});

test('steer puts a message into the running turn, which the model sees before its next call', async () => {
  harness = await startHarness({
    responses: [
      [
        { type: 'text', text: 'Working' },
        { type: 'delay', ms: 300 },
      ],
      [{ type: 'text', text: 'Steered answer' }],
    ],
  });
  const sessionId = await createSession(harness);
  const response = await harness.request(`/sessions/${sessionId}/messages`, {
    method: 'POST',
    json: { content: 'Start' },
  });
  const stream = readSse(response);
  const first = (await stream.next()).value;
  expect(first?.event).toBe('text_delta');
  const steer = await harness.request(`/sessions/${sessionId}/steer`, {
    method: 'POST',
    json: { content: 'Use French' },
  });
  expect(steer.status).toBe(202);
  expect(((await steer.json()) as { turnId: string }).turnId).toBe(first?.data.turnId);
  const rest: string[] = [];
  for await (const message of stream) rest.push(message.event ?? '');
  expect(rest).toContain('steered');
  expect(rest.at(-1)).toBe('turn_complete');
  expect(JSON.stringify(harness.provider.requests[1]?.messages)).toContain('Use French');
});

test('a session closed while idle is resumed on demand and its sequence goes on', async () => {
  harness = await startHarness({
    limits: { idleSessionMs: 50 },
    responses: [[{ type: 'text', text: 'one' }], [{ type: 'text', text: 'two' }]],
  });
  const sessionId = await createSession(harness);
  const first = await readUntil(
    await harness.request(`/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'a' } }),
    isTurnEnd,
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  const idle = (await (await harness.request(`/sessions/${sessionId}`)).json()) as { active: boolean };
  expect(idle.active).toBe(false);
  const second = await readUntil(
    await harness.request(`/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'b' } }),
    isTurnEnd,
  );
  expect(Number(second[0]?.id)).toBeGreaterThan(Number(first.at(-1)?.id));
  expect(JSON.stringify(harness.provider.requests[1]?.messages)).toContain('one');
});

test('with every slot of the agent taken, an idle session is closed to make room, and resumes later', async () => {
  harness = await startHarness({
    maxActiveSessions: 1,
    responses: [
      [{ type: 'text', text: 'first' }],
      [{ type: 'text', text: 'second' }],
      [{ type: 'text', text: 'third' }],
    ],
  });
  const one = await createSession(harness);
  await readUntil(
    await harness.request(`/sessions/${one}/messages`, { method: 'POST', json: { content: 'a' } }),
    isTurnEnd,
  );
  const two = await createSession(harness);
  await readUntil(
    await harness.request(`/sessions/${two}/messages`, { method: 'POST', json: { content: 'b' } }),
    isTurnEnd,
  );
  const again = await readUntil(
    await harness.request(`/sessions/${one}/messages`, { method: 'POST', json: { content: 'c' } }),
    isTurnEnd,
  );
  expect(again.at(-1)?.event).toBe('turn_complete');
  expect(JSON.stringify(harness.provider.requests[2]?.messages)).toContain('first');
  expect(JSON.stringify(harness.provider.requests[2]?.messages)).not.toContain('second');
});

test('a second session while the only slot runs a turn is 429 SERVER_BUSY with Retry-After; it works once the turn ends', async () => {
  harness = await startHarness({
    maxActiveSessions: 1,
    limits: { busyRetryAfterSeconds: 3 },
    responses: [[{ type: 'hang' }]],
  });
  const one = await createSession(harness);
  const running = await harness.request(`/sessions/${one}/messages`, {
    method: 'POST',
    json: { content: 'a' },
  });
  const stream = readSse(running);
  const busy = await harness.request('/sessions', { method: 'POST', json: {} });
  expect(busy.status).toBe(429);
  expect(busy.headers.get('retry-after')).toBe('3');
  expect(((await busy.json()) as { error: { code: string } }).error.code).toBe('SERVER_BUSY');
  await harness.request(`/sessions/${one}/cancel`, { method: 'POST' });
  for await (const _message of stream) {
    // drained to the turn's end
  }
  // The slot's session is idle now: it is closed to make room.
  expect((await harness.request('/sessions', { method: 'POST', json: {} })).status).toBe(201);
});

test('a session idle past the retention is forgotten, its events with it, and its numbering goes on', async () => {
  harness = await startHarness({
    limits: { idleSessionMs: 30, journalRetentionMs: 30 },
    responses: [[{ type: 'text', text: 'one' }], [{ type: 'text', text: 'two' }]],
  });
  const sessionId = await createSession(harness);
  const first = await readUntil(
    await harness.request(`/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'a' } }),
    isTurnEnd,
  );
  await untilForgotten(harness, sessionId);
  const second = await readUntil(
    await harness.request(`/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'b' } }),
    isTurnEnd,
  );
  expect(Number(second[0]?.id)).toBeGreaterThan(Number(first.at(-1)?.id));
  // The first turn's last cursor cannot be continued (its events were dropped from memory): the client is told
  // to resync at the newest sequence instead of getting a stream with a hole in it.
  const tail = readSse(
    await harness.request(`/sessions/${sessionId}/events`, {
      headers: { 'last-event-id': first.at(-1)?.id ?? '' },
    }),
  );
  const resync = (await tail.next()).value;
  expect(resync?.event).toBe('resync');
  expect(resync?.id).toBe(second.at(-1)?.id);
  await tail.return(undefined);
  // A tail from 0 gets what this process holds, as after a restart: the second turn (the first is in the history).
  const fromStart = readSse(await harness.request(`/sessions/${sessionId}/events?after=0`));
  expect((await fromStart.next()).value?.id).toBe(second[0]?.id);
  await fromStart.return(undefined);
  // The second turn's own cursor still continues: nothing after it.
  const fromSecond = readSse(
    await harness.request(`/sessions/${sessionId}/events`, {
      headers: { 'last-event-id': second[0]?.id ?? '' },
    }),
  );
  const next = (await fromSecond.next()).value;
  expect(next?.id).toBe(second[1]?.id);
  await fromSecond.return(undefined);
});

test('a follow-up queued during a turn starts the next turn when it ends, and a tail shows both', async () => {
  harness = await startHarness({
    responses: [
      [
        { type: 'text', text: 'first' },
        { type: 'delay', ms: 200 },
      ],
      [{ type: 'text', text: 'follow-up answer' }],
    ],
  });
  const sessionId = await createSession(harness);
  const response = await harness.request(`/sessions/${sessionId}/messages`, {
    method: 'POST',
    json: { content: 'Start' },
  });
  const stream = readSse(response);
  expect((await stream.next()).value?.event).toBe('text_delta');
  const queued = await harness.request(`/sessions/${sessionId}/follow-up`, {
    method: 'POST',
    json: { content: 'And then?' },
  });
  expect(queued.status).toBe(202);
  expect(await queued.json()).toEqual({ queued: true });
  for await (const _message of stream) {
    // the first turn, to its end
  }
  const tail = await harness.request(`/sessions/${sessionId}/events?after=0`);
  const ends: string[] = [];
  const turnIds = new Set<string>();
  for await (const message of readSse(tail)) {
    turnIds.add(message.data.turnId);
    if (isTurnEnd(message)) ends.push(message.event ?? '');
    if (ends.length === 2) break;
  }
  expect(ends).toEqual(['turn_complete', 'turn_complete']);
  expect(turnIds.size).toBe(2);
  expect(JSON.stringify(harness.provider.requests[1]?.messages)).toContain('And then?');
});

test('the server is a hono app: app.request answers without a listener', async () => {
  const { createServer } = await import('../src/index.js');
  const { AgentBuilder, InMemorySessionStorage } = await import('@youyou/agent');
  const { ScriptedModelProvider } = await import('@youyou/agent/testing');
  const agent = await new AgentBuilder({ defaultModel: 'scripted-model' })
    .registerModelProvider(new ScriptedModelProvider({ responses: [] }))
    .registerSessionStorage(new InMemorySessionStorage())
    .build();
  const server = createServer({
    agent,
    auth: { verify: (token) => (token === 'in-process-token' ? 'solo' : null) },
  });
  const created = await server.request('/sessions', {
    method: 'POST',
    headers: { authorization: 'Bearer in-process-token' },
  });
  expect(created.status).toBe(201);
  expect((await server.request('/sessions', { headers: { authorization: 'Bearer other' } })).status).toBe(
    401,
  );
  // An auth option that maps no token, or a token to a bad tenant, is refused when the server is made.
  expect(() => createServer({ agent, auth: { tokens: {} } })).toThrow(TypeError);
  expect(() => createServer({ agent, auth: { tokens: { 'some-token': 'bad tenant' } } })).toThrow(TypeError);
  await server.close();
  await agent.shutdown();
});

test('a Last-Event-ID this server never issued (a previous process) is told to resync, then gets live events', async () => {
  harness = await startHarness({
    responses: [[{ type: 'text', text: 'kept' }], [{ type: 'text', text: 'next' }]],
  });
  const sessionId = await createSession(harness);
  const turn = await readUntil(
    await harness.request(`/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'a' } }),
    isTurnEnd,
  );
  // Both older and newer than anything issued here: neither can be continued without a possible hole.
  for (const foreign of ['999', String(Number(turn.at(-1)?.id) + 5)]) {
    const tail = readSse(
      await harness.request(`/sessions/${sessionId}/events`, { headers: { 'last-event-id': foreign } }),
    );
    const first = (await tail.next()).value;
    expect(first?.event).toBe('resync');
    // The newest sequence here, or the client's own cursor when that is larger (never a step back).
    expect(Number(first?.id)).toBe(Math.max(Number(turn.at(-1)?.id), Number(foreign)));
    await tail.return(undefined);
  }
  // After a resync the client's cursor is the resync's id: the next turn arrives on it, nothing twice.
  const resumed = await harness.request(`/sessions/${sessionId}/events`, {
    headers: { 'last-event-id': '999' },
  });
  const stream = readSse(resumed);
  const resync = (await stream.next()).value;
  const posted = await harness.request(`/sessions/${sessionId}/messages`, {
    method: 'POST',
    json: { content: 'b' },
  });
  const live: SseMessage[] = [];
  for await (const message of stream) {
    live.push(message);
    if (isTurnEnd(message)) break;
  }
  await posted.body?.cancel();
  expect(live.map((message) => message.event)).toEqual(['text_delta', 'turn_complete']);
  expect(live.every((message) => Number(message.id) > Number(resync?.id))).toBe(true);
});

test("a provider's failure reaches the SSE stream as its code and a fixed sentence, without the provider's text", async () => {
  harness = await startHarness({
    responses: [[{ type: 'error', error: new Error('upstream down: key sk-secret at 10.0.0.7') }]],
  });
  const sessionId = await createSession(harness);
  const response = await harness.request(`/sessions/${sessionId}/messages`, {
    method: 'POST',
    json: { content: 'Hi' },
  });
  const messages = await readUntil(response, isTurnEnd);
  const errors = messages.filter((message) => message.event === 'error');
  expect(errors).toHaveLength(1);
  const raw = JSON.stringify(messages);
  expect(raw).toContain('PROVIDER_ERROR');
  expect(raw).not.toContain('sk-secret');
  expect(raw).not.toContain('10.0.0.7');
});

test('after a server restart, a client reconnecting with its old cursor is told to resync and misses no new event', async () => {
  const folder = await mkdtemp(join(tmpdir(), 'youyou-server-renumber-'));
  try {
    const databasePath = join(folder, 'agent.db');
    harness = await startHarness({
      databasePath,
      responses: Array.from({ length: 3 }, (_unused, index) => [
        { type: 'text' as const, text: `a${index}` },
      ]),
    });
    const sessionId = await createSession(harness);
    let before: SseMessage[] = [];
    for (const content of ['one', 'two', 'three']) {
      before = await readUntil(
        await harness.request(`/sessions/${sessionId}/messages`, { method: 'POST', json: { content } }),
        isTurnEnd,
      );
    }
    const oldCursor = before.at(-1)?.id ?? '';
    await harness.close();

    harness = await startHarness({ databasePath, responses: [[{ type: 'text', text: 'after' }]] });
    // The new process relays a turn before the old client comes back: its events must not hide behind the old cursor.
    const fresh = await readUntil(
      await harness.request(`/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'four' } }),
      isTurnEnd,
    );
    expect(fresh.every((message) => Number(message.id) > Number(oldCursor))).toBe(true);
    const tail = readSse(
      await harness.request(`/sessions/${sessionId}/events`, { headers: { 'last-event-id': oldCursor } }),
    );
    const first = (await tail.next()).value;
    expect(first?.event).toBe('resync');
    expect(first?.id).toBe(fresh.at(-1)?.id);
    await tail.return(undefined);
    // What the client reloads on a resync: the committed history, the new turn included.
    const history = (await (await harness.request(`/sessions/${sessionId}/messages`)).json()) as {
      messages: { type: string }[];
    };
    expect(history.messages.filter((message) => message.type === 'user')).toHaveLength(4);
  } finally {
    await harness?.close();
    harness = undefined;
    await rm(folder, { recursive: true, force: true });
  }
});
