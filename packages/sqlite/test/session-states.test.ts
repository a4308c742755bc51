import { queryObjects } from 'node:v8';
import { AgentBuilder, type SessionEvent } from '@youyou/agent';
import { ScriptedModelProvider } from '@youyou/agent/testing';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { openSqliteStorage, type SqliteStorage } from '../src/index.js';
import { KnownSessionState, STATE_CACHE_SIZE } from '../src/session-states.js';
import { eventsOf, lookupTool } from './support/agent.js';
import { makeTempFolder, type TempFolder } from './support/temp-folder.js';

// What the session storage remembers per session (where each stands, to skip a lookup on the next write) must
// not outlive the session's run here: a process that runs for days closes sessions by the thousand and keeps
// them in the file, not in its heap. Counted with v8.queryObjects, which counts live objects after a gc.

let folder: TempFolder;
let storage: SqliteStorage;

beforeEach(async () => {
  folder = await makeTempFolder();
  storage = await openSqliteStorage(folder.file('states.db'));
});

afterEach(async () => {
  await storage.close();
  await folder.remove();
});

/** Live states of sessions remembered by this file's storages. */
function rememberedStates(): number {
  return queryObjects(KnownSessionState, { format: 'count' });
}

async function agentWithTurns(turns: number) {
  const responses = Array.from({ length: turns }, (_, index) => [
    [{ type: 'tool_call' as const, toolName: 'lookup', arguments: { q: `word ${index}` } }],
    [{ type: 'text' as const, text: `answer ${index}` }],
  ]).flat();
  return new AgentBuilder({ defaultModel: 'scripted-model' })
    .registerModelProvider(new ScriptedModelProvider({ responses }))
    .registerTool(lookupTool)
    .registerSessionStorage(storage.sessions)
    .build();
}

test('a session closed by the agent leaves nothing remembered; a resumed one writes on where it stood', async () => {
  const sessions = 12;
  const agent = await agentWithTurns(sessions + 2);
  const ids: string[] = [];
  for (let index = 0; index < sessions; index += 1) {
    const session = await agent.newSession();
    ids.push(session.id);
    const events = await eventsOf(await session.sendMessage(`question ${index}`));
    expect(events.at(-1)?.payload.type).toBe('turn_complete');
    // Open and written to: remembered, so its next write needs no lookup.
    expect(rememberedStates()).toBe(1);
    await session.close();
    expect(rememberedStates()).toBe(0);
  }
  const firstId = ids[0] as string;
  const before = (await storage.sessions.loadSession(firstId))?.length ?? 0;
  const resumed = await agent.resumeSession(firstId);
  const events = await eventsOf(await resumed.sendMessage('one more question'));
  expect(events.at(-1)?.payload.type).toBe('turn_complete');
  await resumed.close();
  await agent.shutdown();
  expect(rememberedStates()).toBe(0);
  // Its state was read back from the file: the new events follow the old ones, and the summary agrees.
  const log = (await storage.sessions.loadSession(firstId)) ?? [];
  expect(log.length).toBeGreaterThan(before);
  expect(log.filter((event) => event.payload.type === 'user_message')).toHaveLength(2);
  const { sessions: listed } = await storage.sessions.listSessions(undefined, sessions + 1);
  const summary = listed.find((entry) => entry.sessionId === firstId);
  expect(summary?.messageCount).toBe(log.filter((event) => event.payload.type !== 'metadata').length);
  expect(summary?.updatedAt).toStrictEqual(log.at(-1)?.timestamp);
});

test('sessions written without a claim are remembered up to the bound, and a deleted one is forgotten', async () => {
  const event = (index: number): SessionEvent => ({
    timestamp: new Date(1_700_000_000_000 + index),
    payload: { type: 'user_message', content: [{ type: 'text', text: `hello ${index}` }] },
  });
  await storage.sessions.saveEvent('kept', event(0));
  expect(rememberedStates()).toBe(1);
  await storage.sessions.deleteSession('kept');
  expect(rememberedStates()).toBe(0);
  for (let index = 0; index <= STATE_CACHE_SIZE; index += 1) {
    await storage.sessions.saveEvent(`session-${index}`, event(index));
  }
  expect(rememberedStates()).toBeLessThanOrEqual(STATE_CACHE_SIZE);
  expect(rememberedStates()).toBeGreaterThan(0);
  // A session written again after its state was forgotten continues its log.
  await storage.sessions.saveEvent('session-0', event(1));
  expect(
    (await storage.sessions.loadSession('session-0'))?.map((saved) => saved.timestamp.getTime()),
  ).toEqual([1_700_000_000_000, 1_700_000_000_001]);
});
