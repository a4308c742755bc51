/**
 * Session.rewind and Session.turns: the context goes back to before a turn, the log only grows (a `rewind`
 * marker), a resume rebuilds the rewound context, and the model is sent only what was kept.
 */
import { describe, expect, test } from 'vitest';
import { type Message, type Session, templates } from '../src/index.js';
import { ScriptedModelProvider } from '../src/testing/index.js';
import { approvalAgent } from './support/approval-fixtures.js';
import { collect, expectCode, harness, readUntil, writeLog } from './support/resume-fixtures.js';
import { harness as steeringHarness } from './support/session-fixtures.js';
import { pauseAt, pausingProvider } from './support/steering-fixtures.js';

/** Scripted answers `answer 1` … `answer N`. */
const answers = (count: number) =>
  Array.from({ length: count }, (_, index) => [{ type: 'text' as const, text: `answer ${index + 1}` }]);

const user = (text: string): Message => ({ type: 'user', content: [{ type: 'text', text }] });
const assistant = (text: string): Message => ({
  type: 'assistant',
  content: [{ type: 'text', text }],
  status: 'complete',
});

/** Runs one turn per text to its end; answers the turn ids. */
async function runTurns(session: Session, texts: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const text of texts) {
    const turn = await session.sendMessage(text);
    ids.push(turn.turnId);
    const events = await collect(turn);
    expect(events.at(-1)?.payload.type).toBe('turn_complete');
  }
  return ids;
}

