/**
 * Continuing a turn a crash cut (issue 26), over logs as a killed process leaves them: what was saved stays,
 * read-only calls run again, a mutating call of unknown outcome waits for a decision unless its tool is idempotent,
 * a cut answer is asked again without entering the context twice, and the turn goes on to a normal end.
 */
import { describe, expect, test } from 'vitest';
import { InMemorySessionStorage, type SessionEventPayload, type ToolHandler } from '../src/index.js';
import { approvalAgent, resultsIn } from './support/approval-fixtures.js';
import { collect } from './support/common.js';

const HEAD: SessionEventPayload[] = [
  { type: 'metadata', key: 'session_config', value: { modelId: 'scripted-model' } },
  { type: 'user_message', content: [{ type: 'text', text: 'ship it' }] },
];

async function crashedLog(payloads: SessionEventPayload[]): Promise<InMemorySessionStorage> {
  const storage = new InMemorySessionStorage();
  for (const payload of [...HEAD, ...payloads])
    await storage.saveEvent('s1', { timestamp: new Date(), payload });
  return storage;
}

const call = (callId: string, toolName: string, args: unknown): SessionEventPayload => ({
  type: 'tool_call',
  callId,
  toolName,
  arguments: args,
});

/** A mutating tool that says a second run changes nothing more. */
function setFlag(runs: unknown[]): ToolHandler {
  return {
    name: 'set_flag',
    description: 'sets a flag',
    parametersSchema: { type: 'object', properties: { on: { type: 'boolean' } }, required: ['on'] },
    isMutating: true,
    idempotent: true,
    execute: async (input) => {
      runs.push(input.arguments);
      return { content: 'flag set', isError: false };
    },
  };
}

