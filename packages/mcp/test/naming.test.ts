import { describe, expect, test } from 'vitest';
import { prefixedToolNames } from '../src/index.js';

describe('prefixedToolNames', () => {
  test('prefixes the server name and replaces characters model APIs refuse', () => {
    expect(prefixedToolNames('fs', ['read_file', 'dir.list', 'a/b c', 'émoji✓'])).toEqual([
      'fs__read_file',
      'fs__dir_list',
      'fs__a_b_c',
      'fs___moji_',
    ]);
  });

  test('cuts names to 64 characters', () => {
    const [name] = prefixedToolNames('server', ['t'.repeat(100)]);
    expect(name).toBe(`server__${'t'.repeat(56)}`);
    expect(name).toHaveLength(64);
  });

  test('names that come out the same get the lowest free suffix, the first keeps the plain name', () => {
    expect(prefixedToolNames('s', ['a.b', 'a_b', 'a-b', 'a b', 'a_b_2'])).toEqual([
      's__a_b',
      's__a_b_2',
      's__a-b',
      's__a_b_3',
      's__a_b_2_2',
    ]);
  });

  test('a suffix on a cut name keeps it within 64 characters', () => {
    const names = prefixedToolNames('s', [`${'x'.repeat(70)}1`, `${'x'.repeat(70)}2`]);
    expect(names[0]).toBe(`s__${'x'.repeat(61)}`);
    expect(names[1]).toBe(`s__${'x'.repeat(59)}_2`);
    for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });

  test('servers with valid names never produce the same name', () => {
    // A server name has no "__" and does not end in "_", so the first "__" ends it.
    const first = prefixedToolNames('a', ['b__c', '_b_c', 'x']);
    const second = prefixedToolNames('a-b', ['c', '_c']);
    const third = prefixedToolNames('a_b', ['c']);
    const all = [...first, ...second, ...third];
    expect(new Set(all).size).toBe(all.length);
  });
});
