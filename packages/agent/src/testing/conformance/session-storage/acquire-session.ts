import assert from 'node:assert/strict';
import type { SessionStorage } from '../../../ports/storage.js';
import { type ConformanceTest, userEvent } from '../support.js';

/**
 * acquireSession: one holder per session at a time. Claims are optional (storages shared by several
 * processes make them); the test passes at once on a storage without them.
 */
export function acquireSessionTests(test: ConformanceTest<SessionStorage>): void {
  test('acquireSession (when offered): a held session is refused with SESSION_BUSY until it is released', async (storage) => {
    if (storage.acquireSession === undefined) return;
    const claim = await storage.acquireSession('claimed');
    await storage.saveEvent('claimed', userEvent(0, 'written by the holder'));
    await assert.rejects(storage.acquireSession('claimed'), (error: unknown) => {
      assert.equal((error as { code?: unknown }).code, 'SESSION_BUSY');
      return true;
    });
    // Another session is not held by that claim.
    const other = await storage.acquireSession('other');
    await claim.release();
    await claim.release();
    const again = await storage.acquireSession('claimed');
    await storage.saveEvent('claimed', userEvent(1, 'written by the next holder'));
    assert.deepStrictEqual(await storage.loadSession('claimed'), [
      userEvent(0, 'written by the holder'),
      userEvent(1, 'written by the next holder'),
    ]);
    await again.release();
    await other.release();
  });
}
