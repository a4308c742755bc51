import { describe, expect, test } from 'vitest';
import { type AgentEvent, type HookPayload, InMemorySessionStorage, type ToolHandler } from '../src/index.js';
import { approvalAgent, resultsIn, turnEndRecorder } from './support/approval-fixtures.js';
import { collect, expectCode } from './support/common.js';

const DEPLOY_CALL = [
  { type: 'text', text: 'Deploying.' },
  { type: 'tool_call', toolName: 'deploy', arguments: { service: 'web' }, callId: 'c1' },
] as const;
const DONE = [{ type: 'text', text: 'Done.' }] as const;

const types = (events: AgentEvent[]) => events.map((event) => event.payload.type);

describe('a call that needs approval, with no approver', () => {
  test('suspends the turn: turn_suspended is the one terminal event, the call is pending in the log, nothing ran', async () => {
    const storage = new InMemorySessionStorage();
    const turnEnds: HookPayload[] = [];
    const { agent, runs, provider } = await approvalAgent({
      storage,
      responses: [DEPLOY_CALL],
      plugins: [turnEndRecorder(turnEnds)],
    });
    const session = await agent.newSession();
    const turn = await session.sendMessage('ship it');
    const events = await collect(turn);
    expect(types(events)).toEqual(['text_delta', 'turn_suspended']);
    expect(events.at(-1)?.payload).toEqual({
      type: 'turn_suspended',
      pendingCalls: [{ callId: 'c1', toolName: 'deploy', arguments: { service: 'web' } }],
    });
    expect((await turn.done).status).toBe('suspended');
    expect(turnEnds.map((payload) => payload.data)).toEqual([{ status: 'suspended', toolCallCount: 0 }]);
    expect(runs.deploy).toEqual([]);
    expect(provider.requests).toHaveLength(1);
    expect(session.pendingApprovals()).toEqual([
      { callId: 'c1', toolName: 'deploy', arguments: { service: 'web' } },
    ]);
    // The call is saved, marked pending, and has no result.
    const log = (await storage.loadSession(session.id))?.map((event) => event.payload) ?? [];
    expect(log.filter((payload) => payload.type === 'tool_result')).toEqual([]);
    expect(log.at(-2)).toMatchObject({ type: 'tool_call', callId: 'c1' });
    expect(log.at(-1)).toMatchObject({ type: 'metadata', key: 'approval_pending' });
    expect(session.messages().at(-1)).toMatchObject({ type: 'tool_call', callId: 'c1' });
    await session.close();
    await agent.shutdown();
  });

  test('resumed by a fresh Agent on the same storage, approve then continue runs the tool once and completes the turn', async () => {
    const storage = new InMemorySessionStorage();
    const first = await approvalAgent({ storage, responses: [DEPLOY_CALL] });
    const session = await first.agent.newSession();
    const suspended = await session.sendMessage('ship it');
    await collect(suspended);
    await session.close();
    await first.agent.shutdown();

    const second = await approvalAgent({ storage, responses: [DONE] });
    const resumed = await second.agent.resumeSession(session.id);
    // The pending call is not given the interrupted result a crash would get.
    expect(resumed.messages().at(-1)).toMatchObject({ type: 'tool_call', callId: 'c1' });
    expect(resumed.pendingApprovals().map((call) => call.callId)).toEqual(['c1']);
    await resumed.approve('c1');
    const turn = await resumed.continue();
    expect(turn.turnId).toBe(suspended.turnId);
    const events = await collect(turn);
    expect(types(events)).toEqual(['tool_call_start', 'tool_call_end', 'text_delta', 'turn_complete']);
    expect(events.every((event) => event.turnId === suspended.turnId)).toBe(true);
    expect((await turn.done).status).toBe('completed');
    expect(second.runs.deploy).toEqual([{ service: 'web' }]);
    expect(resultsIn(second.provider.requests[0])).toEqual([
      { type: 'tool_result', callId: 'c1', content: 'deployed web', isError: false },
    ]);
    expect(resumed.pendingApprovals()).toEqual([]);
    await resumed.close();
    await second.agent.shutdown();

    // A third resume finds the turn finished: nothing pending, and the tool does not run again.
    const third = await approvalAgent({ storage });
    const again = await third.agent.resumeSession(session.id);
    expect(again.pendingApprovals()).toEqual([]);
    await expectCode(again.continue(), 'INVALID_INPUT');
    expect(again.messages().filter((message) => message.type === 'tool_result')).toHaveLength(1);
    await again.close();
    await third.agent.shutdown();
  });

  test('a call the model asks for after the continued batch needs its own approval: the turn suspends again', async () => {
    const storage = new InMemorySessionStorage();
    const first = await approvalAgent({ storage, responses: [DEPLOY_CALL] });
    const session = await first.agent.newSession();
    await collect(await session.sendMessage('ship it'));
    const SECOND_DEPLOY = [
      { type: 'tool_call', toolName: 'deploy', arguments: { service: 'db' }, callId: 'c2' },
    ] as const;
    const second = await approvalAgent({ storage, responses: [SECOND_DEPLOY, DONE] });
    const resumed = await second.agent.resumeSession(session.id);
    await resumed.approve('c1');
    const events = await collect(await resumed.continue());
    // c1 was approved and ran; c2 was never approved, so it must not run: the turn is held again.
    expect(second.runs.deploy).toEqual([{ service: 'web' }]);
    expect(events.at(-1)?.payload).toEqual({
      type: 'turn_suspended',
      pendingCalls: [{ callId: 'c2', toolName: 'deploy', arguments: { service: 'db' } }],
    });
    expect(resumed.pendingApprovals().map((call) => call.callId)).toEqual(['c2']);
    await resumed.close();
    await second.agent.shutdown();
    await first.agent.shutdown();
  });

  test('deny gives the model an error result with the reason; the tool never runs', async () => {
    const storage = new InMemorySessionStorage();
    const first = await approvalAgent({ storage, responses: [DEPLOY_CALL] });
    const session = await first.agent.newSession();
    await collect(await session.sendMessage('ship it'));
    const second = await approvalAgent({ storage, responses: [DONE] });
    // The first agent never closed the session: as after a crash, another process picks it up.
    const resumed = await second.agent.resumeSession(session.id);
    await resumed.deny('c1', 'not on a Friday');
    const events = await collect(await resumed.continue());
    expect(events.at(-1)?.payload.type).toBe('turn_complete');
    expect(events.find((event) => event.payload.type === 'tool_call_end')?.payload).toMatchObject({
      success: false,
    });
    const [result] = resultsIn(second.provider.requests[0]);
    expect(result?.isError).toBe(true);
    expect(result?.content).toContain('not on a Friday');
    expect(first.runs.deploy).toEqual([]);
    expect(second.runs.deploy).toEqual([]);
    await resumed.close();
    await second.agent.shutdown();
    await first.agent.shutdown();
  });

  test('a decision is saved: a later process continues with it', async () => {
    const storage = new InMemorySessionStorage();
    const first = await approvalAgent({ storage, responses: [DEPLOY_CALL] });
    const session = await first.agent.newSession();
    await collect(await session.sendMessage('ship it'));
    await session.approve('c1');
    await session.close();
    await first.agent.shutdown();
    const second = await approvalAgent({ storage, responses: [DONE] });
    const resumed = await second.agent.resumeSession(session.id);
    expect((await collect(await resumed.continue())).at(-1)?.payload.type).toBe('turn_complete');
    expect(second.runs.deploy).toHaveLength(1);
    await resumed.close();
    await second.agent.shutdown();
  });

  test('a batch with a pending call is held whole: the calls that need no approval run with it, in call order', async () => {
    const { agent, runs, provider } = await approvalAgent({
      responses: [
        [
          { type: 'tool_call', toolName: 'lookup', arguments: { q: 'tea' }, callId: 'a' },
          { type: 'tool_call', toolName: 'write', arguments: { path: 'src/x.ts' }, callId: 'b' },
          { type: 'tool_call', toolName: 'write', arguments: { path: '/etc/passwd' }, callId: 'c' },
        ],
        DONE,
      ],
    });
    const session = await agent.newSession();
    const suspended = await collect(await session.sendMessage('go'));
    // Only the write outside src/ needs approval; nothing of the batch ran yet.
    expect(suspended.at(-1)?.payload).toMatchObject({ pendingCalls: [{ callId: 'c' }] });
    expect(runs).toEqual({ deploy: [], write: [], lookup: [] });
    await session.deny('c');
    await collect(await session.continue());
    expect(runs.lookup).toEqual([{ q: 'tea' }]);
    expect(runs.write).toEqual([{ path: 'src/x.ts' }]);
    expect(resultsIn(provider.requests[1]).map((result) => [result.callId, result.isError])).toEqual([
      ['a', false],
      ['b', false],
      ['c', true],
    ]);
    await session.close();
    await agent.shutdown();
  });
});

