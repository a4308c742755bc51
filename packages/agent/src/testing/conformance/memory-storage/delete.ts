import assert from 'node:assert/strict';
import type { MemoryStorage } from '../../../ports/storage.js';
import { type ConformanceTest, memory, searchIds } from '../support.js';

/** delete: the memory is gone; an id never saved is no error. */
export function deleteTests(test: ConformanceTest<MemoryStorage>): void {
  test('delete removes a memory; an unknown id is not an error', async (storage) => {
    await storage.save(memory('m1', 'one', 1));
    await storage.save(memory('m2', 'two', 2));
    await storage.delete('m1');
    await storage.delete('missing');
    assert.deepStrictEqual(await searchIds(storage, 'ns', '', 10), ['m2']);
  });
}
