import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  decodeText,
  encodeText,
  parseTagged,
  REPLACEMENT,
  searchForm,
  sortKey,
  stringifyTagged,
} from '../src/codec.js';

const fullString = fc.string({ unit: 'binary', maxLength: 40 });

/** True when the string has no unpaired surrogate (String#isWellFormed is newer than the lib we compile for). */
function isWellFormed(text: string): boolean {
  return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}

describe('encodeText', () => {
  test('leaves ordinary text alone and round-trips every JavaScript string', () => {
    expect(encodeText('plain \\ "text" 😀')).toBe('plain \\ "text" 😀');
    fc.assert(
      fc.property(fullString, (text) => {
        const stored = encodeText(text);
        expect(stored).not.toMatch(/\0/);
        expect(isWellFormed(stored)).toBe(true);
        expect(decodeText(stored)).toBe(text);
      }),
    );
  });

  test('escapes NUL, the escape character and unpaired surrogates', () => {
    for (const text of ['\0', '\uFFFF', '\uFFFF0', 'a\uD800b', '\uDC00', '\uFFFFu0000', 'x\0\uFFFF\uD83D']) {
      expect(decodeText(encodeText(text))).toBe(text);
    }
  });
});

describe('searchForm', () => {
  test('keeps the length, lower-cases, and turns NUL and unpaired surrogates into U+FFFD', () => {
    expect(searchForm('A\0B\uD800')).toBe(`a${REPLACEMENT}b${REPLACEMENT}`);
    fc.assert(
      fc.property(fullString, (text) => {
        const form = searchForm(text);
        expect(form.length).toBe(text.toLowerCase().length);
        expect(isWellFormed(form) && !form.includes('\0')).toBe(true);
      }),
    );
  });

  test('a needle without U+FFFD matches the search form exactly where it matches the text', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 30 }),
        fc.string({ unit: 'binary', maxLength: 4 }),
        (text, raw) => {
          const needle = raw.toLowerCase();
          fc.pre(needle !== '' && !searchForm(needle).includes(REPLACEMENT));
          expect(searchForm(text).includes(searchForm(needle))).toBe(text.toLowerCase().includes(needle));
        },
      ),
    );
  });
});

test('sortKey orders exactly as JavaScript compares strings', () => {
  fc.assert(
    fc.property(fullString, fullString, (a, b) => {
      const expected = a < b ? -1 : a > b ? 1 : 0;
      expect(Math.sign(Buffer.compare(sortKey(a), sortKey(b)))).toBe(expected);
    }),
  );
  // Code-point order (PostgreSQL's "C" collation) would put the emoji after U+FFFD.
  expect(Buffer.compare(sortKey('😀'), sortKey('\uFFFD'))).toBe(-1);
});

describe('tagged JSON', () => {
  test('round-trips what plain JSON loses', () => {
    const value = {
      when: new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 678)),
      invalid: new Date(Number.NaN),
      missing: undefined,
      list: [undefined, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 0, 10n ** 30n],
      nested: { deeper: [{ at: new Date(0) }] },
      text: 'he said "$youyou" \0 \uD800',
    };
    expect(parseTagged(stringifyTagged(value))).toStrictEqual(value);
    const back = parseTagged(stringifyTagged({ zero: -0 })) as { zero: number };
    expect(Object.is(back.zero, -0)).toBe(true);
  });

  test('an object that has the tag key itself stays user data', () => {
    const value = { $youyou: 'date', ms: 5, inner: { $youyou: 'undefined' }, list: [{ $youyou: 'object' }] };
    expect(parseTagged(stringifyTagged(value))).toStrictEqual(value);
  });

  test('a __proto__ key stays a plain key', () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}, "$youyou": 1, "when": 1}') as Record<
      string,
      unknown
    >;
    value.when = new Date(1);
    const back = parseTagged(stringifyTagged(value)) as Record<string, unknown>;
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(Object.keys(back)).toEqual(['__proto__', '$youyou', 'when']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(back, '__proto__')?.value).toEqual({ polluted: true });
  });

  test('values without a JSON form are refused with INVALID_INPUT', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => stringifyTagged(cycle)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    for (const bad of [
      { f: () => 1 },
      { s: Symbol('x') },
      { m: new Map() },
      { s: new Set() },
      { b: new Uint8Array(2) },
    ]) {
      expect(() => stringifyTagged(bad)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
    }
  });
});
