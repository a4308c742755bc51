import { afterEach, expect, test, vi } from 'vitest';
import { AgentBuilder, InMemorySessionStorage } from '../src/index.js';
import { ScriptedModelProvider } from '../src/testing/index.js';
import { approvalAgent, resultsIn } from './support/approval-fixtures.js';
import { collect, expectCode } from './support/common.js';

const TWO_CALLS = [
  { type: 'tool_call', toolName: 'deploy', arguments: { service: 'web' }, callId: 'c1' },
  { type: 'tool_call', toolName: 'deploy', arguments: { service: 'db' }, callId: 'c2' },
] as const;
const DONE = [{ type: 'text', text: 'Done.' }] as const;
const HOUR = 60 * 60 * 1000;

afterEach(() => {
  vi.useRealTimers();
});

test('the window is saved with the pending calls; once it passes, undecided calls are denied on continue, decided ones stand', async () => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2026-12-03T10:00:00Z'));
  const storage = new InMemorySessionStorage();
  const first = await approvalAgent({ storage, responses: [TWO_CALLS], config: { approvalWindowMs: HOUR } });
  const session = await first.agent.newSession();
  const events = await collect(await session.sendMessage('ship both'));
  const expiresAt = '2026-12-03T11:00:00.000Z';
  expect(events.at(-1)?.payload).toEqual({
    type: 'turn_suspended',
    pendingCalls: [
      { callId: 'c1', toolName: 'deploy', arguments: { service: 'web' }, expiresAt },
      { callId: 'c2', toolName: 'deploy', arguments: { service: 'db' }, expiresAt },
    ],
  });
  // Still inside the window: undecided calls block continue(), a decision is taken.
  await expectCode(session.continue(), 'INVALID_INPUT');
  await session.approve('c1');
  await session.close();
  await first.agent.shutdown();

  // Another process, after the window: the window came back from the log, and silence is a denial.
  vi.setSystemTime(new Date('2026-12-03T11:00:01Z'));
  const second = await approvalAgent({ storage, responses: [DONE] });
  const resumed = await second.agent.resumeSession(session.id);
  expect(resumed.pendingApprovals().map((call) => call.expiresAt)).toEqual([expiresAt, expiresAt]);
  await expectCode(resumed.approve('c2'), 'INVALID_INPUT');
  const continued = await collect(await resumed.continue());
  expect(continued.at(-1)?.payload.type).toBe('turn_complete');
  expect(second.runs.deploy).toEqual([{ service: 'web' }]);
  const results = resultsIn(second.provider.requests[0]);
  expect(results.map((result) => [result.callId, result.isError])).toEqual([
    ['c1', false],
    ['c2', true],
  ]);
  expect(JSON.stringify(results[1]?.content)).toContain('approval window');
  await second.agent.shutdown();
});

test('a turn option overrides the agent window; no window means the calls wait however long it takes', async () => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2026-12-03T10:00:00Z'));
  const { agent, runs } = await approvalAgent({
    responses: [TWO_CALLS, DONE, TWO_CALLS, DONE],
    config: { approvalWindowMs: HOUR },
  });
  const session = await agent.newSession();
  const short = await collect(await session.sendMessage('ship', { approvalWindowMs: 1_000 }));
  expect(short.at(-1)?.payload).toMatchObject({
    pendingCalls: [{ expiresAt: '2026-12-03T10:00:01.000Z' }, { expiresAt: '2026-12-03T10:00:01.000Z' }],
  });
  vi.setSystemTime(new Date('2026-12-03T10:00:02Z'));
  await collect(await session.continue());
  expect(runs.deploy).toEqual([]);
  await agent.shutdown();

  const patient = await approvalAgent({ responses: [TWO_CALLS, DONE] });
  const waiting = await patient.agent.newSession();
  const held = await collect(await waiting.sendMessage('ship'));
  expect(held.at(-1)?.payload).toMatchObject({ type: 'turn_suspended' });
  expect(waiting.pendingApprovals().every((call) => call.expiresAt === undefined)).toBe(true);
  vi.setSystemTime(new Date('2027-12-03T10:00:00Z'));
  await expectCode(waiting.continue(), 'INVALID_INPUT');
  await waiting.approve('c1');
  await waiting.deny('c2', 'not the database');
  await collect(await waiting.continue());
  expect(patient.runs.deploy).toEqual([{ service: 'web' }]);
  await patient.agent.shutdown();
});

test('a bad approvalWindowMs is INVALID_CONFIG at build and INVALID_INPUT on a turn', async () => {
  for (const approvalWindowMs of [0, -5, 1.5, Number.NaN, '60000', 366 * 24 * HOUR]) {
    await expectCode(
      new AgentBuilder({ defaultModel: 'scripted-model', approvalWindowMs: approvalWindowMs as number })
        .registerModelProvider(new ScriptedModelProvider({ responses: [] }))
        .build(),
      'INVALID_CONFIG',
    );
  }
  const { agent } = await approvalAgent({ responses: [DONE] });
  const session = await agent.newSession();
  await expectCode(session.sendMessage('hi', { approvalWindowMs: 0 }), 'INVALID_INPUT');
  await expectCode(
    session.sendMessage('hi', { approvalWindowMs: '1' as unknown as number }),
    'INVALID_INPUT',
  );
  await agent.shutdown();
});

test('tool_call_end says denied for a call refused approval: by a decision, by an approver, by a passed window', async () => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2026-12-03T10:00:00Z'));
  const { agent } = await approvalAgent({
    responses: [TWO_CALLS, DONE, TWO_CALLS, DONE],
    config: { approvalWindowMs: HOUR },
  });
  const session = await agent.newSession();
  await collect(await session.sendMessage('ship'));
  await session.approve('c1');
  vi.setSystemTime(new Date('2026-12-03T11:30:00Z'));
  const ends = (await collect(await session.continue())).filter(
    (event) => event.payload.type === 'tool_call_end',
  );
  expect(ends.map((event) => event.payload)).toEqual([
    expect.not.objectContaining({ denied: true }),
    expect.objectContaining({ callId: 'c2', success: false, denied: true }),
  ]);
  const asked = await collect(
    await session.sendMessage('ship again', {
      approve: (request) => (request.callId === 'c1' ? { type: 'deny', reason: 'no' } : { type: 'approve' }),
    }),
  );
  const askedEnds = asked
    .filter((event) => event.payload.type === 'tool_call_end')
    .map((event) => event.payload);
  expect(askedEnds).toEqual([
    expect.objectContaining({ callId: 'c1', denied: true }),
    expect.objectContaining({ callId: 'c2', success: true }),
  ]);
  expect(askedEnds[1]).not.toHaveProperty('denied');
  await agent.shutdown();
});
