import { subagentLinksOf, subagentParentOf } from '@youyou/agent';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { openSqliteStorage } from '../src/index.js';
import { buildAgent, describeLog, eventsOf } from './support/agent.js';
import { type Child, startChild } from './support/child.js';
import { makeTempFolder, type TempFolder } from './support/temp-folder.js';

let folder: TempFolder;
const children: Child[] = [];

beforeEach(async () => {
  folder = await makeTempFolder();
});

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGKILL');
    await child.exited;
  }
  await folder.remove();
});

function start(script: string, args: readonly string[]): Child {
  const child = startChild(script, args);
  children.push(child);
  return child;
}

/** What SQLite says of the whole file (pages, indexes) and of both full-text indexes, on a fresh connection. */
function checkIntegrity(path: string): { database: unknown; searchIndexes: string } {
  const database = new Database(path);
  try {
    const result = database.pragma('integrity_check', { simple: true });
    // FTS5's own check of its index structure; it throws SQLITE_CORRUPT_VTAB if the index is damaged.
    database.exec("INSERT INTO search_texts_fts (search_texts_fts, rank) VALUES ('integrity-check', 0)");
    database.exec("INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 0)");
    return { database: result, searchIndexes: 'ok' };
  } finally {
    database.close();
  }
}

async function killDuring(mode: 'tool' | 'stream', readyLine: string) {
  const path = folder.file('agent.db');
  const child = start('crash-agent.mjs', [path, mode]);
  const sessionId = (await child.waitForLine((line) => line.startsWith('SESSION '))).slice('SESSION '.length);
  await child.waitForLine((line) => line === readyLine);
  child.process.kill('SIGKILL');
  expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
  expect(child.lines).not.toContain('TURN_ENDED');
  return { path, sessionId };
}

test('SIGKILL while a tool runs: the log keeps every saved message; resume adds the missing result', async () => {
  const { path, sessionId } = await killDuring('tool', 'TOOL_RUNNING');
  expect(checkIntegrity(path)).toEqual({ database: 'ok', searchIndexes: 'ok' });

  const storage = await openSqliteStorage(path);
  try {
    const log = await storage.sessions.loadSession(sessionId);
    expect(describeLog(log?.map((event) => event.payload) ?? [])).toEqual([
      'metadata: session_config',
      'user_message: hello',
      'assistant_message: Hello back.',
      'user_message: run the tool',
      'assistant_message: Let me run it.',
      'tool_call: wait_forever call_1',
    ]);
    const { agent, provider } = await buildAgent({
      storage,
      responses: [[{ type: 'text', text: 'Back again.' }]],
    });
    const resumed = await agent.resumeSession(sessionId);
    // SPEC §5.9: the call left without a result gets a synthetic error result on resume, not saved.
    const interrupted = resumed.messages().at(-1);
    expect(interrupted).toMatchObject({ type: 'tool_result', callId: 'call_1', isError: true });
    expect(interrupted?.type === 'tool_result' && interrupted.content).toContain('interrupted');
    const events = await eventsOf(await resumed.sendMessage('are you there?'));
    expect(events.at(-1)?.payload.type).toBe('turn_complete');
    expect(provider.requests[0]?.messages.slice(-3).map((message) => message.type)).toEqual([
      'tool_call',
      'tool_result',
      'user',
    ]);
    await resumed.close();
    await agent.shutdown();
    const after = await storage.sessions.loadSession(sessionId);
    expect(describeLog(after?.slice(6).map((event) => event.payload) ?? [])).toEqual([
      'user_message: are you there?',
      'assistant_message: Back again.',
    ]);
  } finally {
    await storage.close();
  }
});

test('SIGKILL while the model streams: the partial answer was never saved; the user message was', async () => {
  const { path, sessionId } = await killDuring('stream', 'DELTA "answer"');
  expect(checkIntegrity(path)).toEqual({ database: 'ok', searchIndexes: 'ok' });

  const storage = await openSqliteStorage(path);
  try {
    const log = await storage.sessions.loadSession(sessionId);
    // The runtime saves an assistant message when its stream ends (as `incomplete` on cancel or a provider
    // error); a process killed mid-stream never gets there, so only the user message of the turn is kept.
    expect(describeLog(log?.map((event) => event.payload) ?? [])).toEqual([
      'metadata: session_config',
      'user_message: hello',
      'assistant_message: Hello back.',
      'user_message: stream something',
    ]);
    const { agent } = await buildAgent({
      storage,
      responses: [[{ type: 'text', text: 'Streamed in full.' }]],
    });
    const resumed = await agent.resumeSession(sessionId);
    expect(resumed.messages().map((message) => message.type)).toEqual(['user', 'assistant', 'user']);
    const events = await eventsOf(await resumed.sendMessage('try again'));
    expect(events.at(-1)?.payload.type).toBe('turn_complete');
    await resumed.close();
    await agent.shutdown();
    expect((await storage.sessions.findSession('stream something'))[0]?.messageCount).toBe(5);
  } finally {
    await storage.close();
  }
});

