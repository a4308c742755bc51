import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isAgentError } from '../src/kernel/error.js';
import { copyOf, lastCopyHoldsObjectsOnly } from '../src/storage/copy.js';

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

  it('leaves a value that shares objects exponentially often to structuredClone, which keeps the sharing', () => {
    // 60 levels of diamonds: 2^60 paths from the top, 61 objects.
    let node: { a?: unknown; b?: unknown; leaf?: string } = { leaf: 'bottom' };
    for (let level = 0; level < 60; level++) node = { a: node, b: node };
    const copy = copyOf(node, 'the value');
    // Identity checks only: any deep comparison of these values walks every path.
    expect(copy === node).toBe(false);
    expect(copy.a === copy.b).toBe(true);
    // Down the chain: the leaf is there, copied.
    let bottom: { a?: unknown; leaf?: string } = copy;
    for (let level = 0; level < 60; level++) bottom = bottom.a as typeof bottom;
    expect(bottom).toEqual({ leaf: 'bottom' });
  });

  it('refuses a function as INVALID_INPUT', () => {
    try {
      copyOf({ run: () => 1 }, 'the value');
      expect.unreachable();
    } catch (error) {
      expect(isAgentError(error) && error.code).toBe('INVALID_INPUT');
    }
  });

  it('tells whether a copy holds objects alone, even when a getter made another copy meanwhile', () => {
    copyOf({ a: { b: 1 } }, 'the value');
    expect(lastCopyHoldsObjectsOnly()).toBe(true);
    copyOf({ a: [1] }, 'the value');
    expect(lastCopyHoldsObjectsOnly()).toBe(false);
    copyOf({ at: new Date(0) }, 'the value');
    expect(lastCopyHoldsObjectsOnly()).toBe(false);

    // The outer value holds objects alone; its getter copies an array in the middle of the outer copy.
    const objectsOutside = {
      get inner() {
        copyOf({ list: [1, 2] }, 'the inner value');
        return { n: 1 };
      },
    };
    const copied = copyOf(objectsOutside, 'the value');
    expect(lastCopyHoldsObjectsOnly()).toBe(true);
    expect(copied).toEqual({ inner: { n: 1 } });

    // The other way round: an array outside, a copy of objects alone inside.
    const arrayOutside = {
      list: [0],
      get inner() {
        copyOf({ n: 1 }, 'the inner value');
        return 'x';
      },
    };
    copyOf(arrayOutside, 'the value');
    expect(lastCopyHoldsObjectsOnly()).toBe(false);
  });
});
