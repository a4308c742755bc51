import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isAgentError } from '../src/kernel/error.js';
import { copyOf } from '../src/storage/copy.js';

describe('copyOf (the in-memory storages’ defensive copy)', () => {
  const value = fc.letrec((tie) => ({
    node: fc.oneof(
      { depthSize: 'small' },
      fc.jsonValue(),
      fc.date({ noInvalidDate: true }),
      fc.array(tie('node'), { maxLength: 4 }),
      fc.dictionary(fc.string({ maxLength: 6 }), tie('node'), { maxKeys: 4 }),
    ),
  })).node;

  it('gives what structuredClone gives for plain data, never the same object', () => {
    fc.assert(
      fc.property(value, (input) => {
        const copy = copyOf(input, 'the value');
        expect(copy).toStrictEqual(structuredClone(input));
        if (typeof input === 'object' && input !== null) expect(copy).not.toBe(input);
      }),
    );
  });

  it('copies a cycle, a Map and a class instance the way structuredClone does', () => {
    const cyclic: { self?: unknown; map?: Map<number, string> } = { map: new Map([[1, 'a']]) };
    cyclic.self = cyclic;
    const copy = copyOf(cyclic, 'the value');
    expect(copy.self).toBe(copy);
    expect(copy.map).toEqual(new Map([[1, 'a']]));
    expect(copy.map).not.toBe(cyclic.map);
  });

  it('refuses a function as INVALID_INPUT', () => {
    try {
      copyOf({ run: () => 1 }, 'the value');
      expect.unreachable();
    } catch (error) {
      expect(isAgentError(error) && error.code).toBe('INVALID_INPUT');
    }
  });
});
