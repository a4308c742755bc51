import type { SessionEvent } from '@youyou/agent';
import { afterEach, beforeEach, expect, test, vi } from 'vitest';
import { openSqliteStorage, type SqliteStorage } from '../src/index.js';
import { makeTempFolder, type TempFolder } from './support/temp-folder.js';

let folder: TempFolder;
let storage: SqliteStorage;

beforeEach(async () => {
  folder = await makeTempFolder();
  storage = await openSqliteStorage(folder.file('agent.db'));
});

afterEach(async () => {
  await storage.close();
  await folder.remove();
});

const message = (offsetMs: number, text: string): SessionEvent => ({
  timestamp: new Date(Date.UTC(2024, 0, 1) + offsetMs),
  payload: { type: 'user_message', content: [{ type: 'text', text }] },
});

const ids = async (target: SqliteStorage, query: string) =>
  (await target.sessions.findSession(query)).map((summary) => summary.sessionId);

/** How many events wait for the indexer, over all sessions. */
function unindexed(target: SqliteStorage): number {
  return target.database
    .prepare('SELECT total(event_count - indexed_seq) FROM session_activity')
    .pluck()
    .get() as number;
}

function ftsHits(target: SqliteStorage, phrase: string): number[] {
  return target.database
    .prepare('SELECT rowid FROM search_texts_fts WHERE search_texts_fts MATCH ? ORDER BY rowid')
    .pluck()
    .all(`"${phrase}"`) as number[];
}

test('new messages are indexed by themselves shortly after they are saved', async () => {
  for (let index = 0; index < 250; index += 1) {
    await storage.sessions.saveEvent(`s${index % 7}`, message(index, `message number ${index} about kiwis`));
  }
  expect(unindexed(storage)).toBeGreaterThan(0);
  // The indexer works in batches on an idle timer; poll for its result rather than guess a delay.
  await vi.waitFor(() => expect(unindexed(storage)).toBe(0), { timeout: 10_000, interval: 20 });
  expect(ftsHits(storage, 'kiwis')).toHaveLength(250);
  expect(await storage.sessions.flushSearchIndex()).toBe(0);
  expect(await ids(storage, 'number 249 about')).toEqual(['s4']);
});

test('a session that gets the row key of a deleted one is indexed and found, and nothing of the old one', async () => {
  await storage.sessions.saveEvent('old', message(0, 'an old message'));
  await storage.sessions.saveEvent('newest', message(1, 'the newest message'));
  await storage.sessions.flushSearchIndex();
  const keyOf = (sessionId: string) =>
    storage.database.prepare('SELECT id FROM sessions WHERE session_id = ?').pluck().get(sessionId);
  const deletedKey = keyOf('newest');
  await storage.sessions.deleteSession('newest');
  await storage.sessions.saveEvent('reborn', message(2, 'zebra crossing'));
  // SQLite gives the largest key again once its row is gone.
  expect(keyOf('reborn')).toBe(deletedKey);
  expect(ftsHits(storage, 'newest')).toEqual([]);
  for (let round = 0; round < 2; round += 1) {
    expect(await ids(storage, 'zebra')).toEqual(['reborn']);
    expect(await ids(storage, 'newest')).toEqual([]);
    expect(await ids(storage, 'message')).toEqual(['old']);
    if (round === 0) expect(await storage.sessions.flushSearchIndex()).toBe(1);
  }
  expect(ftsHits(storage, 'zebra')).toHaveLength(1);
});

test("another connection's unindexed messages are found; a read-only connection never indexes", async () => {
  const path = folder.file('agent.db');
  await storage.sessions.saveEvent('mine', message(0, 'written by the first connection'));
  await storage.sessions.flushSearchIndex();
  const other = await openSqliteStorage(path);
  const reader = await openSqliteStorage(path, { readonly: true });
  try {
    await other.sessions.saveEvents('theirs', [message(1, 'written by the second connection')]);
    expect(await ids(storage, 'second connection')).toEqual(['theirs']);
    expect(await ids(reader, 'connection')).toEqual(['theirs', 'mine']);
    await expect(reader.sessions.flushSearchIndex()).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
    expect(await storage.sessions.flushSearchIndex()).toBe(1);
    expect(await ids(reader, 'second connection')).toEqual(['theirs']);
  } finally {
    await other.close();
    await reader.close();
  }
});
