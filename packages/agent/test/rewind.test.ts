import { describe, expect, test } from 'vitest';
import { collect, expectCode, harness } from './support/resume-fixtures.js';

const answers = (count: number) =>
  Array.from({ length: count }, (_, index) => [{ type: 'text' as const, text: `answer ${index + 1}` }]);

describe('rewind', () => {
  test('a rewind drops the turn and every later one; a resume rebuilds the same context', async () => {
    const { agent, storage } = await harness({ script: { responses: answers(4) } });
    const session = await agent.newSession();
    const ids: string[] = [];
    for (const text of ['one', 'two', 'three']) {
      const turn = await session.sendMessage(text);
      ids.push(turn.turnId);
      await collect(turn);
    }
    expect(session.turns().map((turn) => turn.turnId)).toEqual(ids);
    await session.rewind({ toTurnId: ids[1] ?? '' });
    expect(session.turns().map((turn) => turn.turnId)).toEqual(ids.slice(0, 1));
    expect(session.messages()).toEqual([
      { type: 'user', content: [{ type: 'text', text: 'one' }] },
      { type: 'assistant', content: [{ type: 'text', text: 'answer 1' }], status: 'complete' },
    ]);
    await expectCode(session.rewind({ toTurnId: ids[2] ?? '' }), 'TURN_NOT_FOUND');
    const live = session.messages();
    await session.close();
    const resumed = await agent.resumeSession(session.id);
    expect(resumed.messages()).toEqual(live);
    expect(resumed.turns()).toEqual(session.turns());
    await resumed.close();
    const fork = await agent.forkSession(session.id, { atTurnId: ids[2] ?? '' });
    expect(fork.messages().length).toBe(6);
    expect(fork.usage().modelCalls).toBe(0);
    await fork.close();
    expect(storage).toBeDefined();
    await agent.shutdown();
  });
});
