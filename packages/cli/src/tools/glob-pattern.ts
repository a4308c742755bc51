import { compileWholeMatch, type LinearPattern } from './linear-pattern.js';

/**
 * A small glob matcher for the glob and grep tools (Node 20 has no stable fs.glob): `**` as a whole segment
 * matches any number of folders, `*` and `?` match within one segment, `[abc]`/`[!abc]` match one character
 * of a class and `{a,b}` matches either branch (branches may nest and hold globs of their own). The glob
 * becomes a regular expression run by RE2, not by V8: `*a*a*a*a*a*a*b` makes a backtracking engine try
 * every way to split a long name (30 s for one walk), RE2 looks at each character once.
 */

/** Characters that make a segment a pattern rather than a literal name. */
const MAGIC = /[*?[{]/;

/** Compiles a glob, relative and written with `/`, to a matcher of whole `/`-separated paths. Throws on bad syntax. */
export function compileGlob(pattern: string): LinearPattern {
  return compileWholeMatch(globToRegexSource(pattern));
}

/** The regular expression (RE2 syntax, unanchored: the caller matches whole paths) that a glob stands for. */
export function globToRegexSource(pattern: string): string {
  let source = '';
  let braceDepth = 0;
  let index = 0;
  while (index < pattern.length) {
    const char = pattern[index] as string;
    if (char === '*') {
      const isDouble = pattern[index + 1] === '*';
      const startsSegment = index === 0 || pattern[index - 1] === '/';
      const afterStars = pattern[index + 2];
      if (isDouble && startsSegment && (afterStars === undefined || afterStars === '/')) {
        if (afterStars === '/') {
          // `**/` matches zero or more whole folders.
          source += '(?:[^/]*/)*';
          index += 3;
        } else {
          source += '.*';
          index += 2;
        }
        continue;
      }
      // A `**` inside a segment means no more than `*`.
      while (pattern[index] === '*') index += 1;
      source += '[^/]*';
      continue;
    }
    if (char === '?') {
      source += '[^/]';
    } else if (char === '[') {
      const end = pattern.indexOf(']', index + 2);
      if (end === -1) {
        source += '\\[';
      } else {
        let body = pattern.slice(index + 1, end);
        const negated = body.startsWith('!') || body.startsWith('^');
        if (negated) body = body.slice(1);
        source += `[${negated ? '^/' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`;
        index = end;
      }
    } else if (char === '{') {
      braceDepth += 1;
      source += '(?:';
    } else if (char === ',' && braceDepth > 0) {
      source += '|';
    } else if (char === '}' && braceDepth > 0) {
      braceDepth -= 1;
      source += ')';
    } else if (char === '\\' && index + 1 < pattern.length) {
      index += 1;
      source += escapeRegExp(pattern[index] as string);
    } else {
      source += escapeRegExp(char);
    }
    index += 1;
  }
  if (braceDepth > 0) throw new Error(`glob '${pattern}' has an unclosed '{'`);
  return source;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/**
 * The leading segments of a glob that hold no pattern characters, and the rest: a walk can start at the
 * prefix folder instead of the top, and a prefix may name a folder the walk would otherwise skip.
 */
export function splitStaticPrefix(pattern: string): { prefix: string; rest: string } {
  const segments = pattern.split('/');
  let count = 0;
  // The last segment names the entries to match, so it never becomes part of the folder to walk.
  while (count < segments.length - 1 && !MAGIC.test(segments[count] as string)) count += 1;
  return { prefix: segments.slice(0, count).join('/'), rest: segments.slice(count).join('/') };
}