test('a call past the tool-call limit is not put up for approval: it will not run anyway', async () => {
  const { agent, runs } = await approvalAgent({
    config: { maxToolCallsPerTurn: 1 },
    responses: [
      [
        { type: 'tool_call', toolName: 'lookup', arguments: { q: 'x' }, callId: 'a' },
        { type: 'tool_call', toolName: 'deploy', arguments: { service: 'db' }, callId: 'b' },
      ],
    ],
  });
  const session = await agent.newSession();
  const events = await collect(await session.sendMessage('go'));
  expect(events.at(-1)?.payload.type).toBe('turn_complete');
  expect(events.some((event) => event.payload.type === 'error')).toBe(true);
  expect(runs).toEqual({ deploy: [], write: [], lookup: [{ q: 'x' }] });
  await session.close();
  await agent.shutdown();
});

describe('the errors of the approval methods', () => {
  test('unknown calls, sending or compacting while suspended, and continuing undecided are refused', async () => {
    const { agent, runs } = await approvalAgent({
      responses: [
        [
          { type: 'tool_call', toolName: 'lookup', arguments: { q: 'x' }, callId: 'free' },
          { type: 'tool_call', toolName: 'deploy', arguments: { service: 'db' }, callId: 'gated' },
        ],
        DONE,
      ],
    });
    const session = await agent.newSession();
    await expectCode(session.approve('gated'), 'INVALID_INPUT');
    await expectCode(session.continue(), 'INVALID_INPUT');
    await collect(await session.sendMessage('go'));
    await expectCode(session.approve('nope'), 'INVALID_INPUT');
    // A call of the batch that needs no approval takes no decision.
    await expectCode(session.approve('free'), 'INVALID_INPUT');
    await expectCode(session.approve(42 as never), 'INVALID_INPUT');
    await expectCode(session.deny('gated', 7 as never), 'INVALID_INPUT');
    await expectCode(session.sendMessage('something else'), 'TURN_BUSY');
    await expectCode(session.compact(), 'TURN_BUSY');
    await expectCode(session.continue(), 'INVALID_INPUT');
    await expectCode(session.continue({ approvalTimeoutMs: -1 }), 'INVALID_INPUT');
    expect(runs.lookup).toEqual([]);
    await session.approve('gated');
    expect((await collect(await session.continue())).at(-1)?.payload.type).toBe('turn_complete');
    await expectCode(session.approve('gated'), 'INVALID_INPUT');
    await session.close();
    await expectCode(session.approve('gated'), 'SESSION_CLOSED');
    await agent.shutdown();
  });
});

