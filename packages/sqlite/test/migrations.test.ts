import { writeFile } from 'node:fs/promises';
import { isAgentError } from '@youyou/agent';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { SqliteConnection } from '../src/connection.js';
import { openSqliteStorage, SCHEMA_VERSION } from '../src/index.js';
import type { Migration } from '../src/migrations.js';
import { makeTempFolder, type TempFolder } from './support/temp-folder.js';

let folder: TempFolder;

beforeEach(async () => {
  folder = await makeTempFolder();
});

afterEach(async () => {
  await folder.remove();
});

/** The AgentError a promise rejects with. */
async function rejection(promise: Promise<unknown>) {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!isAgentError(error)) throw new Error(`expected an AgentError rejection, got ${String(error)}`);
  return error;
}

function pragma(path: string, name: string): unknown {
  const database = new Database(path, { readonly: true });
  try {
    return database.pragma(name, { simple: true });
  } finally {
    database.close();
  }
}

const event = (text: string) => ({
  timestamp: new Date(Date.UTC(2024, 0, 1, 0, 0, 0, 1)),
  payload: { type: 'user_message' as const, content: [{ type: 'text' as const, text }] },
});

test('a new file gets the current schema version, WAL, foreign keys, 2 KiB pages and a 2 MB page cache; data survives close and reopen', async () => {
  const path = folder.file('agent.db');
  const first = await openSqliteStorage(path);
  expect(first.database.pragma('journal_mode', { simple: true })).toBe('wal');
  expect(first.database.pragma('foreign_keys', { simple: true })).toBe(1);
  expect(first.database.pragma('busy_timeout', { simple: true })).toBe(5000);
  // SQLite's own 2 MB page cache, not the 16 MB better-sqlite3 builds it with (a long-running process keeps it).
  expect(first.database.pragma('cache_size', { simple: true })).toBe(-2000);
  // 2 KiB pages: a commit of a small event writes (and a checkpoint syncs) half of what 4 KiB pages would.
  expect(first.database.pragma('page_size', { simple: true })).toBe(2048);
  await first.sessions.saveEvent('kept', event('remember me'));
  await first.memories.save({
    id: 'm1',
    namespace: 'ns',
    content: 'a memory',
    createdAt: new Date(1),
    updatedAt: new Date(2),
  });
  await first.close();
  expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(1);
  expect(pragma(path, 'user_version')).toBe(SCHEMA_VERSION);
  expect(pragma(path, 'journal_mode')).toBe('wal');

  const again = await openSqliteStorage(path, { busyTimeoutMs: 1234 });
  try {
    expect(again.database.pragma('busy_timeout', { simple: true })).toBe(1234);
    expect(await again.sessions.loadSession('kept')).toStrictEqual([event('remember me')]);
    expect((await again.sessions.findSession('remember'))[0]?.sessionId).toBe('kept');
    expect((await again.memories.search('ns', 'memory', 5)).map((memory) => memory.id)).toEqual(['m1']);
  } finally {
    await again.close();
  }
});

test('a file made with 4 KiB pages keeps them: it is migrated, written and read as it is', async () => {
  const path = folder.file('older.db');
  const older = new Database(path);
  older.pragma('page_size = 4096');
  // A first write fixes the page size of the file.
  older.exec('CREATE TABLE kept_by_the_host (x INTEGER)');
  older.close();

  const storage = await openSqliteStorage(path);
  try {
    expect(storage.database.pragma('page_size', { simple: true })).toBe(4096);
    await storage.sessions.saveEvent('old-file', event('written to 4 KiB pages'));
    expect(await storage.sessions.loadSession('old-file')).toStrictEqual([event('written to 4 KiB pages')]);
  } finally {
    await storage.close();
  }
  expect(pragma(path, 'page_size')).toBe(4096);
  expect(pragma(path, 'user_version')).toBe(SCHEMA_VERSION);
});