describe('Session.rewind', () => {
  test('drops the turn and every later one; the log only grows; a resume rebuilds the same context', async () => {
    const { agent, storage } = await harness({ script: { responses: answers(3) } });
    const session = await agent.newSession();
    const ids = await runTurns(session, ['one', 'two', 'three']);
    expect(session.turns()).toEqual([
      { turnId: ids[0], input: [{ type: 'text', text: 'one' }] },
      { turnId: ids[1], input: [{ type: 'text', text: 'two' }] },
      { turnId: ids[2], input: [{ type: 'text', text: 'three' }] },
    ]);
    const before = (await storage.loadSession(session.id)) ?? [];

    await session.rewind({ toTurnId: ids[1] ?? '' });
    expect(session.turns().map((turn) => turn.turnId)).toEqual([ids[0]]);
    expect(session.messages()).toEqual([user('one'), assistant('answer 1')]);
    const after = (await storage.loadSession(session.id)) ?? [];
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length).map((event) => event.payload)).toEqual([
      { type: 'metadata', key: 'rewind', value: { toTurnId: ids[1] } },
    ]);

    await session.close();
    const resumed = await agent.resumeSession(session.id);
    expect(resumed.messages()).toEqual([user('one'), assistant('answer 1')]);
    expect(resumed.turns()).toEqual([{ turnId: ids[0], input: [{ type: 'text', text: 'one' }] }]);
    await resumed.close();
    await agent.shutdown();
  });

  test('rewind, new turns, rewind again: the model is sent only the kept turns, and a resume agrees', async () => {
    const { agent, provider } = await harness({ script: { responses: answers(5) } });
    const session = await agent.newSession();
    const [first, second] = await runTurns(session, ['one', 'two']);
    await session.rewind({ toTurnId: second ?? '' });
    const [third, fourth] = await runTurns(session, ['three', 'four']);
    expect(provider.requests.at(-2)?.messages).toEqual([user('one'), assistant('answer 1'), user('three')]);
    await session.rewind({ toTurnId: fourth ?? '' });
    // A turn rewound away, or one that never was, cannot be rewound to.
    await expectCode(session.rewind({ toTurnId: second ?? '' }), 'TURN_NOT_FOUND');
    await expectCode(session.rewind({ toTurnId: fourth ?? '' }), 'TURN_NOT_FOUND');
    await expectCode(session.rewind({ toTurnId: 'no-such-turn' }), 'TURN_NOT_FOUND');
    // A hostile id is shown quoted and cut, never whole.
    const hostile = `\u001b[2J${'x'.repeat(5000)}`;
    const refused = await session.rewind({ toTurnId: hostile }).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'TURN_NOT_FOUND' });
    expect(String((refused as Error).message).length).toBeLessThan(400);
    expect(String((refused as Error).message)).not.toContain('\u001b');
    await runTurns(session, ['five']);
    const kept = [user('one'), assistant('answer 1'), user('three'), assistant('answer 3')];
    expect(provider.requests.at(-1)?.messages).toEqual([...kept, user('five')]);
    expect(session.turns().map((turn) => turn.turnId)).toEqual([first, third, expect.any(String)]);
    const live = session.messages();
    expect(live).toEqual([...kept, user('five'), assistant('answer 5')]);
    await session.close();
    const resumed = await agent.resumeSession(session.id);
    expect(resumed.messages()).toEqual(live);
    expect(resumed.turns()).toEqual(session.turns());
    await resumed.close();
    await agent.shutdown();
  });

  test('usage is not rewound: what the dropped turns cost stays in the totals, live and resumed', async () => {
    const usage = { type: 'usage' as const, usage: { inputTokens: 10, outputTokens: 5 } };
    const { agent } = await harness({
      script: { responses: [1, 2].map((n) => [{ type: 'text' as const, text: `answer ${n}` }, usage]) },
    });
    const session = await agent.newSession();
    const ids = await runTurns(session, ['one', 'two']);
    const spent = session.usage();
    expect(spent).toMatchObject({ inputTokens: 20, outputTokens: 10, modelCalls: 2 });
    await session.rewind({ toTurnId: ids[0] ?? '' });
    expect(session.messages()).toEqual([]);
    expect(session.turns()).toEqual([]);
    expect(session.usage()).toEqual(spent);
    await session.close();
    const resumed = await agent.resumeSession(session.id);
    expect(resumed.usage()).toEqual(spent);
    await resumed.close();
    await agent.shutdown();
  });

  test('a skill injected for a turn leaves the context with it', async () => {
    const { agent } = await harness({ script: { responses: answers(2) } });
    const session = await agent.newSession();
    const ids = await runTurns(session, ['one', '/review the plan']);
    expect(session.messages().map((message) => message.type)).toEqual([
      'user',
      'assistant',
      'system',
      'user',
      'assistant',
    ]);
    await session.rewind({ toTurnId: ids[1] ?? '' });
    expect(session.messages()).toEqual([user('one'), assistant('answer 1')]);
    await session.close();
    const resumed = await agent.resumeSession(session.id);
    expect(resumed.messages()).toEqual([user('one'), assistant('answer 1')]);
    await resumed.close();
    await agent.shutdown();
  });

  test('after a compaction only the turns still in the context can be rewound to', async () => {
    const { agent } = await harness({
      script: {
        responses: answers(3),
        byPurpose: { compaction: [[{ type: 'text', text: 'They counted.' }]] },
      },
    });
    const session = await agent.newSession();
    const ids = await runTurns(session, ['one', 'two', 'three']);
    await session.compact();
    const summary = { type: 'system', content: `${templates.COMPACT_SUMMARY_PREFIX}\n\nThey counted.` };
    expect(session.messages()[0]).toEqual(summary);
    const listed = session.turns().map((turn) => turn.turnId);
    expect(listed).not.toContain(ids[0]);
    expect(listed).toEqual(ids.slice(ids.length - listed.length));
    await expectCode(session.rewind({ toTurnId: ids[0] ?? '' }), 'TURN_NOT_FOUND');
    const target = listed.at(-1) ?? '';
    const expected = session.messages().slice(0, -2);
    await session.rewind({ toTurnId: target });
    expect(session.messages()).toEqual(expected);
    expect(session.messages()[0]).toEqual(summary);
    await session.close();
    const resumed = await agent.resumeSession(session.id);
    expect(resumed.messages()).toEqual(expected);
    expect(resumed.turns()).toEqual(session.turns());
    await resumed.close();
    await agent.shutdown();
  });

  test('refused while a turn runs (TURN_BUSY), for bad options (INVALID_INPUT) and after close', async () => {
    const { agent } = await harness({
      script: { responses: [...answers(1), [{ type: 'text', text: 'thinking' }, { type: 'hang' }]] },
    });
    const session = await agent.newSession();
    const [first] = await runTurns(session, ['one']);
    const running = await session.sendMessage('two');
    await readUntil(running, 'text_delta');
    await expectCode(session.rewind({ toTurnId: first ?? '' }), 'TURN_BUSY');
    await expectCode(session.rewind({ toTurnId: running.turnId }), 'TURN_BUSY');
    running.cancel();
    await running.done;
    await expectCode(session.rewind(undefined as never), 'INVALID_INPUT');
    await expectCode(session.rewind({ toTurnId: '' }), 'INVALID_INPUT');
    await expectCode(session.rewind({ toTurnId: first ?? '', extra: 1 } as never), 'INVALID_INPUT');
    // The cancelled turn is a turn of the context too: rewinding to it drops its partial answer.
    expect(session.turns().map((turn) => turn.turnId)).toEqual([first, running.turnId]);
    await session.rewind({ toTurnId: running.turnId });
    expect(session.messages()).toEqual([user('one'), assistant('answer 1')]);
    await session.close();
    await expectCode(session.rewind({ toTurnId: first ?? '' }), 'SESSION_CLOSED');
    await agent.shutdown();
  });
});

