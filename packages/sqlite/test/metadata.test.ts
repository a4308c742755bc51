import type { SessionEvent } from '@youyou/agent';
import { afterEach, beforeEach, expect, test } from 'vitest';
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

function userEvent(text: string): SessionEvent {
  return { timestamp: new Date(), payload: { type: 'user_message', content: [{ type: 'text', text }] } };
}

test('metadataOf gives the last value of a metadata key per session, without the sessions lacking it', async () => {
  const metadata = (value: unknown): SessionEvent => ({
    timestamp: new Date(),
    payload: { type: 'metadata', key: 'workspace', value },
  });
  await storage.sessions.saveEvent('a', metadata('/one'));
  await storage.sessions.saveEvent('a', userEvent('hello'));
  await storage.sessions.saveEvent('a', metadata('/two'));
  await storage.sessions.saveEvent('b', userEvent('no metadata'));

  const values = await storage.sessions.metadataOf(['a', 'b', 'unknown'], 'workspace');
  expect([...values]).toEqual([['a', '/two']]);
});

test('metadataOf refuses bad arguments with INVALID_INPUT', async () => {
  await expect(storage.sessions.metadataOf(['a'], '')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
  await expect(storage.sessions.metadataOf('a' as unknown as string[], 'workspace')).rejects.toMatchObject({
    code: 'INVALID_INPUT',
  });
});