describe('an in-process approver', () => {
  test('approving runs the call in the same turn', async () => {
    const { agent, runs } = await approvalAgent({ responses: [DEPLOY_CALL, DONE] });
    const session = await agent.newSession();
    const asked: unknown[] = [];
    const events = await collect(
      await session.sendMessage('ship it', {
        approve: (request) => {
          asked.push(request);
          return { type: 'approve' };
        },
      }),
    );
    expect(types(events)).toEqual([
      'text_delta',
      'tool_call_start',
      'tool_call_end',
      'text_delta',
      'turn_complete',
    ]);
    expect(asked).toEqual([
      expect.objectContaining({ callId: 'c1', toolName: 'deploy', arguments: { service: 'web' } }),
    ]);
    expect(runs.deploy).toHaveLength(1);
    await session.close();
    await agent.shutdown();
  });

  test('a turn a follow-up starts by itself keeps the approver of the turn its caller started', async () => {
    const { agent, runs } = await approvalAgent({
      responses: [[{ type: 'text', text: 'First.' }], DEPLOY_CALL, DONE],
    });
    const session = await agent.newSession();
    const asked: string[] = [];
    const first = await session.sendMessage('one', {
      approve: (request) => {
        asked.push(request.toolName);
        return { type: 'approve' };
      },
    });
    const next = session.followUp('two');
    await collect(first);
    const events = await collect(await next);
    expect(types(events)).not.toContain('turn_suspended');
    expect(asked).toEqual(['deploy']);
    expect(runs.deploy).toHaveLength(1);
    await session.close();
    await agent.shutdown();
  });

  test('when the window passes the call is denied, never approved, and the approver is told by its signal', async () => {
    const { agent, runs, provider } = await approvalAgent({ responses: [DEPLOY_CALL, DONE] });
    const session = await agent.newSession();
    let signal: AbortSignal | undefined;
    const events = await collect(
      await session.sendMessage('ship it', {
        approvalTimeoutMs: 50,
        approve: (_request, given) => {
          signal = given;
          // Answers "approve" long after the window: too late to count.
          return new Promise((resolve) => setTimeout(() => resolve({ type: 'approve' }), 400));
        },
      }),
    );
    expect(events.at(-1)?.payload.type).toBe('turn_complete');
    expect(runs.deploy).toEqual([]);
    expect(signal?.aborted).toBe(true);
    const [result] = resultsIn(provider.requests[1]);
    expect(result).toMatchObject({ callId: 'c1', isError: true });
    await new Promise((resolve) => setTimeout(resolve, 450));
    expect(runs.deploy).toEqual([]);
    await session.close();
    await agent.shutdown();
  });

  test('an approver that throws or answers garbage denies; a denial reason reaches the model', async () => {
    const { agent, runs, provider } = await approvalAgent({
      responses: [
        [
          { type: 'tool_call', toolName: 'deploy', arguments: { service: 'a' }, callId: 'x' },
          { type: 'tool_call', toolName: 'deploy', arguments: { service: 'b' }, callId: 'y' },
          { type: 'tool_call', toolName: 'deploy', arguments: { service: 'c' }, callId: 'z' },
        ],
        DONE,
      ],
    });
    const session = await agent.newSession();
    await collect(
      await session.sendMessage('ship', {
        approve: (request) => {
          if (request.callId === 'x') throw new Error('approver crashed');
          if (request.callId === 'y') return { type: 'yes' } as never;
          return { type: 'deny', reason: 'use the canary' };
        },
      }),
    );
    expect(runs.deploy).toEqual([]);
    const results = resultsIn(provider.requests[1]);
    expect(results.map((result) => result.isError)).toEqual([true, true, true]);
    expect(results[2]?.content).toContain('use the canary');
    await session.close();
    await agent.shutdown();
  });

  test('cancelling the turn while the approver is asked ends it cancelled; the call never runs', async () => {
    const { agent, runs } = await approvalAgent({ responses: [DEPLOY_CALL, DONE] });
    const session = await agent.newSession();
    let signal: AbortSignal | undefined;
    const turn = await session.sendMessage('ship it', {
      approve: (_request, given) => {
        signal = given;
        turn.cancel();
        return new Promise(() => {});
      },
    });
    const events = await collect(turn);
    expect(events.at(-1)?.payload.type).toBe('turn_cancelled');
    expect((await turn.done).status).toBe('cancelled');
    expect(signal?.aborted).toBe(true);
    expect(runs.deploy).toEqual([]);
    expect(session.messages().filter((message) => message.type === 'tool_result')).toMatchObject([
      { callId: 'c1', isError: true },
    ]);
    await session.close();
    await agent.shutdown();
  });

  test('continue() with an approver decides the calls left undecided', async () => {
    const { agent, runs } = await approvalAgent({ responses: [DEPLOY_CALL, DONE] });
    const session = await agent.newSession();
    await collect(await session.sendMessage('ship it'));
    await collect(await session.continue({ approve: () => ({ type: 'approve' }) }));
    expect(runs.deploy).toHaveLength(1);
    await session.close();
    await agent.shutdown();
  });
});

