/**
 * Issue 26 over a real SQLite file and real processes: a child runs a turn and is SIGKILLed at one point of it
 * (mid-stream, while a mutating call runs, between the tool results and the next model call, mid-compaction);
 * this process resumes the session once the child is gone and continues the turn. The finished context is that
 * of the same turn run whole, and the mutating tool's effects on disk show it never ran twice unapproved.
 */
import { existsSync, readFileSync } from 'node:fs';
import { type AgentEvent, InMemorySessionStorage, type Message } from '@youyou/agent';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  CONTINUES_AT,
  CUT_POINTS,
  CUT_TURN_INPUT,
  type CutPoint,
  cutAgent,
  cutTools,
  SUMMARY,
  TURN_SCRIPT,
} from '../../../test-support/cut-turn.js';
import { openSqliteStorage } from '../src/index.js';
import { eventsOf } from './support/agent.js';
import { type Child, startChild } from './support/child.js';
import { makeTempFolder, type TempFolder } from './support/temp-folder.js';

let folder: TempFolder;
let child: Child | undefined;

beforeEach(async () => {
  folder = await makeTempFolder();
});

afterEach(async () => {
  if (child !== undefined && child.process.exitCode === null && child.process.signalCode === null) {
    child.process.kill('SIGKILL');
  }
  await child?.exited;
  child = undefined;
  await folder.remove();
});

/** The runs of the mutating tool so far: one line each in the effects file. */
function effects(path: string): string[] {
  return existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
    : [];
}

/** The context of the cut turn run whole, in one process, on a storage of its own. */
async function uninterruptedContext(): Promise<Message[]> {
  const effectsPath = folder.file('whole-effects.txt');
  const { agent } = await cutAgent({
    storage: new InMemorySessionStorage(),
    responses: TURN_SCRIPT,
    compaction: [SUMMARY],
    tools: cutTools({ effectsPath }),
  });
  const session = await agent.newSession();
  await eventsOf(await session.sendMessage(CUT_TURN_INPUT));
  const messages = session.messages();
  await session.close();
  await agent.shutdown();
  expect(effects(effectsPath)).toEqual(['one']);
  return messages;
}

/** Runs the child until it reaches `point`, kills it there, and answers the session id. */
async function killAt(point: CutPoint, path: string, effectsPath: string): Promise<string> {
  child = startChild('cut-agent.mjs', [path, point, effectsPath]);
  const sessionId = (await child.waitForLine((line) => line.startsWith('SESSION '))).slice('SESSION '.length);
  await child.waitForLine((line) => line === CUT_POINTS[point]);
  child.process.kill('SIGKILL');
  const exit = await child.exited;
  expect(exit.signal).toBe('SIGKILL');
  expect(child.lines).not.toContain('TURN_ENDED');
  return sessionId;
}

function types(events: readonly AgentEvent[]): string[] {
  return events.map((event) => event.payload.type);
}

describe('a turn cut by SIGKILL is continued by another process', () => {
  const points: { point: CutPoint; effectsAtKill: number }[] = [
    { point: 'stream', effectsAtKill: 0 },
    { point: 'mutating-call', effectsAtKill: 1 },
    { point: 'approval', effectsAtKill: 0 },
    { point: 'after-results', effectsAtKill: 1 },
    { point: 'compaction', effectsAtKill: 1 },
  ];
  test.each(points)('killed at $point', async ({ point, effectsAtKill }) => {
    const whole = await uninterruptedContext();
    const path = folder.file('agent.db');
    const effectsPath = folder.file('effects.txt');
    const sessionId = await killAt(point, path, effectsPath);
    expect(effects(effectsPath)).toHaveLength(effectsAtKill);

    const storage = await openSqliteStorage(path);
    try {
      const { agent, provider } = await cutAgent({
        storage: storage.sessions,
        responses: TURN_SCRIPT.slice(CONTINUES_AT[point]),
        compaction: [SUMMARY],
        tools: cutTools({ effectsPath }),
      });
      const session = await agent.resumeSession(sessionId);
      const cut = session.interruptedTurn();
      expect(cut?.partialAnswer).toBe(false);
      let events = await eventsOf(await session.continue());
      expect(types(events)[0]).toBe('turn_continued');
      if (point === 'mutating-call' || point === 'approval') {
        // The mutating call may have run: it waits for a decision, and nothing ran meanwhile. Killed during
        // the approval, the batch had not begun: its read-only call is unfinished too, and simply runs again.
        const lookup = { callId: 'c1', toolName: 'lookup', arguments: { q: 'a' }, mayHaveRun: false };
        expect(cut?.unfinishedCalls).toEqual([
          ...(point === 'approval' ? [lookup] : []),
          { callId: 'c2', toolName: 'append_line', arguments: { line: 'one' }, mayHaveRun: true },
        ]);
        expect(events.at(-1)?.payload).toEqual({
          type: 'turn_suspended',
          pendingCalls: [
            { callId: 'c2', toolName: 'append_line', arguments: { line: 'one' }, mayHaveRun: true },
          ],
        });
        expect(effects(effectsPath)).toHaveLength(effectsAtKill);
        await session.approve('c2');
        events = await eventsOf(await session.continue());
        // Approved: it runs again, with the user's consent (a second time, when it had run before the kill).
        expect(effects(effectsPath)).toHaveLength(effectsAtKill + 1);
      } else {
        expect(cut?.unfinishedCalls).toEqual([]);
        expect(effects(effectsPath)).toEqual(['one']);
      }
      expect(events.at(-1)?.payload.type).toBe('turn_complete');
      expect(types(events)).not.toContain('error');
      expect(session.messages()).toEqual(whole);
      expect(provider.requests.filter((request) => request.purpose === 'turn')).toHaveLength(
        TURN_SCRIPT.length - CONTINUES_AT[point],
      );
      await session.close();
      await agent.shutdown();

      // The log replays to the same context in a third agent, with nothing left to continue.
      const { agent: reader } = await cutAgent({
        storage: storage.sessions,
        responses: [],
        compaction: [],
        tools: cutTools({ effectsPath }),
      });
      const resumed = await reader.resumeSession(sessionId);
      expect(resumed.interruptedTurn()).toBeUndefined();
      expect(resumed.messages()).toEqual(whole);
      await resumed.close();
      await reader.shutdown();
    } finally {
      await storage.close();
    }
  });

  test('a denied call of unknown outcome is not run again, and the model is told its outcome is unknown', async () => {
    const path = folder.file('agent.db');
    const effectsPath = folder.file('effects.txt');
    const sessionId = await killAt('mutating-call', path, effectsPath);
    const storage = await openSqliteStorage(path);
    try {
      const { agent, provider } = await cutAgent({
        storage: storage.sessions,
        responses: TURN_SCRIPT.slice(1),
        compaction: [SUMMARY],
        tools: cutTools({ effectsPath }),
      });
      const session = await agent.resumeSession(sessionId);
      await eventsOf(await session.continue());
      await session.deny('c2', 'I will check the file myself');
      const events = await eventsOf(await session.continue());
      expect(events.at(-1)?.payload.type).toBe('turn_complete');
      expect(effects(effectsPath)).toEqual(['one']);
      const result = provider.requests[0]?.messages.find(
        (message) => message.type === 'tool_result' && message.callId === 'c2',
      );
      expect(result).toMatchObject({ isError: true });
      expect(result?.type === 'tool_result' ? result.content : '').toMatch(/may have run.*unknown/s);
      await session.close();
      await agent.shutdown();
    } finally {
      await storage.close();
    }
  });
});
