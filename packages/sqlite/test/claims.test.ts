import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import type { AgentError, SessionEvent } from '@youyou/agent';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { openSqliteStorage, type SqliteStorage } from '../src/index.js';
import { makeTempFolder, type TempFolder } from './support/temp-folder.js';

let folder: TempFolder;
const opened: SqliteStorage[] = [];

beforeEach(async () => {
  folder = await makeTempFolder();
});

afterEach(async () => {
  for (const storage of opened.splice(0)) await storage.close();
  await folder.remove();
});

async function open(options: Parameters<typeof openSqliteStorage>[1] = {}): Promise<SqliteStorage> {
  const storage = await openSqliteStorage(folder.file('agent.db'), options);
  opened.push(storage);
  return storage;
}

/** Runs one statement on a connection of its own, as another program editing the file would. */
function runOnFile(sql: string, ...values: unknown[]): void {
  const database = new Database(folder.file('agent.db'));
  try {
    database.prepare(sql).run(...values);
  } finally {
    database.close();
  }
}

function userEvent(text: string): SessionEvent {
  return { timestamp: new Date(), payload: { type: 'user_message', content: [{ type: 'text', text }] } };
}

async function rejection(promise: Promise<unknown>): Promise<AgentError> {
  try {
    await promise;
  } catch (error) {
    return error as AgentError;
  }
  throw new Error('expected a rejection');
}

test('a session claimed by one storage on the file is refused to another until released or closed', async () => {
  const first = await open();
  const second = await open();
  const claim = await first.sessions.acquireSession('shared');

  const refused = await rejection(second.sessions.acquireSession('shared'));
  expect(refused.code).toBe('SESSION_BUSY');
  expect(refused.message).toContain(`pid ${process.pid}`);

  await claim.release();
  const taken = await second.sessions.acquireSession('shared');
  expect(await rejection(first.sessions.acquireSession('shared'))).toMatchObject({ code: 'SESSION_BUSY' });

  // Closing the holder's storage frees its sessions at once.
  await second.close();
  await (await first.sessions.acquireSession('shared')).release();
  expect(taken.lost).toBe(false);
});

test('an expired claim is taken over; the stale holder loses it and its writes are refused', async () => {
  // Renewals far apart, so the claim expires before its holder renews it.
  const stale = await open({ claims: { ttlMs: 150, heartbeatMs: 140 } });
  const next = await open();
  const claim = await stale.sessions.acquireSession('handed-over');
  await stale.sessions.saveEvent('handed-over', userEvent('before the takeover'));
  // Simulates a holder that stopped renewing (a paused process): its claim runs out.
  runOnFile('UPDATE session_claims SET expires_at = 0 WHERE session_id = ?', 'handed-over');

  const taken = await next.sessions.acquireSession('handed-over');
  const refused = await rejection(stale.sessions.saveEvent('handed-over', userEvent('stale write')));
  expect(refused.code).toBe('SESSION_BUSY');
  expect(claim.lost).toBe(true);
  expect(claim.signal.aborted).toBe(true);

  await next.sessions.saveEvent('handed-over', userEvent('by the new holder'));
  const log = await next.sessions.loadSession('handed-over');
  expect(log?.map((event) => JSON.stringify(event.payload))).toEqual([
    JSON.stringify(userEvent('before the takeover').payload),
    JSON.stringify(userEvent('by the new holder').payload),
  ]);
  await taken.release();
});

test('a held claim is renewed by its heartbeat and outlives its ttl', async () => {
  const holder = await open({ claims: { ttlMs: 200, heartbeatMs: 50 } });
  const other = await open();
  await holder.sessions.acquireSession('kept');
  await delay(500);
  expect(await rejection(other.sessions.acquireSession('kept'))).toMatchObject({ code: 'SESSION_BUSY' });
});

test('the claim of a process of this host that no longer runs is taken at once', async () => {
  const storage = await open();
  const gone = spawnSync(process.execPath, ['-e', '']).pid;
  runOnFile(
    'INSERT INTO session_claims (session_id, owner, host, pid, token, acquired_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    'orphan',
    'crashed',
    hostname(),
    gone,
    'token',
    Date.now(),
    Date.now() + 3_600_000,
  );

  const claim = await storage.sessions.acquireSession('orphan');
  await claim.release();
});

test('bad claim options are refused with INVALID_CONFIG', async () => {
  const error = await rejection(open({ claims: { ttlMs: 100, heartbeatMs: 100 } }));
  expect(error.code).toBe('INVALID_CONFIG');
});
