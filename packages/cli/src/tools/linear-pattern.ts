import { RE2JS } from 're2js';

/**
 * Patterns from the model are matched with RE2 (the re2js port): its automaton runs in time linear in the
 * text, so no pattern can make a match backtrack for minutes the way `(a+)+$` does in V8's engine.
 */

/** A compiled pattern whose `test` takes time linear in the text, whatever the pattern. */
export interface LinearPattern {
  /** True when the pattern matches somewhere in `text` (anchors in the pattern still apply). */
  test(text: string): boolean;
}

/**
 * Compiles a regular expression written in JavaScript syntax to RE2. Throws an Error saying what to change
 * when the pattern uses what RE2 cannot match in linear time (lookaround, backreferences) or is invalid.
 */
export function compileLinearRegex(pattern: string, options: { caseInsensitive: boolean }): LinearPattern {
  let translated: string;
  try {
    // Turns JavaScript-only spellings (`(?<name>`, `\u0041`, `\/`) into RE2's.
    translated = RE2JS.translateRegExp(pattern);
  } catch (error) {
    throw new Error(messageOf(error));
  }
  try {
    return RE2JS.compile(translated, options.caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (error) {
    const message = messageOf(error);
    const unsupported = /\(\?[=!<]|\\[1-9]/.test(pattern)
      ? '; lookahead, lookbehind and backreferences are not supported (RE2 syntax, as in ripgrep)'
      : '';
    throw new Error(`${message}${unsupported}`);
  }
}

/** Compiles a regular expression source that must match a whole text (the caller adds no anchors). */
export function compileWholeMatch(source: string): LinearPattern {
  const compiled = RE2JS.compile(source);
  return { test: (text) => compiled.testExact(text) };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
