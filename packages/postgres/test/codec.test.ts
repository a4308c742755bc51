import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { decodeText, encodeText, REPLACEMENT, searchForm, sortKey } from '../src/codec.js';

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
