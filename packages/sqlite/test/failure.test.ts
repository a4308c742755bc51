import { type AgentError, isAgentError, type SessionEvent } from '@youyou/agent';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { openSqliteStorage, type SqliteStorage } from '../src/index.js';
import { buildAgent, describeLog, eventsOf } from './support/agent.js';
import { makeTempFolder, type TempFolder } from './support/temp-folder.js';

// How these tests make the storage fail for real. The tests run as root, and root writes to a file whatever
// its mode, so `chmod 0444` would not stop a single write. Instead:
// - `readonly: true` opens the file with SQLITE_OPEN_READONLY: SQLite refuses every write (SQLITE_READONLY);
// - `PRAGMA query_only = ON` on the storage's own connection makes SQLite refuse writes the same way, and
//   `OFF` brings the storage back, so one Agent can see the outage and the recovery;
// - another connection holding the write lock (BEGIN IMMEDIATE) makes writes fail with SQLITE_BUSY once
//   the busy timeout and the retries have passed — what a host sees when another process hogs the file.

let folder: TempFolder;
let storage: SqliteStorage;

beforeEach(async () => {
  folder = await makeTempFolder();
});

afterEach(async () => {
  await storage.close();
  await folder.remove();
});

const event = (text: string): SessionEvent => ({
  timestamp: new Date(Date.UTC(2024, 0, 1)),
  payload: { type: 'user_message', content: [{ type: 'text', text }] },
});

async function rejection(promise: Promise<unknown>): Promise<AgentError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!isAgentError(error)) throw new Error(`expected an AgentError rejection, got ${String(error)}`);
  return error;
}

test('a read-only database reads, and refuses writes with a STORAGE_ERROR that says why', async () => {
  const path = folder.file('agent.db');
  const writable = await openSqliteStorage(path);
  await writable.sessions.saveEvent('s', event('written before'));
  await writable.close();
  storage = await openSqliteStorage(path, { readonly: true });
  expect(await storage.sessions.loadSession('s')).toStrictEqual([event('written before')]);
  const error = await rejection(storage.sessions.saveEvent('s', event('refused')));
  expect(error.code).toBe('STORAGE_ERROR');
  expect(error.sourceComponent).toBe('storage');
  expect(error.retryable).toBe(false);
  expect(error.message).toContain("saving an event of session 's' failed: SQLITE_READONLY");
  expect(error.message).toContain('read-only');
  expect((await rejection(storage.memories.delete('m'))).code).toBe('STORAGE_ERROR');
  expect(await storage.sessions.loadSession('s')).toHaveLength(1);
});

test('a lock held past the busy timeout is a retryable STORAGE_ERROR; reads go on; then writes work', async () => {
  const path = folder.file('agent.db');
  storage = await openSqliteStorage(path, { busyTimeoutMs: 30, busyRetries: 2 });
  await storage.sessions.saveEvent('s', event('one'));
  const blocker = new Database(path);
  blocker.exec('BEGIN IMMEDIATE');
  try {
    const error = await rejection(storage.sessions.saveEvent('s', event('two')));
    expect(error.code).toBe('STORAGE_ERROR');
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('SQLITE_BUSY');
    expect(error.message).toContain('busy timeout (30 ms) and 2 retries');
    // WAL: a writer holding the lock does not stop readers.
    expect(await storage.sessions.loadSession('s')).toStrictEqual([event('one')]);
  } finally {
    blocker.exec('COMMIT');
    blocker.close();
  }
  await storage.sessions.saveEvent('s', event('two'));
  expect(await storage.sessions.loadSession('s')).toStrictEqual([event('one'), event('two')]);
});

test('a write that meets a lock waits it out and succeeds; later writes stay behind it', async () => {
  const path = folder.file('agent.db');
  storage = await openSqliteStorage(path, { busyTimeoutMs: 10, busyRetries: 50 });
  await storage.sessions.saveEvent('s', event('one'));
  const blocker = new Database(path);
  blocker.exec('BEGIN IMMEDIATE');
  // The first attempt runs at once, meets the lock, and the write goes on waiting in the queue.
  const second = storage.sessions.saveEvent('s', event('two'));
  const third = storage.sessions.saveEvent('s', event('three'));
  blocker.exec('COMMIT');
  blocker.close();
  await Promise.all([second, third]);
  expect(await storage.sessions.loadSession('s')).toStrictEqual([event('one'), event('two'), event('three')]);
});

test('through an Agent: a read-only outage fails the turn with STORAGE_ERROR; after it, the log is whole', async () => {
  storage = await openSqliteStorage(folder.file('agent.db'));
  const { agent } = await buildAgent({
    storage,
    responses: [[{ type: 'text', text: 'answer two' }]],
  });
  const session = await agent.newSession();

  storage.database.pragma('query_only = ON');
  const failed = await eventsOf(await session.sendMessage('first, during the outage'));
  const errors = failed.flatMap((item) => (item.payload.type === 'error' ? [item.payload.error] : []));
  expect(errors.map((error) => error.code)).toEqual(['STORAGE_ERROR']);
  expect(errors[0]?.message).toContain('SQLITE_READONLY');
  expect(failed.at(-1)?.payload.type).toBe('turn_complete');

  storage.database.pragma('query_only = OFF');
  const next = await eventsOf(await session.sendMessage('second, after it'));
  expect(next.filter((item) => item.payload.type === 'error')).toEqual([]);
  expect(next.at(-1)?.payload.type).toBe('turn_complete');
  await session.close();
  await agent.shutdown();

  const log = await storage.sessions.loadSession(session.id);
  expect(describeLog(log?.map((item) => item.payload) ?? [])).toEqual([
    'metadata: session_config',
    'user_message: first, during the outage',
    'user_message: second, after it',
    'assistant_message: answer two',
  ]);
  expect((await storage.sessions.findSession('during the outage'))[0]?.sessionId).toBe(session.id);
});

test('through an Agent: a locked file fails the turn with a retryable STORAGE_ERROR; the next turn works', async () => {
  const path = folder.file('agent.db');
  storage = await openSqliteStorage(path, { busyTimeoutMs: 20, busyRetries: 1 });
  const { agent } = await buildAgent({
    storage,
    responses: [
      [{ type: 'tool_call', toolName: 'lookup', arguments: { q: 'x' } }],
      [{ type: 'text', text: 'done' }],
    ],
  });
  const session = await agent.newSession();
  const blocker = new Database(path);
  blocker.exec('BEGIN IMMEDIATE');
  let failed: Awaited<ReturnType<typeof eventsOf>>;
  try {
    failed = await eventsOf(await session.sendMessage('blocked'));
  } finally {
    blocker.exec('COMMIT');
    blocker.close();
  }
  const errors = failed.flatMap((item) => (item.payload.type === 'error' ? [item.payload.error] : []));
  expect(errors.map((error) => [error.code, error.retryable])).toEqual([['STORAGE_ERROR', true]]);

  const next = await eventsOf(await session.sendMessage('unblocked'));
  expect(next.filter((item) => item.payload.type === 'error')).toEqual([]);
  await session.close();
  await agent.shutdown();
  const log = await storage.sessions.loadSession(session.id);
  expect(describeLog(log?.map((item) => item.payload) ?? [])).toEqual([
    'metadata: session_config',
    'user_message: blocked',
    'user_message: unblocked',
    'tool_call: lookup call_1',
    'tool_result: call_1 ok',
    'assistant_message: done',
  ]);
});