test('two processes writing the same file at once: no SQLITE_BUSY escapes and nothing is lost', async () => {
  const path = folder.file('shared.db');
  const count = 500;
  const writers = ['writer-a', 'writer-b'].map((sessionId) => ({
    sessionId,
    child: start('writer.mjs', [path, sessionId, String(count)]),
  }));
  for (const { child } of writers) await child.waitForLine((line) => line === 'READY');
  for (const { child } of writers) child.process.stdin.end('GO\n');
  for (const { child } of writers) {
    const exit = await child.exited;
    expect({ ...exit, stderr: child.stderr() }).toEqual({ code: 0, signal: null, stderr: '' });
    expect(child.lines.at(-1)).toBe('DONE');
  }
  expect(checkIntegrity(path)).toEqual({ database: 'ok', searchIndexes: 'ok' });
  const storage = await openSqliteStorage(path);
  try {
    for (const { sessionId } of writers) {
      const log = await storage.sessions.loadSession(sessionId);
      expect(
        log?.map((event) => (event.payload.type === 'user_message' ? event.payload.content : [])),
      ).toEqual(
        Array.from({ length: count }, (_, index) => [{ type: 'text', text: `${sessionId} #${index}` }]),
      );
    }
    const summaries = (await storage.sessions.listSessions(undefined, 10)).sessions;
    expect(summaries.map((summary) => [summary.sessionId, summary.messageCount]).sort()).toEqual([
      ['writer-a', count],
      ['writer-b', count],
    ]);
  } finally {
    await storage.close();
  }
});

test('SIGKILL during a stream of writes: every save that resolved is there, in order, and the file is sound', async () => {
  const path = folder.file('killed.db');
  const child = start('writer.mjs', [path, 'doomed', '1000000', 'report']);
  await child.waitForLine((line) => line === 'READY');
  child.process.stdin.end('GO\n');
  await child.waitForLine((line) => line === 'SAVED 300');
  child.process.kill('SIGKILL');
  await child.exited;
  const lastReported = Math.max(
    ...child.lines.filter((line) => line.startsWith('SAVED ')).map((line) => Number(line.slice(6))),
  );
  expect(checkIntegrity(path)).toEqual({ database: 'ok', searchIndexes: 'ok' });
  const storage = await openSqliteStorage(path);
  try {
    const texts = ((await storage.sessions.loadSession('doomed')) ?? []).map((event) =>
      event.payload.type === 'user_message' ? event.payload.content : [],
    );
    // A save can commit and the kill land before it is reported, so one more than reported may be there.
    expect(texts.length).toBeGreaterThanOrEqual(lastReported + 1);
    expect(texts.length).toBeLessThanOrEqual(lastReported + 2);
    expect(texts).toEqual(
      Array.from({ length: texts.length }, (_, index) => [{ type: 'text', text: `doomed #${index}` }]),
    );
    const [summary] = await storage.sessions.findSession('doomed');
    expect(summary?.messageCount).toBe(texts.length);
  } finally {
    await storage.close();
  }
}, 60_000);

test('SIGKILL while a sub-agent runs: the child session is saved, linked both ways, and resumable', async () => {
  const path = folder.file('agent.db');
  const child = start('crash-subagent.mjs', [path]);
  const sessionId = (await child.waitForLine((line) => line.startsWith('SESSION '))).slice('SESSION '.length);
  const running = await child.waitForLine((line) => line.startsWith('TOOL_RUNNING '));
  const childId = running.slice('TOOL_RUNNING '.length);
  child.process.kill('SIGKILL');
  expect(await child.exited).toEqual({ code: null, signal: 'SIGKILL' });
  expect(childId).not.toBe(sessionId);

  const storage = await openSqliteStorage(path);
  try {
    const parentLog = (await storage.sessions.loadSession(sessionId)) ?? [];
    expect(subagentLinksOf(parentLog)).toEqual([
      { callId: 'call_parent', toolName: 'researcher', sessionId: childId },
    ]);
    const childLog = (await storage.sessions.loadSession(childId)) ?? [];
    expect(subagentParentOf(childLog)).toEqual({ sessionId, callId: 'call_parent' });
    expect(describeLog(childLog.map((event) => event.payload))).toEqual([
      'metadata: session_config',
      'metadata: parent',
      'user_message: find the answer',
      'assistant_message: Looking.',
      'tool_call: wait_forever call_child',
    ]);
    const { agent } = await buildAgent({ storage, responses: [] });
    const resumedParent = await agent.resumeSession(sessionId);
    expect(resumedParent.messages().at(-1)).toMatchObject({
      type: 'tool_result',
      callId: 'call_parent',
      isError: true,
    });
    await resumedParent.close();
    const resumedChild = await agent.resumeSession(childId);
    expect(resumedChild.messages().map((message) => message.type)).toEqual([
      'user',
      'assistant',
      'tool_call',
      'tool_result',
    ]);
    await resumedChild.close();
    await agent.shutdown();
  } finally {
    await storage.close();
  }
});
