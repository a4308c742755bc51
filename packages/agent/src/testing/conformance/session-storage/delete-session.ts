import assert from 'node:assert/strict';
import type { SessionStorage } from '../../../ports/storage.js';
import { type ConformanceTest, findIds, listAll, userEvent } from '../support.js';

/** deleteSession (and loadSession of an id never saved): a deleted session is gone from every read. */
export function deleteSessionTests(test: ConformanceTest<SessionStorage>): void {
  test('an unknown id loads as null and deletes without error', async (storage) => {
    assert.equal(await storage.loadSession('missing'), null);
    await storage.deleteSession('missing');
    assert.deepStrictEqual(await storage.listSessions(undefined, 10), { sessions: [], nextCursor: null });
  });

  test('deleteSession removes the session from load, list and find', async (storage) => {
    await storage.saveEvent('keep', userEvent(0, 'keep me'));
    await storage.saveEvent('drop', userEvent(1, 'drop me'));
    await storage.deleteSession('drop');
    assert.equal(await storage.loadSession('drop'), null);
    assert.deepStrictEqual(await findIds(storage, 'drop'), []);
    assert.deepStrictEqual((await listAll(storage, 10)).ids, ['keep']);
    assert.equal((await storage.loadSession('keep'))?.length, 1);
    await storage.saveEvent('drop', userEvent(5, 'again'));
    assert.deepStrictEqual(await storage.loadSession('drop'), [userEvent(5, 'again')]);
  });
}