describe('continuing an interrupted turn', () => {
  test('read-only and idempotent calls run again; a mutating one waits, marked as having maybe run', async () => {
    const flags: unknown[] = [];
    const storage = await crashedLog([
      call('c1', 'lookup', { q: 'a' }),
      call('c2', 'write', { path: 'src/a.ts' }),
      call('c3', 'set_flag', { on: true }),
    ]);
    const { agent, runs, provider } = await approvalAgent({
      storage,
      tools: [setFlag(flags)],
      responses: [[{ type: 'text', text: 'Done.' }]],
    });
    const session = await agent.resumeSession('s1');
    expect(session.interruptedTurn()).toMatchObject({
      partialAnswer: false,
      unfinishedCalls: [
        { callId: 'c1', mayHaveRun: false },
        { callId: 'c2', mayHaveRun: true },
        { callId: 'c3', mayHaveRun: false },
      ],
    });
    const first = await collect(await session.continue());
    expect(first.find((event) => event.payload.type === 'turn_continued')?.payload).toMatchObject({
      askedAgain: false,
    });
    expect(first.at(-1)?.payload).toMatchObject({
      type: 'turn_suspended',
      pendingCalls: [{ callId: 'c2', mayHaveRun: true }],
    });
    // Nothing ran: the batch waits for the one decision.
    expect([runs.lookup.length, runs.write.length, flags.length]).toEqual([0, 0, 0]);
    await session.approve('c2');
    const second = await collect(await session.continue());
    expect(second.at(-1)?.payload.type).toBe('turn_complete');
    expect([runs.lookup.length, runs.write.length, flags.length]).toEqual([1, 1, 1]);
    expect(resultsIn(provider.requests[0]).map((result) => [result.callId, result.isError])).toEqual([
      ['c1', false],
      ['c2', false],
      ['c3', false],
    ]);
    await session.close();
    await agent.shutdown();

    // The log replays to the same context, with each call answered once.
    const { agent: again } = await approvalAgent({ storage });
    const resumed = await again.resumeSession('s1');
    expect(resumed.interruptedTurn()).toBeUndefined();
    expect(resumed.messages()).toEqual(session.messages());
    await resumed.close();
    await again.shutdown();
  });

  test('a denied call of unknown outcome tells the model so, and never runs', async () => {
    const storage = await crashedLog([call('c1', 'write', { path: 'etc/hosts' })]);
    const { agent, runs, provider } = await approvalAgent({
      storage,
      responses: [[{ type: 'text', text: 'Understood.' }]],
    });
    const session = await agent.resumeSession('s1');
    const turn = await session.continue({ approve: () => ({ type: 'deny', reason: 'checking by hand' }) });
    expect((await collect(turn)).at(-1)?.payload.type).toBe('turn_complete');
    expect(runs.write).toHaveLength(0);
    const [result] = resultsIn(provider.requests[0]);
    expect(result?.isError).toBe(true);
    expect(result?.content).toContain('unknown');
    await session.close();
    await agent.shutdown();
  });

  test('a turn cut before the model answered asks the model again; a cut answer leaves the context', async () => {
    const storage = await crashedLog([
      { type: 'assistant_message', content: [{ type: 'text', text: 'Depl' }], status: 'incomplete' },
    ]);
    const { agent, provider } = await approvalAgent({
      storage,
      responses: [[{ type: 'text', text: 'Deployed.' }]],
    });
    const session = await agent.resumeSession('s1');
    expect(session.interruptedTurn()).toEqual({ unfinishedCalls: [], partialAnswer: true });
    const events = await collect(await session.continue());
    expect(events.at(-1)?.payload.type).toBe('turn_complete');
    const assistants = provider.requests[0]?.messages.filter((message) => message.type === 'assistant');
    expect(assistants).toEqual([]);
    expect(session.messages().map((message) => message.type)).toEqual(['user', 'assistant']);
    await session.close();
    await agent.shutdown();
    // The cut answer stays in the log, marked incomplete; a replay leaves it out of the context.
    const saved = (await storage.loadSession('s1')) ?? [];
    expect(
      saved.some(
        (event) => event.payload.type === 'assistant_message' && event.payload.status === 'incomplete',
      ),
    ).toBe(true);
    const { agent: again } = await approvalAgent({ storage });
    const resumed = await again.resumeSession('s1');
    expect(resumed.messages()).toEqual(session.messages());
    await resumed.close();
    await again.shutdown();
  });

  test('a turn that failed is not interrupted; a new message gives an interrupted one up', async () => {
    const failedLog = new InMemorySessionStorage();
    const { agent, provider } = await approvalAgent({ storage: failedLog, responses: [] });
    const session = await agent.newSession();
    // The provider has no answer: the turn fails, and says so in the log.
    await collect(await session.sendMessage('hello'));
    const id = session.id;
    await session.close();
    await agent.shutdown();
    expect(provider.requests).toHaveLength(1);
    const { agent: reader } = await approvalAgent({ storage: failedLog });
    const failed = await reader.resumeSession(id);
    expect(failed.interruptedTurn()).toBeUndefined();
    await failed.close();
    await reader.shutdown();
    const storage = await crashedLog([call('c1', 'lookup', { q: 'x' })]);
    const { agent: second } = await approvalAgent({ storage, responses: [[{ type: 'text', text: 'Hi.' }]] });
    const resumed = await second.resumeSession('s1');
    expect(resumed.interruptedTurn()).toBeDefined();
    await collect(await resumed.sendMessage('never mind'));
    expect(resumed.interruptedTurn()).toBeUndefined();
    await expect(resumed.continue()).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await resumed.close();
    await second.shutdown();
  });

  test('a continuation cut again is reconciled again: the pending mark survives a restart, a re-run asks anew', async () => {
    const pending: SessionEventPayload = {
      type: 'metadata',
      key: 'approval_pending',
      value: {
        turnId: 't2',
        toolCallCount: 0,
        calls: [
          {
            callId: 'c1',
            toolName: 'write',
            arguments: { path: 'etc/a' },
            needsApproval: true,
            mayHaveRun: true,
          },
        ],
      },
    };
    const suspended = await crashedLog([
      call('c1', 'write', { path: 'etc/a' }),
      { type: 'metadata', key: 'turn_continued', value: { turnId: 't2' } },
      pending,
    ]);
    const { agent } = await approvalAgent({ storage: suspended });
    const session = await agent.resumeSession('s1');
    // Suspended with its reconciled batch: the mark is read back from the log.
    expect(session.interruptedTurn()).toBeUndefined();
    expect(session.pendingApprovals()).toEqual([
      { callId: 'c1', toolName: 'write', arguments: { path: 'etc/a' }, mayHaveRun: true },
    ]);
    await session.close();
    await agent.shutdown();

    // Approved and continued, then killed while it ran again: it may have run twice, so it asks again.
    const cutAgain = await crashedLog([
      call('c1', 'write', { path: 'etc/a' }),
      { type: 'metadata', key: 'turn_continued', value: { turnId: 't2' } },
      pending,
      { type: 'metadata', key: 'approval_decision', value: { callId: 'c1', approved: true } },
      { type: 'metadata', key: 'approval_continued', value: { turnId: 't2' } },
    ]);
    const { agent: second, runs } = await approvalAgent({ storage: cutAgain });
    const resumed = await second.resumeSession('s1');
    expect(resumed.pendingApprovals()).toEqual([]);
    expect(resumed.interruptedTurn()?.unfinishedCalls).toEqual([
      { callId: 'c1', toolName: 'write', arguments: { path: 'etc/a' }, mayHaveRun: true },
    ]);
    const events = await collect(await resumed.continue());
    expect(events.at(-1)?.payload).toMatchObject({
      type: 'turn_suspended',
      pendingCalls: [{ callId: 'c1' }],
    });
    expect(runs.write).toHaveLength(0);
    await resumed.close();
    await second.shutdown();
  });
});
