import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { decodeStoredValue, encodeStoredValue } from '../src/storage/index.js';

/** What a value reads back as after a trip through the codec, with and without the stored flag. */
function roundTrip(value: unknown): unknown {
  const { json, tagged } = encodeStoredValue(value);
  const withFlag = decodeStoredValue(json, tagged);
  expect(decodeStoredValue(json)).toStrictEqual(withFlag);
  return withFlag;
}

/** Any value the codec promises to keep exactly: JSON plus Dates, undefined, special numbers and BigInt. */
const storable = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constantFrom(undefined, null, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0),
    fc.double(),
    fc.bigInt(),
    fc.string({ unit: 'binary' }),
    fc.boolean(),
    fc.date(),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      fc.oneof(fc.string(), fc.constantFrom('$youyou', '__proto__', 'value', 'entries')),
      tie('value'),
      // Stored objects come back with the ordinary prototype, so the generated ones have it too.
      { maxKeys: 4, noNullPrototype: true },
    ),
  ),
})).value;

describe('the tagged-JSON codec', () => {
  test('every storable value reads back exactly', () => {
    fc.assert(
      fc.property(storable, (value) => {
        expect(roundTrip(value)).toStrictEqual(value);
      }),
    );
  });

  test('round-trips what plain JSON loses, -0 and invalid Dates included', () => {
    const value = {
      when: new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 678)),
      invalid: new Date(Number.NaN),
      missing: undefined,
      list: [undefined, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 0, 10n ** 30n],
      nested: { deeper: [{ at: new Date(0) }] },
      text: 'he said "$youyou" \0 \uD800',
    };
    const back = roundTrip(value) as typeof value;
    expect(back).toStrictEqual(value);
    expect(back.when).toBeInstanceOf(Date);
    expect(Number.isNaN(back.invalid.getTime())).toBe(true);
    expect(Object.is(back.list[4], -0)).toBe(true);
  });

  test('plain JSON is written as JSON.stringify writes it, untagged', () => {
    const value = { type: 'user_message', content: [{ type: 'text', text: '$youyou' }], n: [1, 2.5, null] };
    expect(encodeStoredValue(value)).toEqual({ json: JSON.stringify(value), tagged: false });
    expect(encodeStoredValue(new Date(5)).tagged).toBe(true);
  });

  test('values nested deeper than the fast path, shared objects and cycles deep down', () => {
    let deep: unknown = { leaf: 'x', n: [1] };
    for (let depth = 0; depth < 200; depth += 1) deep = depth % 2 === 0 ? [deep] : { inner: deep };
    const encoded = encodeStoredValue(deep);
    expect(JSON.parse(encoded.json)).toEqual(deep);
    expect(decodeStoredValue(encoded.json, encoded.tagged)).toEqual(deep);
    // The same object twice, not a cycle: plain JSON.
    const shared = { a: 1 };
    expect(encodeStoredValue({ x: shared, y: [shared, shared] })).toEqual({
      json: JSON.stringify({ x: shared, y: [shared, shared] }),
      tagged: false,
    });
    const cycle: Record<string, unknown> = {};
    let chain: Record<string, unknown> = { down: cycle };
    for (let depth = 0; depth < 10; depth += 1) chain = { down: chain };
    cycle.back = chain;
    expect(() => encodeStoredValue(chain, 'the event')).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT' }),
    );
  });

  test('an object that has the tag key itself stays user data', () => {
    const value = { $youyou: 'date', ms: 5, inner: { $youyou: 'undefined' }, list: [{ $youyou: 'object' }] };
    const { json, tagged } = encodeStoredValue(value);
    expect(tagged).toBe(true);
    expect(JSON.parse(json)).toEqual({
      $youyou: 'object',
      value: expect.objectContaining({ $youyou: 'date' }),
    });
    expect(decodeStoredValue(json, tagged)).toStrictEqual(value);
  });

  test('a __proto__ key stays a plain key and pollutes nothing', () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}, "$youyou": 1, "when": 1}') as Record<
      string,
      unknown
    >;
    value.when = new Date(1);
    const back = roundTrip(value) as Record<string, unknown>;
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(Object.keys(back)).toEqual(['__proto__', '$youyou', 'when']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(back, '__proto__')?.value).toEqual({ polluted: true });
  });

  test('values without a faithful JSON form are refused with INVALID_INPUT', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const throwing = {
      get field(): unknown {
        throw new Error('no');
      },
    };
    let deep: unknown = new Date(0);
    for (let depth = 0; depth < 100_000; depth += 1) deep = [deep];
    for (const bad of [
      cycle,
      { f: () => 1 },
      { s: Symbol('x') },
      { m: new Map() },
      { s: new Set() },
      { e: new Error('x') },
      { b: new Uint8Array(2) },
      { p: Promise.resolve() },
      throwing,
      deep,
    ]) {
      expect(() => encodeStoredValue(bad, 'the event')).toThrow(
        expect.objectContaining({ code: 'INVALID_INPUT', sourceComponent: 'storage' }),
      );
    }
  });

  test('objects with toJSON are stored as their JSON form', () => {
    const value = { at: { toJSON: () => ({ kind: 'point', x: Number.NaN }) } };
    expect(roundTrip(value)).toStrictEqual({ at: { kind: 'point', x: Number.NaN } });
  });
});

describe('the forms older adapters wrote', () => {
  const original = {
    kept: { $youyou: 'date', ms: 7, when: new Date(9), ['__proto__']: 1 },
    note: 'x',
  };

  test("reads the SQLite adapter's `value` wrapper", () => {
    const json =
      '{"kept":{"$youyou":"object","value":{"$youyou":"date","ms":7,"when":{"$youyou":"date","ms":9},"__proto__":1}},"note":"x"}';
    expect(decodeStoredValue(json, true)).toStrictEqual(original);
    expect(decodeStoredValue(json)).toStrictEqual(original);
  });

  test("reads the PostgreSQL adapter's `entries` wrapper", () => {
    const json =
      '{"kept":{"$youyou":"object","entries":[["$youyou","date"],["ms",7],["when",{"$youyou":"date","ms":9}],["__proto__",1]]},"note":"x"}';
    const back = decodeStoredValue(json) as typeof original;
    expect(back).toStrictEqual(original);
    expect(Object.getPrototypeOf(back.kept)).toBe(Object.prototype);
    expect(Object.hasOwn(back.kept, '__proto__')).toBe(true);
  });

  test('writes only the `value` wrapper', () => {
    const { json } = encodeStoredValue({ $youyou: 1 });
    expect(JSON.parse(json)).toEqual({ $youyou: 'object', value: { $youyou: 1 } });
  });

  test('a tag it does not know, or a malformed one, stays a plain object', () => {
    for (const json of [
      '{"$youyou":"map","data":[1]}',
      '{"$youyou":"bigint","value":"12x"}',
      '{"$youyou":"number","value":"7"}',
      '{"$youyou":"object","entries":[["a"]]}',
      '{"$youyou":"object"}',
    ]) {
      expect(decodeStoredValue(json)).toStrictEqual(JSON.parse(json));
    }
  });
});
