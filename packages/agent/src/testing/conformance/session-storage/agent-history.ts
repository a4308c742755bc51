import assert from 'node:assert/strict';
import type { ContentBlock, Message, UsageTotals } from '../../../kernel/types.js';
import type { ModelProvider } from '../../../ports/model.js';
import type { SessionEvent, SessionStorage } from '../../../ports/storage.js';
import { ScriptedModelProvider } from '../../scripted-provider.js';
import type { ConformanceTest } from '../support.js';

/** The part of a Session the end-to-end cases drive (an `@youyou/agent` Session is one). */
export interface ConformanceSession {
  readonly id: string;
  sendMessage(
    input: string,
  ): Promise<{ readonly turnId: string; readonly done: Promise<{ status: string }> }>;
  rewind(options: { toTurnId: string }): Promise<void>;
  compact(): Promise<unknown>;
  turns(): { turnId: string; input: ContentBlock[] }[];
  messages(): Message[];
  usage(): UsageTotals;
  close(): Promise<void>;
}

/** The part of an Agent the end-to-end cases drive (an `@youyou/agent` Agent is one). */
export interface ConformanceAgent {
  newSession(): Promise<ConformanceSession>;
  resumeSession(sessionId: string): Promise<ConformanceSession>;
  forkSession(sessionId: string, options?: { atTurnId?: string }): Promise<ConformanceSession>;
  shutdown(): Promise<void>;
}

/**
 * Builds an Agent on the storage under test, with `provider` as its only model provider and its model
 * (`scripted-model`) as the default: the end-to-end cases run forks and rewinds through it.
 */
export type ConformanceAgentFactory = (options: {
  storage: SessionStorage;
  provider: ModelProvider;
}) => Promise<ConformanceAgent>;

/** A provider that answers `answer 1`, `answer 2`, … (each call using 5 + 2 tokens) and summarises as SUMMARY. */
function countingProvider(): ScriptedModelProvider {
  return new ScriptedModelProvider({
    responses: Array.from({ length: 20 }, (_, index) => [
      { type: 'text' as const, text: `answer ${index + 1}` },
      { type: 'usage' as const, usage: { inputTokens: 5, outputTokens: 2 } },
    ]),
    byPurpose: { compaction: [[{ type: 'text', text: 'SUMMARY' }]] },
  });
}

async function runTurn(session: ConformanceSession, text: string): Promise<string> {
  const turn = await session.sendMessage(text);
  const result = await turn.done;
  assert.equal(result.status, 'completed', `the turn '${text}' completes`);
  return turn.turnId;
}

function metadataOf(events: readonly SessionEvent[], key: string): unknown[] {
  return events.flatMap(({ payload }) =>
    payload.type === 'metadata' && payload.key === key ? [payload.value] : [],
  );
}

/** Forks and rewinds end to end on the storage: what an Agent writes reads back into the same contexts. */
export function agentHistoryTests(
  test: ConformanceTest<SessionStorage>,
  agent: ConformanceAgentFactory,
): void {
  test('Agent: a rewind is read back by a second agent: the rewound context, then new turns after it', async (storage) => {
    const first = await agent({ storage, provider: countingProvider() });
    const session = await first.newSession();
    const [one, two] = [await runTurn(session, 'one'), await runTurn(session, 'two')];
    await runTurn(session, 'three');
    await session.rewind({ toTurnId: two });
    await runTurn(session, 'four');
    const live = session.messages();
    assert.deepStrictEqual(
      live.map((message) => message.type === 'user' && message.content[0]),
      [{ type: 'text', text: 'one' }, false, { type: 'text', text: 'four' }, false],
    );
    await session.close();
    await first.shutdown();

    const second = await agent({ storage, provider: countingProvider() });
    const resumed = await second.resumeSession(session.id);
    assert.deepStrictEqual(resumed.messages(), live);
    assert.deepStrictEqual(resumed.turns()[0]?.turnId, one);
    assert.equal(resumed.turns().length, 2);
    await resumed.close();
    await second.shutdown();
  });

  test('Agent: a fork after a rewind and a compaction has the source’s context at its turn, read back by a second agent; linked both ways; the source untouched', async (storage) => {
    const first = await agent({ storage, provider: countingProvider() });
    const source = await first.newSession();
    await runTurn(source, 'one');
    const two = await runTurn(source, 'two');
    await source.rewind({ toTurnId: two });
    const three = await runTurn(source, 'three');
    await source.compact();
    const atThree = source.messages();
    await runTurn(source, 'four');
    const sourceContext = source.messages();
    const sourceUsage = source.usage();
    await source.close();
    const before = (await storage.loadSession(source.id)) ?? [];

    const fork = await first.forkSession(source.id, { atTurnId: three });
    assert.notEqual(fork.id, source.id);
    assert.deepStrictEqual(fork.messages(), atThree);
    assert.equal(fork.usage().modelCalls, 0);
    await fork.close();
    await first.shutdown();

    const second = await agent({ storage, provider: countingProvider() });
    const resumedFork = await second.resumeSession(fork.id);
    assert.deepStrictEqual(resumedFork.messages(), atThree);
    assert.equal(resumedFork.usage().modelCalls, 0);
    await resumedFork.close();
    const resumedSource = await second.resumeSession(source.id);
    assert.deepStrictEqual(resumedSource.messages(), sourceContext);
    assert.deepStrictEqual(resumedSource.usage(), sourceUsage);
    await resumedSource.close();
    await second.shutdown();

    const after = (await storage.loadSession(source.id)) ?? [];
    assert.deepStrictEqual(after.slice(0, before.length), before, 'the source log only gained the link');
    assert.deepStrictEqual(metadataOf(after, 'fork'), [{ sessionId: fork.id, atTurnId: three }]);
    const forkLog = (await storage.loadSession(fork.id)) ?? [];
    assert.deepStrictEqual(metadataOf(forkLog, 'forked_from'), [{ sessionId: source.id, atTurnId: three }]);
  });
}
