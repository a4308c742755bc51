import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolHandler } from '@youyou/agent';
import { afterEach, expect, test } from 'vitest';
import {
  createSession,
  type Harness,
  isTurnEnd,
  readSse,
  readUntil,
  startHarness,
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
  expect(messages.map((message) => message.id)).toEqual(['1', '2', '3']);
  expect(messages.map((message) => message.data.sequence)).toEqual([1, 2, 3]);
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
  expect(all).toEqual(Array.from({ length: 9 }, (_unused, index) => index + 1));
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

function deployTool(ran: unknown[]): ToolHandler {
  return {
    name: 'deploy',
    description: 'deploys a service',
    parametersSchema: { type: 'object', properties: { service: { type: 'string' } }, required: ['service'] },
    isMutating: true,
    needsApproval: true,
    execute: async (input) => {
      ran.push(input.arguments);
      return {
        content: `deployed ${String((input.arguments as { service: string }).service)}`,
        isError: false,
      };
    },
  };
}

test('a call that needs approval suspends the turn; approving it over HTTP runs the tool and continues', async () => {
  const ran: unknown[] = [];
  harness = await startHarness({
    tools: [deployTool(ran)],
    responses: [
      [{ type: 'tool_call', toolName: 'deploy', arguments: { service: 'web' }, callId: 'call_a' }],
      [{ type: 'text', text: 'Deployed.' }],
    ],
  });
  const sessionId = await createSession(harness);
  const first = await readUntil(
    await harness.request(`/sessions/${sessionId}/messages`, {
      method: 'POST',
      json: { content: 'Ship it' },
    }),
    isTurnEnd,
  );
  const suspended = first.at(-1);
  expect(suspended?.event).toBe('turn_suspended');
  expect(suspended?.data.payload.pendingCalls).toEqual([
    { callId: 'call_a', toolName: 'deploy', arguments: { service: 'web' } },
  ]);
  expect(ran).toEqual([]);

  const approved = await harness.request(`/sessions/${sessionId}/approvals/call_a`, {
    method: 'POST',
    json: { approved: true },
  });
  expect(approved.status).toBe(200);
  const continued = await readUntil(approved, isTurnEnd);
  expect(continued.map((message) => message.event)).toEqual([
    'tool_call_start',
    'tool_call_end',
    'text_delta',
    'turn_complete',
  ]);
  expect(continued[0]?.data.turnId).toBe(suspended?.data.turnId);
  expect(Number(continued[0]?.id)).toBe(Number(suspended?.id) + 1);
  expect(ran).toEqual([{ service: 'web' }]);
});

test('denying a call over HTTP gives the model the reason and the turn continues without running it', async () => {
  const ran: unknown[] = [];
  harness = await startHarness({
    tools: [deployTool(ran)],
    responses: [
      [{ type: 'tool_call', toolName: 'deploy', arguments: { service: 'db' }, callId: 'call_d' }],
      [{ type: 'text', text: 'Understood.' }],
    ],
  });
  const sessionId = await createSession(harness);
  await readUntil(
    await harness.request(`/sessions/${sessionId}/messages`, {
      method: 'POST',
      json: { content: 'Drop db' },
    }),
    isTurnEnd,
  );
  const denied = await harness.request(`/sessions/${sessionId}/approvals/call_d`, {
    method: 'POST',
    json: { approved: false, reason: 'not on a Friday' },
  });
  const continued = await readUntil(denied, isTurnEnd);
  expect(continued.at(-1)?.event).toBe('turn_complete');
  const end = continued.find((message) => message.event === 'tool_call_end');
  expect(end?.data.payload.success).toBe(false);
  expect(ran).toEqual([]);
  const lastRequest = harness.provider.requests.at(-1);
  expect(JSON.stringify(lastRequest?.messages.at(-1))).toContain('not on a Friday');

  const unknownCall = await harness.request(`/sessions/${sessionId}/approvals/call_d`, {
    method: 'POST',
    json: { approved: true },
  });
  expect(unknownCall.status).toBe(400);
  expect(((await unknownCall.json()) as { error: { code: string } }).error.code).toBe('INVALID_INPUT');
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
  expect(Number(second[0]?.id)).toBe(Number(first.at(-1)?.id) + 1);
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

test('a second session while the only slot runs a turn is 409 SESSION_BUSY', async () => {
  harness = await startHarness({ maxActiveSessions: 1, responses: [[{ type: 'hang' }]] });
  const one = await createSession(harness);
  const running = await harness.request(`/sessions/${one}/messages`, {
    method: 'POST',
    json: { content: 'a' },
  });
  const stream = readSse(running);
  const busy = await harness.request('/sessions', { method: 'POST', json: {} });
  expect(busy.status).toBe(409);
  expect(((await busy.json()) as { error: { code: string } }).error.code).toBe('SESSION_BUSY');
  await harness.request(`/sessions/${one}/cancel`, { method: 'POST' });
  for await (const _message of stream) {
    // drained to the turn's end
  }
});

test('the events of a session idle past the retention are dropped, and its numbering goes on', async () => {
  harness = await startHarness({
    limits: { idleSessionMs: 30, journalRetentionMs: 30 },
    responses: [[{ type: 'text', text: 'one' }], [{ type: 'text', text: 'two' }]],
  });
  const sessionId = await createSession(harness);
  const first = await readUntil(
    await harness.request(`/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'a' } }),
    isTurnEnd,
  );
  await new Promise((resolve) => setTimeout(resolve, 200));
  const second = await readUntil(
    await harness.request(`/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'b' } }),
    isTurnEnd,
  );
  expect(Number(second[0]?.id)).toBe(Number(first.at(-1)?.id) + 1);
  // A tail from 0 now starts at the second turn: the first one's events were dropped from memory.
  const tail = await readUntil(await harness.request(`/sessions/${sessionId}/events?after=0`), isTurnEnd);
  expect(tail.map((message) => message.id)).toEqual(second.map((message) => message.id));
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
  await server.close();
  await agent.shutdown();
});

test('a turn suspended before a server restart is approved over HTTP on the new server and continues', async () => {
  const folder = await mkdtemp(join(tmpdir(), 'youyou-server-restart-'));
  try {
    const databasePath = join(folder, 'agent.db');
    const ranBefore: unknown[] = [];
    harness = await startHarness({
      databasePath,
      tools: [deployTool(ranBefore)],
      responses: [
        [{ type: 'tool_call', toolName: 'deploy', arguments: { service: 'api' }, callId: 'call_r' }],
      ],
    });
    const sessionId = await createSession(harness);
    const first = await readUntil(
      await harness.request(`/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'Ship' } }),
      isTurnEnd,
    );
    expect(first.at(-1)?.event).toBe('turn_suspended');
    await harness.close();

    const ranAfter: unknown[] = [];
    harness = await startHarness({
      databasePath,
      tools: [deployTool(ranAfter)],
      responses: [[{ type: 'text', text: 'Shipped after the restart.' }]],
    });
    const foreign = await harness.request(`/sessions/${sessionId}/approvals/call_r`, {
      method: 'POST',
      as: 'bob',
      json: { approved: true },
    });
    expect(foreign.status).toBe(404);
    const state = (await (await harness.request(`/sessions/${sessionId}/messages`)).json()) as {
      pendingApprovals: { callId: string }[];
    };
    expect(state.pendingApprovals.map((call) => call.callId)).toEqual(['call_r']);
    const continued = await readUntil(
      await harness.request(`/sessions/${sessionId}/approvals/call_r`, {
        method: 'POST',
        json: { approved: true },
      }),
      isTurnEnd,
    );
    expect(continued.map((message) => message.event)).toEqual([
      'tool_call_start',
      'tool_call_end',
      'text_delta',
      'turn_complete',
    ]);
    expect(ranBefore).toEqual([]);
    expect(ranAfter).toEqual([{ service: 'api' }]);
  } finally {
    await harness?.close();
    harness = undefined;
    await rm(folder, { recursive: true, force: true });
  }
});

test('with two calls waiting, the first decision answers 202 and the second continues the turn', async () => {
  const ran: unknown[] = [];
  harness = await startHarness({
    tools: [deployTool(ran)],
    responses: [
      [
        { type: 'tool_call', toolName: 'deploy', arguments: { service: 'web' }, callId: 'call_1' },
        { type: 'tool_call', toolName: 'deploy', arguments: { service: 'db' }, callId: 'call_2' },
      ],
      [{ type: 'text', text: 'Half done.' }],
    ],
  });
  const sessionId = await createSession(harness);
  await readUntil(
    await harness.request(`/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'Both' } }),
    isTurnEnd,
  );
  const firstDecision = await harness.request(`/sessions/${sessionId}/approvals/call_1`, {
    method: 'POST',
    json: { approved: true },
  });
  expect(firstDecision.status).toBe(202);
  expect(await firstDecision.json()).toEqual({ continued: false });
  expect(ran).toEqual([]);
  const second = await harness.request(`/sessions/${sessionId}/approvals/call_2`, {
    method: 'POST',
    json: { approved: false, reason: 'db stays' },
  });
  const continued = await readUntil(second, isTurnEnd);
  expect(continued.at(-1)?.event).toBe('turn_complete');
  expect(ran).toEqual([{ service: 'web' }]);
});
