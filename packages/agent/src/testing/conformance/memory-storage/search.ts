import assert from 'node:assert/strict';
import type { MemoryStorage } from '../../../ports/storage.js';
import { at, type ConformanceTest, memory, searchIds } from '../support.js';

/** search: one namespace at a time, ranked by matched words then recency, cut at the limit. */
export function searchTests(test: ConformanceTest<MemoryStorage>): void {
  test('namespaces are isolated', async (storage) => {
    await storage.save(memory('a1', 'shared word', 1, { namespace: 'a' }));
    await storage.save(memory('b1', 'shared word', 2, { namespace: 'b' }));
    assert.deepStrictEqual(await searchIds(storage, 'a', '', 10), ['a1']);
    assert.deepStrictEqual(await searchIds(storage, 'b', 'shared', 10), ['b1']);
    assert.deepStrictEqual(await searchIds(storage, 'c', '', Number.POSITIVE_INFINITY), []);
  });

  test("search '' lists most recently updated first", async (storage) => {
    const updated = [30, 10, 50, 20, 40];
    for (const [index, updatedMs] of updated.entries()) {
      // createdAt runs the other way, so ordering by it would fail.
      await storage.save(memory(`m${index}`, `memory ${index}`, updatedMs, { createdAt: at(-updatedMs) }));
    }
    assert.deepStrictEqual(await searchIds(storage, 'ns', '', 10), ['m2', 'm4', 'm0', 'm3', 'm1']);
  });

  test('search by words ranks more matched words first, then most recent', async (storage) => {
    await storage.save(memory('both', 'The user writes TypeScript and wants tests', 10));
    await storage.save(memory('none', 'Prefers tabs', 50));
    await storage.save(memory('tests', 'Runs tests nightly', 30));
    await storage.save(memory('three', 'typescript strict mode, tests and coverage reports', 0));
    await storage.save(memory('ts', 'TypeScript only', 20));
    await storage.save(memory('cafe', 'Likes café au lait', 5));
    await storage.save(memory('cafeteria', 'Eats at the cafeteria', 6));
    await storage.save(memory('tea', '用户喜欢绿茶', 7));
    const query = (text: string) => searchIds(storage, 'ns', text, 10);
    assert.deepStrictEqual(await query('TypeScript tests coverage'), ['three', 'both', 'tests', 'ts']);
    assert.deepStrictEqual(await query('typescript, TESTS!'), ['both', 'three', 'tests', 'ts']);
    assert.deepStrictEqual(await query('café?'), ['cafe'], 'words are split Unicode-aware');
    assert.deepStrictEqual(await query('绿茶'), ['tea'], 'a word is found inside unspaced text');
    assert.deepStrictEqual(await query('nothing matches'), []);
  });

  test('search respects limit; Infinity returns the whole namespace', async (storage) => {
    for (let index = 0; index < 6; index += 1)
      await storage.save(memory(`m${index}`, `note ${index}`, index));
    await storage.save(memory('other', 'note elsewhere', 99, { namespace: 'other' }));
    assert.deepStrictEqual(await searchIds(storage, 'ns', '', 2), ['m5', 'm4']);
    assert.deepStrictEqual(await searchIds(storage, 'ns', 'note', 1), ['m5']);
    assert.deepStrictEqual(await searchIds(storage, 'ns', '', 0), []);
    assert.deepStrictEqual(await searchIds(storage, 'ns', '', Number.POSITIVE_INFINITY), [
      'm5',
      'm4',
      'm3',
      'm2',
      'm1',
      'm0',
    ]);
    assert.equal((await storage.search('ns', 'note', Number.POSITIVE_INFINITY)).length, 6);
  });
}
