import assert from 'node:assert/strict';
import type { MemoryStorage } from '../../../ports/storage.js';
import { type ConformanceTest, memory } from '../support.js';

/** save: a memory comes back exactly, and saving the same id again replaces it. */
export function saveTests(test: ConformanceTest<MemoryStorage>): void {
  test('save round-trips a memory and upserts by id', async (storage) => {
    const first = memory('m1', 'Prefers tabs 🙂 用户喜欢绿茶 "quotes" 50% _x_ \\', 5, {
      category: 'preference',
      sourceSessionId: 'session-1',
    });
    await storage.save(first);
    assert.deepStrictEqual(await storage.search('ns', '', Number.POSITIVE_INFINITY), [first]);
    const replaced = memory('m1', 'Prefers spaces', 9);
    await storage.save(replaced);
    assert.deepStrictEqual(await storage.search('ns', '', Number.POSITIVE_INFINITY), [replaced]);
  });
}
