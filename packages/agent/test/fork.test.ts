/**
 * Agent.forkSession: a new session with the source's context as it stood when a turn ended, linked both ways,
 * its usage from zero, the source untouched but for the link.
 */
import { describe, expect, test } from 'vitest';
import { forkLinksOf, forkSourceOf, type Message, type Session, type SessionEvent } from '../src/index.js';
import { InMemorySessionStorage } from '../src/testing/index.js';
import { collect, expectCode, harness } from './support/resume-fixtures.js';

const answers = (count: number) =>
  Array.from({ length: count }, (_, index) => [
    { type: 'text' as const, text: `answer ${index + 1}` },
    { type: 'usage' as const, usage: { inputTokens: 7, outputTokens: 3 } },
  ]);

const user = (text: string): Message => ({ type: 'user', content: [{ type: 'text', text }] });
const assistant = (text: string): Message => ({
  type: 'assistant',
  content: [{ type: 'text', text }],
  status: 'complete',
});

async function runTurn(session: Session, text: string): Promise<string> {
  const turn = await session.sendMessage(text);
  expect((await collect(turn)).at(-1)?.payload.type).toBe('turn_complete');
  return turn.turnId;
}

describe('Agent.forkSession', () => {
  test('a whole fork: its own id, the same context and turns, usage from zero, links both ways', async () => {
    const { agent, storage } = await harness({ script: { responses: answers(3) } });
    const source = await agent.newSession();
    const ids = [await runTurn(source, 'one'), await runTurn(source, 'two')];
    const context = source.messages();
    await source.close();
    const sourceLog = (await storage.loadSession(source.id)) ?? [];

    const fork = await agent.forkSession(source.id);
    expect(fork.id).not.toBe(source.id);
    expect(fork.messages()).toEqual(context);
    expect(fork.turns().map((turn) => turn.turnId)).toEqual(ids);
    expect(fork.usage()).toMatchObject({ inputTokens: 0, outputTokens: 0, modelCalls: 0 });
    await runTurn(fork, 'three in the fork');
    expect(fork.usage()).toMatchObject({ inputTokens: 7, modelCalls: 1 });
    await fork.close();

    const sourceAfter = (await storage.loadSession(source.id)) ?? [];
    expect(sourceAfter.slice(0, sourceLog.length)).toEqual(sourceLog);
    expect(sourceAfter.slice(sourceLog.length).map((event) => event.payload)).toEqual([
      { type: 'metadata', key: 'fork', value: { sessionId: fork.id } },
    ]);
    expect(forkLinksOf(sourceAfter)).toEqual([{ sessionId: fork.id }]);
    const forkLog = (await storage.loadSession(fork.id)) ?? [];
    expect(forkSourceOf(forkLog)).toEqual({ sessionId: source.id });
    expect(forkSourceOf(sourceAfter)).toBeUndefined();

    const resumedSource = await agent.resumeSession(source.id);
    expect(resumedSource.messages()).toEqual(context);
    expect(resumedSource.usage()).toMatchObject({ inputTokens: 14, modelCalls: 2 });
    await resumedSource.close();
    await agent.shutdown();
  });

  test('at a turn: the history up to and including it; the fork goes on without the source', async () => {
    const { agent, storage, provider } = await harness({ script: { responses: answers(4) } });
    const source = await agent.newSession();
    const ids = [await runTurn(source, 'one'), await runTurn(source, 'two'), await runTurn(source, 'three')];
    await source.close();
    const fork = await agent.forkSession(source.id, { atTurnId: ids[1] ?? '' });
    const kept = [user('one'), assistant('answer 1'), user('two'), assistant('answer 2')];
    expect(fork.messages()).toEqual(kept);
    await runTurn(fork, 'four');
    expect(provider.requests.at(-1)?.messages).toEqual([...kept, user('four')]);
    await fork.close();
    expect(forkSourceOf((await storage.loadSession(fork.id)) ?? [])).toEqual({
      sessionId: source.id,
      atTurnId: ids[1],
    });
    const resumedFork = await agent.resumeSession(fork.id);
    expect(resumedFork.messages()).toEqual([...kept, user('four'), assistant('answer 4')]);
    await resumedFork.close();
    await agent.shutdown();
  });

  test('a log with rewinds and a compaction: a fork at each turn has the context that turn ended with', async () => {
    const { agent } = await harness({
      script: {
        responses: answers(6),
        byPurpose: { compaction: [[{ type: 'text', text: 'Earlier they counted.' }]] },
      },
    });
    const source = await agent.newSession();
    /** The context each turn ended with: updated until the next turn starts or a rewind. */
    const endedWith = new Map<string, Message[]>();
    const turn = async (text: string): Promise<string> => {
      const id = await runTurn(source, text);
      endedWith.set(id, source.messages());
      return id;
    };
    const [one, two] = [await turn('one'), await turn('two')];
    await source.rewind({ toTurnId: two });
    const three = await turn('three');
    await source.compact();
    // A compaction between turns belongs to the history of the turn before it.
    endedWith.set(three, source.messages());
    const four = await turn('four');
    await source.rewind({ toTurnId: four });
    const five = await turn('five');
    await source.close();

    for (const id of [one, two, three, four, five]) {
      const fork = await agent.forkSession(source.id, { atTurnId: id });
      expect(fork.messages(), `fork at turn ${id}`).toEqual(endedWith.get(id));
      await fork.close();
      const resumed = await agent.resumeSession(fork.id);
      expect(resumed.messages()).toEqual(endedWith.get(id));
      await resumed.close();
    }
    await agent.shutdown();
  });

  test('unknown session, unknown turn, bad options, no free slot: refused, nothing written', async () => {
    const { agent, storage } = await harness({ script: { responses: answers(1) } });
    const source = await agent.newSession();
    await runTurn(source, 'one');
    // One session at a time (the default): the source holds the slot.
    await expectCode(agent.forkSession(source.id), 'SESSION_BUSY');
    await source.close();
    await expectCode(agent.forkSession('no-such-session'), 'SESSION_NOT_FOUND');
    await expectCode(agent.forkSession(source.id, { atTurnId: 'no-such-turn' }), 'TURN_NOT_FOUND');
    await expectCode(agent.forkSession(''), 'INVALID_INPUT');
    await expectCode(agent.forkSession(source.id, { atTurnId: '' }), 'INVALID_INPUT');
    await expectCode(agent.forkSession(source.id, { turn: 'x' } as never), 'INVALID_INPUT');
    await expectCode(agent.forkSession(source.id, 'x' as never), 'INVALID_INPUT');
    const listed = await storage.listSessions(undefined, 10);
    expect(listed.sessions.map((summary) => summary.sessionId)).toEqual([source.id]);
    expect(forkLinksOf((await storage.loadSession(source.id)) ?? [])).toEqual([]);
    await agent.shutdown();
  });

  test('a source open on the same agent is forked with what it holds, and its log gets the link', async () => {
    const { agent, storage } = await harness({
      script: { responses: answers(2) },
      config: { maxActiveSessions: 2 },
    });
    const source = await agent.newSession();
    await runTurn(source, 'one');
    const fork = await agent.forkSession(source.id);
    expect(fork.messages()).toEqual(source.messages());
    await runTurn(source, 'two after the fork');
    await fork.close();
    await source.close();
    const sourceLog = (await storage.loadSession(source.id)) ?? [];
    expect(forkLinksOf(sourceLog)).toEqual([{ sessionId: fork.id }]);
    const resumed = await agent.resumeSession(source.id);
    expect(resumed.messages().at(-1)).toEqual(assistant('answer 2'));
    await resumed.close();
    await agent.shutdown();
  });

  test('a storage that refuses the link: STORAGE_ERROR, and the fork is taken back', async () => {
    class RefusesSource extends InMemorySessionStorage {
      refused: string | undefined;
      override async saveEvent(sessionId: string, event: SessionEvent): Promise<void> {
        if (sessionId === this.refused) throw new Error('disk full');
        await super.saveEvent(sessionId, event);
      }
    }
    const storage = new RefusesSource();
    const { agent } = await harness({ script: { responses: answers(1) }, sessionStorage: storage });
    const source = await agent.newSession();
    await runTurn(source, 'one');
    await source.close();
    storage.refused = source.id;
    await expectCode(agent.forkSession(source.id), 'STORAGE_ERROR');
    const listed = await storage.listSessions(undefined, 10);
    expect(listed.sessions.map((summary) => summary.sessionId)).toEqual([source.id]);
    // The slot was given back.
    storage.refused = undefined;
    const fork = await agent.forkSession(source.id);
    expect(fork.messages()).toEqual([user('one'), assistant('answer 1')]);
    await fork.close();
    await agent.shutdown();
  });
});