describe('needsApproval', () => {
  test('a function answering false lets the call run; one that throws means the call needs approval', async () => {
    const { agent, runs } = await approvalAgent({
      responses: [[{ type: 'tool_call', toolName: 'write', arguments: { path: 'src/a.ts' } }], DONE],
    });
    const session = await agent.newSession();
    expect((await collect(await session.sendMessage('go'))).at(-1)?.payload.type).toBe('turn_complete');
    expect(runs.write).toEqual([{ path: 'src/a.ts' }]);
    await session.close();
    await agent.shutdown();
  });

  test('a needsApproval function that throws or never answers means the call needs approval', async () => {
    const ran: string[] = [];
    const gated = (name: string, rule: () => boolean | Promise<boolean>): ToolHandler => ({
      name,
      description: name,
      parametersSchema: { type: 'object' },
      isMutating: false,
      needsApproval: rule,
      execute: async () => {
        ran.push(name);
        return { content: 'ran', isError: false };
      },
    });
    const { agent } = await approvalAgent({
      config: { toolTimeoutMs: 100 },
      tools: [
        gated('throws', () => {
          throw new Error('rule broke');
        }),
        gated('silent', () => new Promise<boolean>(() => {})),
      ],
      responses: [
        [
          { type: 'tool_call', toolName: 'throws', callId: 't' },
          { type: 'tool_call', toolName: 'silent', callId: 's' },
        ],
      ],
    });
    const session = await agent.newSession();
    const events = await collect(await session.sendMessage('go'));
    expect(events.at(-1)?.payload).toMatchObject({
      type: 'turn_suspended',
      pendingCalls: [{ callId: 't' }, { callId: 's' }],
    });
    expect(ran).toEqual([]);
    await session.close();
    await agent.shutdown();
  });

  test('a needsApproval that is neither a boolean nor a function is refused at build', async () => {
    const { AgentBuilder } = await import('../src/index.js');
    const { ScriptedModelProvider } = await import('../src/testing/index.js');
    const build = new AgentBuilder({ defaultModel: 'scripted-model' })
      .registerModelProvider(new ScriptedModelProvider())
      .registerTool({
        name: 'odd',
        description: 'odd',
        parametersSchema: { type: 'object' },
        isMutating: true,
        needsApproval: 'yes' as never,
        execute: async () => ({ content: '', isError: false }),
      })
      .build();
    await expectCode(build, 'INVALID_CONFIG');
  });
});
