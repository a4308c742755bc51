import { describe, expect, it } from 'vitest';
import { neutralize, neutralizeLine } from '../src/text/terminal-text.js';

describe('neutralize', () => {
  it('shows ESC, CSI and OSC sequences escaped so a terminal cannot interpret them', () => {
    const hostile = 'rm -rf ~\x1b[2K\rls -la \x1b]0;title\x07 \x1b]52;c;Zm9v\x1b\\ \x9b31m';
    const shown = neutralize(hostile);
    const controls = [...shown].filter((c) => c !== '\n' && c !== '\t' && /\p{Cc}/u.test(c));
    expect(controls).toEqual([]);
    expect(shown).toContain('rm -rf ~');
    expect(shown).toContain('\\e[2K\\r');
  });

  it('escapes NUL, C1 controls and bidi overrides and isolates', () => {
    const shown = neutralize('a\0b\x85c\u202ed\u2066e\u2069f');
    expect(shown).toBe('a\\0b\\x85c\\u202ed\\u2066e\\u2069f');
  });

  it('keeps line feeds and tabs in multi-line text and escapes them on one line', () => {
    expect(neutralize('a\n\tb')).toBe('a\n\tb');
    expect(neutralizeLine('a\n\tb')).toBe('a\\n\\tb');
  });

  it('passes printable text, wide characters and emoji through unchanged', () => {
    const text = 'héllo 世界 👍 e\u0301';
    expect(neutralize(text)).toBe(text);
  });
});
