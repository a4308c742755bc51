import { describe, expect, test } from 'vitest';
import { InMemorySessionStorage, type Plugin, type SessionEventPayload } from '../src/index.js';
import { approvalAgent, resultsIn } from './support/approval-fixtures.js';
import { collect } from './support/common.js';

const CALL: SessionEventPayload = {
  type: 'tool_call',
  callId: 'c1',
  toolName: 'deploy',
  arguments: { service: 'web' },
};
const PENDING: SessionEventPayload = {
  type: 'metadata',
  key: 'approval_pending',
  value: {
    turnId: 'turn-1',
    toolCallCount: 0,
    calls: [{ callId: 'c1', toolName: 'deploy', arguments: { service: 'web' }, needsApproval: true }],
  },
};

/** A log as a process that crashed at some point of a suspended turn left it. */
async function crashedLog(payloads: SessionEventPayload[]): Promise<InMemorySessionStorage> {
  const storage = new InMemorySessionStorage();
  const head: SessionEventPayload[] = [
    { type: 'metadata', key: 'session_config', value: { modelId: 'scripted-model' } },
    { type: 'user_message', content: [{ type: 'text', text: 'ship it' }] },
    { type: 'assistant_message', content: [{ type: 'text', text: 'Deploying.' }], status: 'complete' },
  ];
  for (const payload of [...head, ...payloads]) {
    await storage.saveEvent('s1', { timestamp: new Date(), payload });
  }
  return storage;
}

describe('a crash and a suspended turn', () => {
  test('a process that died while the turn was suspended leaves it pending, decisions included', async () => {
    const storage = await crashedLog([
      CALL,
      PENDING,
      { type: 'metadata', key: 'approval_decision', value: { callId: 'c1', approved: true } },
    ]);
    const { agent, runs, provider } = await approvalAgent({
      storage,
      responses: [[{ type: 'text', text: 'Done.' }]],
    });
    const session = await agent.resumeSession('s1');
    expect(session.pendingApprovals().map((call) => call.callId)).toEqual(['c1']);
    expect(session.messages().some((message) => message.type === 'tool_result')).toBe(false);
    // The decision made before the crash holds: continue needs no other.
    const turn = await session.continue();
    expect(turn.turnId).toBe('turn-1');
    expect((await collect(turn)).at(-1)?.payload.type).toBe('turn_complete');
    expect(runs.deploy).toHaveLength(1);
    expect(resultsIn(provider.requests[0])).toMatchObject([{ callId: 'c1', isError: false }]);
    await session.close();
    await agent.shutdown();
  });

  test('a crash after the continue began gives the call the interrupted result: it never runs twice', async () => {
    const storage = await crashedLog([
      CALL,
      PENDING,
      { type: 'metadata', key: 'approval_decision', value: { callId: 'c1', approved: true } },
      { type: 'metadata', key: 'approval_continued', value: { turnId: 'turn-1' } },
    ]);
    const { agent, runs } = await approvalAgent({ storage });
    const session = await agent.resumeSession('s1');
    expect(session.pendingApprovals()).toEqual([]);
    expect(session.messages().at(-1)).toMatchObject({ type: 'tool_result', callId: 'c1', isError: true });
    expect(runs.deploy).toEqual([]);
    await session.close();
    await agent.shutdown();
  });

  test('a crash before the call was marked pending is an ordinary interrupted call', async () => {
    const storage = await crashedLog([CALL]);
    const { agent } = await approvalAgent({ storage });
    const session = await agent.resumeSession('s1');
    expect(session.pendingApprovals()).toEqual([]);
    expect(session.messages().at(-1)).toMatchObject({ type: 'tool_result', callId: 'c1', isError: true });
    await session.close();
    await agent.shutdown();
  });

  test('a malformed approval_pending record is ignored: the call is interrupted, not pending', async () => {
    const storage = await crashedLog([
      CALL,
      { type: 'metadata', key: 'approval_pending', value: { calls: 3 } },
    ]);
    const { agent } = await approvalAgent({ storage });
    const session = await agent.resumeSession('s1');
    expect(session.pendingApprovals()).toEqual([]);
    expect(session.messages().at(-1)).toMatchObject({ type: 'tool_result', callId: 'c1', isError: true });
    await session.close();
    await agent.shutdown();
  });
});

/** A plugin whose BeforeToolUse handler never answers, tapped with the given onTimeout. */
function silentGate(onTimeout: 'abort' | 'continue' | undefined): Plugin {
  return {
    id: 'silent-gate',
    displayName: 'Silent gate',
    description: 'never answers',
    async initialize() {},
    apply(context) {
      const never = () => new Promise<undefined>(() => {});
      if (onTimeout === undefined) context.tap('BeforeToolUse', never);
      else context.tap('BeforeToolUse', never, { onTimeout });
    },
    async shutdown() {},
  };
}

describe("a BeforeToolUse handler tapped with onTimeout: 'abort'", () => {
  const LOOKUP = [{ type: 'tool_call', toolName: 'lookup', arguments: { q: 'tea' }, callId: 'l1' }] as const;

  test('stops the call when it does not answer in time: the tool does not run and the model is told', async () => {
    const { agent, runs, provider } = await approvalAgent({
      config: { toolTimeoutMs: 60 },
      plugins: [silentGate('abort')],
      responses: [LOOKUP, [{ type: 'text', text: 'ok' }]],
    });
    const session = await agent.newSession();
    const events = await collect(await session.sendMessage('go'));
    expect(runs.lookup).toEqual([]);
    expect(events.filter((event) => event.payload.type === 'error')).toHaveLength(1);
    expect(events.at(-1)?.payload.type).toBe('turn_complete');
    expect(resultsIn(provider.requests[1])).toMatchObject([{ callId: 'l1', isError: true }]);
    await session.close();
    await agent.shutdown();
  });

  test('without the option (or with continue) a timed-out handler still counts as continue', async () => {
    for (const option of [undefined, 'continue'] as const) {
      const { agent, runs } = await approvalAgent({
        config: { toolTimeoutMs: 60 },
        plugins: [silentGate(option)],
        responses: [LOOKUP, [{ type: 'text', text: 'ok' }]],
      });
      const session = await agent.newSession();
      await collect(await session.sendMessage('go'));
      expect(runs.lookup).toEqual([{ q: 'tea' }]);
      await session.close();
      await agent.shutdown();
    }
  });

  test('an onTimeout other than continue or abort fails the build', async () => {
    const bad: Plugin = {
      ...silentGate(undefined),
      apply(context) {
        context.tap('BeforeToolUse', () => undefined, { onTimeout: 'retry' as never });
      },
    };
    const built = approvalAgent({ plugins: [bad] }).then(
      () => 'built',
      (error: unknown) => error,
    );
    expect(await built).toMatchObject({ code: 'PLUGIN_INIT_FAILED' });
  });
});