describe('Session.rewind with a turn left unfinished', () => {
  test('a turn a crash cut is given up: the log says so, and a resume finds nothing to continue', async () => {
    const { agent, storage } = await harness();
    await writeLog(storage, 'cut', [
      { type: 'metadata', key: 'session_config', value: { modelId: 'scripted-model' } },
      { type: 'user_message', content: [{ type: 'text', text: 'one' }], turnId: 't1' },
      { type: 'assistant_message', content: [{ type: 'text', text: 'answer 1' }], status: 'complete' },
      { type: 'user_message', content: [{ type: 'text', text: 'two' }], turnId: 't2' },
      { type: 'tool_call', callId: 'call_cut', toolName: 'lookup', arguments: { q: 'x' } },
    ]);
    const session = await agent.resumeSession('cut');
    expect(session.interruptedTurn()).toBeDefined();
    expect(session.turns().map((turn) => turn.turnId)).toEqual(['t1', 't2']);
    await session.rewind({ toTurnId: 't2' });
    expect(session.interruptedTurn()).toBeUndefined();
    expect(session.messages()).toEqual([user('one'), assistant('answer 1')]);
    await session.close();
    const log = (await storage.loadSession('cut')) ?? [];
    expect(log.slice(-2).map((event) => event.payload)).toEqual([
      { type: 'metadata', key: 'turn_ended', value: { turnId: expect.any(String), status: 'abandoned' } },
      { type: 'metadata', key: 'rewind', value: { toTurnId: 't2' } },
    ]);
    const resumed = await agent.resumeSession('cut');
    expect(resumed.interruptedTurn()).toBeUndefined();
    expect(resumed.messages()).toEqual([user('one'), assistant('answer 1')]);
    await resumed.close();
    await agent.shutdown();
  });

  test('a turn waiting for approvals must be decided and continued first (TURN_BUSY)', async () => {
    const { agent } = await approvalAgent({
      responses: [
        [{ type: 'text', text: 'answer 1' }],
        [{ type: 'tool_call', toolName: 'deploy', arguments: { service: 'web' } }],
        [{ type: 'text', text: 'not deployed' }],
      ],
    });
    const session = await agent.newSession();
    const first = await session.sendMessage('one');
    await collect(first);
    const held = await session.sendMessage('ship it');
    expect((await collect(held)).at(-1)?.payload.type).toBe('turn_suspended');
    await expectCode(session.rewind({ toTurnId: first.turnId }), 'TURN_BUSY');
    const [pending] = session.pendingApprovals();
    await session.deny(pending?.callId ?? '', 'not now');
    await collect(await session.continue());
    await session.rewind({ toTurnId: held.turnId });
    expect(session.messages()).toEqual([user('one'), assistant('answer 1')]);
    await session.close();
    await agent.shutdown();
  });
});

describe('the rewind marker on replay', () => {
  test('applies after a compaction that kept everything; a marker naming no turn of the context is ignored', async () => {
    const { agent, storage } = await harness();
    await writeLog(storage, 'hand-written', [
      { type: 'metadata', key: 'session_config', value: { modelId: 'scripted-model' } },
      { type: 'user_message', content: [{ type: 'text', text: 'one' }], turnId: 't1' },
      { type: 'assistant_message', content: [{ type: 'text', text: 'answer 1' }], status: 'complete' },
      { type: 'user_message', content: [{ type: 'text', text: 'two' }], turnId: 't2' },
      { type: 'assistant_message', content: [{ type: 'text', text: 'answer 2' }], status: 'complete' },
      // More kept messages than there are: all of them stay, after the summary.
      { type: 'metadata', key: 'compaction', value: { summary: 'S', keptMessages: 99 } },
      { type: 'metadata', key: 'rewind', value: { toTurnId: 'not-a-turn' } },
      { type: 'metadata', key: 'rewind', value: { toTurnId: 42 } },
      { type: 'metadata', key: 'rewind', value: { toTurnId: 't2' } },
    ]);
    const session = await agent.resumeSession('hand-written');
    expect(session.messages()).toEqual([
      { type: 'system', content: `${templates.COMPACT_SUMMARY_PREFIX}\n\nS` },
      user('one'),
      assistant('answer 1'),
    ]);
    expect(session.turns()).toEqual([{ turnId: 't1', input: [{ type: 'text', text: 'one' }] }]);
    await session.close();
    await agent.shutdown();
  });
});

describe('steered messages and turns', () => {
  test('a steered message belongs to the turn it joined: it is not a turn, and a rewind to that turn drops it', async () => {
    const scripted = new ScriptedModelProvider({
      responses: [
        [{ type: 'text', text: 'answer 1' }],
        [{ type: 'text', text: 'first answer' }],
        [{ type: 'text', text: 'after steering' }],
      ],
    });
    const pause = pauseAt(1);
    const { agent } = await steeringHarness({ provider: pausingProvider(scripted, { 1: pause }) });
    const session = await agent.newSession();
    const [first] = await runTurns(session, ['one']);
    const turn = await session.sendMessage('two');
    await pause.reached.promise;
    await session.steer('also this');
    pause.release();
    expect((await collect(turn)).at(-1)?.payload.type).toBe('turn_complete');
    expect(session.messages()).toContainEqual(user('also this'));
    expect(session.turns()).toEqual([
      { turnId: first, input: [{ type: 'text', text: 'one' }] },
      { turnId: turn.turnId, input: [{ type: 'text', text: 'two' }] },
    ]);
    await session.close();
    const resumed = await agent.resumeSession(session.id);
    expect(resumed.turns()).toEqual(session.turns());
    await resumed.rewind({ toTurnId: turn.turnId });
    expect(resumed.messages()).toEqual([user('one'), assistant('answer 1')]);
    await resumed.close();
    await agent.shutdown();
  });
});
