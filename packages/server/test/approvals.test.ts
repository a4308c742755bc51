import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import {
  createSession,
  deployTool,
  type Harness,
  isTurnEnd,
  readUntil,
  startHarness,
} from './support/harness.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

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
  expect(Number(continued[0]?.id)).toBeGreaterThan(Number(suspended?.id));
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

test('once the approval window passes, a decision is refused and continue goes on with the call denied', async () => {
  const ran: unknown[] = [];
  harness = await startHarness({
    approvalWindowMs: 300,
    tools: [deployTool(ran)],
    responses: [
      [{ type: 'tool_call', toolName: 'deploy', arguments: { service: 'web' }, callId: 'call_w' }],
      [{ type: 'text', text: 'Not deployed.' }],
    ],
  });
  const sessionId = await createSession(harness);
  const first = await readUntil(
    await harness.request(`/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'Ship' } }),
    isTurnEnd,
  );
  const pending = first.at(-1)?.data.payload.pendingCalls as { expiresAt?: string }[];
  expect(Date.parse(pending[0]?.expiresAt ?? '')).toBeGreaterThan(Date.now() - 1_000);
  // Inside the window the turn cannot go on without a decision.
  const early = await harness.request(`/sessions/${sessionId}/continue`, { method: 'POST' });
  expect(early.status).toBe(400);
  await new Promise((resolve) => setTimeout(resolve, 400));
  const late = await harness.request(`/sessions/${sessionId}/approvals/call_w`, {
    method: 'POST',
    json: { approved: true },
  });
  expect(late.status).toBe(400);
  expect(((await late.json()) as { error: { code: string } }).error.code).toBe('INVALID_INPUT');
  const foreign = await harness.request(`/sessions/${sessionId}/continue`, { method: 'POST', as: 'bob' });
  expect(foreign.status).toBe(404);
  const continued = await readUntil(
    await harness.request(`/sessions/${sessionId}/continue`, { method: 'POST' }),
    isTurnEnd,
  );
  expect(continued.map((message) => message.event)).toEqual([
    'tool_call_start',
    'tool_call_end',
    'text_delta',
    'turn_complete',
  ]);
  expect(continued[1]?.data.payload.success).toBe(false);
  expect(ran).toEqual([]);
  const request = harness.provider.requests.at(-1);
  expect(JSON.stringify(request?.messages.at(-1))).toContain('approval window');
});