test('a file of a newer schema version is refused with STORAGE_ERROR, and left as it was', async () => {
  const path = folder.file('future.db');
  const future = new Database(path);
  future.pragma(`user_version = ${SCHEMA_VERSION + 7}`);
  future.exec('CREATE TABLE from_the_future (x)');
  future.close();
  const error = await rejection(openSqliteStorage(path));
  expect(error.code).toBe('STORAGE_ERROR');
  expect(error.message).toContain(`schema version ${SCHEMA_VERSION + 7}`);
  expect(error.message).toContain(`newer than version ${SCHEMA_VERSION}`);
  expect(error.message).toContain('upgrade @youyou/sqlite');
  expect(pragma(path, 'user_version')).toBe(SCHEMA_VERSION + 7);
});

test('migrations run forward from the version a file has, in one transaction, and keep its data', async () => {
  const path = folder.file('steps.db');
  const v1: Migration = (database) => database.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)');
  const v2: Migration = (database) =>
    database.exec("ALTER TABLE notes ADD COLUMN tag TEXT NOT NULL DEFAULT 'none'");
  const v3Broken: Migration = (database) => {
    database.exec('CREATE TABLE half_done (x)');
    throw new Error('migration 3 failed half-way');
  };

  const atOne = await SqliteConnection.open({ path, migrations: [v1] });
  atOne.database.prepare('INSERT INTO notes (text) VALUES (?)').run('written at version 1');
  await atOne.close();
  expect(pragma(path, 'user_version')).toBe(1);

  const atTwo = await SqliteConnection.open({ path, migrations: [v1, v2] });
  expect(atTwo.database.prepare('SELECT text, tag FROM notes').all()).toEqual([
    { text: 'written at version 1', tag: 'none' },
  ]);
  await atTwo.close();
  expect(pragma(path, 'user_version')).toBe(2);

  const error = await rejection(SqliteConnection.open({ path, migrations: [v1, v2, v3Broken] }));
  expect(error.code).toBe('STORAGE_ERROR');
  expect(error.message).toContain('migration 3 failed half-way');
  expect(pragma(path, 'user_version')).toBe(2);
  const check = new Database(path, { readonly: true });
  expect(check.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'half_done'").pluck().get()).toBe(0);
  check.close();
});

test('a read-only open of a file that needs an upgrade is refused; of an up-to-date file it reads', async () => {
  const path = folder.file('readonly.db');
  new Database(path).close();
  const error = await rejection(openSqliteStorage(path, { readonly: true }));
  expect(error.code).toBe('STORAGE_ERROR');
  expect(error.message).toContain('without `readonly`');

  const writable = await openSqliteStorage(path);
  await writable.sessions.saveEvent('s', event('hello'));
  await writable.close();
  const readonly = await openSqliteStorage(path, { readonly: true });
  try {
    expect(await readonly.sessions.loadSession('s')).toStrictEqual([event('hello')]);
  } finally {
    await readonly.close();
  }
});

test('a file that is not a database, a missing folder and bad options are reported clearly', async () => {
  const notDatabase = folder.file('notes.txt');
  await writeFile(notDatabase, 'this is not an SQLite file, just some text that is long enough '.repeat(20));
  const notDb = await rejection(openSqliteStorage(notDatabase));
  expect(notDb.code).toBe('STORAGE_ERROR');
  expect(notDb.message).toMatch(/SQLITE_NOTADB|not a database/);

  const missing = await rejection(openSqliteStorage(folder.file('no/such/folder/agent.db')));
  expect(missing.code).toBe('STORAGE_ERROR');
  expect(missing.message).toContain('no/such/folder/agent.db');

  expect((await rejection(openSqliteStorage(''))).code).toBe('INVALID_CONFIG');
  expect((await rejection(openSqliteStorage(folder.file('x.db'), { busyTimeoutMs: -1 }))).code).toBe(
    'INVALID_CONFIG',
  );
  expect((await rejection(openSqliteStorage(folder.file('x.db'), { busyRetries: 1.5 }))).code).toBe(
    'INVALID_CONFIG',
  );
});
