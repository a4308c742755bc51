import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { createSession, type Harness, isTurnEnd, readUntil, startHarness } from './support/harness.js';

let harness: Harness | undefined;
let folder: string;

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'youyou-server-tenants-'));
});

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await rm(folder, { recursive: true, force: true });
});

interface Route {
  method: 'GET' | 'POST';
  path: (sessionId: string) => string;
  json?: unknown;
}

const SESSION_ROUTES: Route[] = [
  { method: 'GET', path: (id) => `/sessions/${id}` },
  { method: 'GET', path: (id) => `/sessions/${id}/messages` },
  { method: 'POST', path: (id) => `/sessions/${id}/messages`, json: { content: 'from bob' } },
  { method: 'GET', path: (id) => `/sessions/${id}/events?after=0` },
  { method: 'POST', path: (id) => `/sessions/${id}/cancel` },
  { method: 'POST', path: (id) => `/sessions/${id}/approvals/call_a`, json: { approved: true } },
  { method: 'POST', path: (id) => `/sessions/${id}/steer`, json: { content: 'from bob' } },
  { method: 'POST', path: (id) => `/sessions/${id}/follow-up`, json: { content: 'from bob' } },
  { method: 'POST', path: (id) => `/sessions/${id}/continue` },
];

test("a tenant gets 404 SESSION_NOT_FOUND on every route of another tenant's session, as for an unknown id", async () => {
  harness = await startHarness({ responses: [[{ type: 'text', text: 'for alice only' }]] });
  const aliceSession = await createSession(harness, 'alice');
  await readUntil(
    await harness.request(`/sessions/${aliceSession}/messages`, {
      method: 'POST',
      json: { content: 'secret plan' },
    }),
    isTurnEnd,
  );
  const requestsBefore = harness.provider.requests.length;
  for (const route of SESSION_ROUTES) {
    const init = {
      method: route.method,
      as: 'bob' as const,
      ...(route.json === undefined ? {} : { json: route.json }),
    };
    const foreign = await harness.request(route.path(aliceSession), init);
    const unknown = await harness.request(route.path('no-such-session'), init);
    expect({ route: route.path(':id'), status: foreign.status }).toEqual({
      route: route.path(':id'),
      status: 404,
    });
    expect(unknown.status).toBe(404);
    const foreignBody = await foreign.text();
    expect(foreignBody).not.toContain('secret plan');
    expect(JSON.parse(foreignBody)).toEqual({
      error: { code: 'SESSION_NOT_FOUND', message: expect.any(String) },
    });
    expect((JSON.parse(await unknown.text()) as { error: { code: string } }).error.code).toBe(
      'SESSION_NOT_FOUND',
    );
  }
  // Bob's requests touched nothing: no model call, no steer, no cancel, no message in Alice's session.
  expect(harness.provider.requests.length).toBe(requestsBefore);
  const messages = (await (await harness.request(`/sessions/${aliceSession}/messages`)).json()) as {
    messages: unknown[];
  };
  expect(JSON.stringify(messages.messages)).not.toContain('from bob');
  expect(messages.messages).toHaveLength(2);
});

test('the owner reaches every route of its session', async () => {
  harness = await startHarness({ responses: [[{ type: 'text', text: 'ok' }]] });
  const sessionId = await createSession(harness, 'bob');
  for (const route of SESSION_ROUTES) {
    if (route.path('x').endsWith('/events?after=0')) continue; // an open tail; read in the turns tests
    const response = await harness.request(route.path(sessionId), {
      method: route.method,
      as: 'bob',
      ...(route.json === undefined ? {} : { json: route.json }),
    });
    // The approval answers INVALID_INPUT (nothing waits), every other route succeeds: none is 404.
    expect(response.status).not.toBe(404);
    await response.body?.cancel();
  }
});

test('listing and search show a tenant only its own sessions, also after a restart on the same database', async () => {
  const databasePath = join(folder, 'agent.db');
  harness = await startHarness({
    databasePath,
    responses: [[{ type: 'text', text: 'a' }], [{ type: 'text', text: 'b' }]],
  });
  const aliceSession = await createSession(harness, 'alice');
  const bobSession = await createSession(harness, 'bob');
  await readUntil(
    await harness.request(`/sessions/${aliceSession}/messages`, {
      method: 'POST',
      json: { content: 'zebra migration' },
    }),
    isTurnEnd,
  );
  await readUntil(
    await harness.request(`/sessions/${bobSession}/messages`, {
      method: 'POST',
      as: 'bob',
      json: { content: 'zebra crossing' },
    }),
    isTurnEnd,
  );
  const ids = async (path: string, as: 'alice' | 'bob'): Promise<string[]> => {
    const response = await harness?.request(path, { as });
    expect(response?.status).toBe(200);
    const body = (await response?.json()) as { sessions: { sessionId: string }[] };
    return body.sessions.map((session) => session.sessionId);
  };
  expect(await ids('/sessions', 'alice')).toEqual([aliceSession]);
  expect(await ids('/sessions', 'bob')).toEqual([bobSession]);
  expect(await ids('/sessions?q=zebra', 'alice')).toEqual([aliceSession]);
  expect(await ids('/sessions?q=zebra', 'bob')).toEqual([bobSession]);
  expect(await ids(`/sessions?q=${aliceSession.slice(0, 8)}`, 'bob')).toEqual([]);
  expect(await ids('/sessions?limit=1', 'alice')).toEqual([aliceSession]);

  // A new server on the same file knows the owners from the sessions' logs, not from its memory.
  await harness.close();
  harness = await startHarness({ databasePath });
  expect(await ids('/sessions', 'alice')).toEqual([aliceSession]);
  expect(await ids('/sessions?q=zebra', 'bob')).toEqual([bobSession]);
  expect((await harness.request(`/sessions/${aliceSession}/messages`, { as: 'bob' })).status).toBe(404);
  expect((await harness.request(`/sessions/${aliceSession}/messages`, { as: 'alice' })).status).toBe(200);
});
