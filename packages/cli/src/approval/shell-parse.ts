/**
 * What programs a shell command line runs, for deny rules. The text is cut into tokens as a POSIX shell
 * would (quotes, backslashes, comments, here-documents, `$(…)`), the tokens into simple commands at every
 * operator (`;` `&` `|` `&&` `||` `(` `)` line breaks), and each simple command, after its assignments and
 * redirections, into the program it runs. Programs that run another program are looked through: `env`,
 * `sudo`, `nice`, `xargs`, `find -exec`, `sh -c '…'` and the others of `WRAPPERS`, and `git`'s global options
 * before its subcommand are dropped. Whatever cannot be known from the text alone (a program named by a
 * variable, backticks, `eval` of a variable, a shell reading its commands from a pipe, an option of a wrapper
 * this file does not know) makes the whole parse uncertain, with the reason.
 */

import { lookThrough } from './shell-wrappers.js';
import type { Word } from './wrapper-options.js';

type Token = { type: 'word'; word: Word } | { type: 'operator'; text: string };

/** Every program invocation found, as normalized words (program by its base name), and why it is uncertain. */
export interface ShellParse {
  invocations: string[][];
  uncertain: string | undefined;
}

const MAX_DEPTH = 8;

/** Parses a command line; never throws. */
export function parseShell(command: string): ShellParse {
  const result: ShellParse = { invocations: [], uncertain: undefined };
  parseInto(command, result, 0);
  return result;
}

function markUncertain(result: ShellParse, why: string): void {
  result.uncertain ??= why;
}

function parseInto(command: string, result: ShellParse, depth: number): void {
  if (depth > MAX_DEPTH) {
    markUncertain(result, 'commands nested too deep');
    return;
  }
  const tokens = tokenize(command, result, depth);
  let segment: Word[] = [];
  let redirectTarget = false;
  for (const token of tokens) {
    if (token.type === 'operator') {
      if (isRedirection(token.text)) {
        redirectTarget = true;
        continue;
      }
      redirectTarget = false;
      commandOf(segment, result, depth);
      segment = [];
      continue;
    }
    if (redirectTarget) {
      redirectTarget = false;
      continue;
    }
    segment.push(token.word);
  }
  commandOf(segment, result, depth);
}

const REDIRECTIONS = new Set(['<', '>', '>>', '<<', '<<-', '<<<', '<&', '>&', '&>', '&>>', '<>', '>|']);

function isRedirection(operator: string): boolean {
  return REDIRECTIONS.has(operator);
}

const OPERATOR_START = new Set([';', '&', '|', '<', '>', '(', ')', '\n']);
const OPERATORS = [
  '&>>',
  '<<<',
  '<<-',
  ';;&',
  '&&',
  '||',
  ';;',
  ';&',
  '|&',
  '>>',
  '<<',
  '<&',
  '>&',
  '&>',
  '<>',
  '>|',
];

/** A here-document opened on the current line: its body starts after the line break. */
interface Heredoc {
  delimiter: string;
  strip: boolean;
  quoted: boolean;
}

/** The word being read, and the tokens read so far. */
class Tokens {
  readonly list: Token[] = [];
  text = '';
  expanded = false;
  inWord = false;
  /** An unquoted `*`, `?`, `[` or `{` was seen: whether it expands is decided when the word ends. */
  globby = false;

  add(text: string, expanded = false): void {
    this.text += text;
    this.expanded ||= expanded;
    this.inWord = true;
  }

  /** Ends the word: a glob (`*`, `?`, `[…]`) or a brace expansion (`{a,b}`, `{1..3}`) makes it expanded. */
  end(): void {
    if (this.inWord) {
      const glob = this.globby && /[*?]|\[.*\]|\{[^}]*(,|\.\.)[^}]*\}/.test(this.text);
      this.list.push({ type: 'word', word: { text: this.text, expanded: this.expanded || glob } });
    }
    this.text = '';
    this.expanded = false;
    this.inWord = false;
    this.globby = false;
  }
}

/** Splits the text into words and operators; substitutions inside are parsed into `result` as they are met. */
function tokenize(command: string, result: ShellParse, depth: number): Token[] {
  const tokens = new Tokens();
  const heredocs: Heredoc[] = [];
  let index = 0;
  while (index < command.length) {
    const character = command[index] ?? '';
    if (character === '\\') {
      const next = command[index + 1];
      index += 2;
      if (next !== '\n' && next !== undefined) tokens.add(next);
    } else if (character === "'") {
      const end = command.indexOf("'", index + 1);
      if (end < 0) break;
      tokens.add(command.slice(index + 1, end));
      index = end + 1;
    } else if (character === '"') {
      const quoted = doubleQuoted(command, index + 1, result, depth);
      if (quoted === undefined) break;
      tokens.add(quoted.text, quoted.expanded);
      index = quoted.next;
    } else if (character === '$' || character === '`') {
      const next = expansion(command, index, result, depth);
      tokens.add(command.slice(index, next), true);
      index = next;
    } else if (character === '#' && !tokens.inWord) {
      const end = command.indexOf('\n', index);
      index = end < 0 ? command.length : end;
    } else if (character === ' ' || character === '\t' || character === '\r') {
      tokens.end();
      index += 1;
    } else if (OPERATOR_START.has(character)) {
      index = operator(command, index, tokens, heredocs, result);
    } else {
      if ('*?[{'.includes(character)) tokens.globby = true;
      tokens.add(character);
      index += 1;
    }
  }
  if (index < command.length) markUncertain(result, 'an unbalanced quote');
  tokens.end();
  if (heredocs.length > 0) markUncertain(result, 'a here-document without its body');
  return tokens.list;
}

/** Reads the operator at `index` (and the here-document bodies after a line break); returns where to go on. */
function operator(
  command: string,
  index: number,
  tokens: Tokens,
  heredocs: Heredoc[],
  result: ShellParse,
): number {
  const character = command[index] ?? '';
  // A word of digits right before a redirection is its file descriptor (`2>&1`), not an argument.
  if (/^[0-9]+$/.test(tokens.text) && !tokens.expanded && (character === '<' || character === '>')) {
    tokens.text = '';
    tokens.inWord = false;
  }
  tokens.end();
  const text = OPERATORS.find((candidate) => command.startsWith(candidate, index)) ?? character;
  tokens.list.push({ type: 'operator', text });
  const next = index + text.length;
  if (text === '<<' || text === '<<-') {
    const delimiter = heredocDelimiter(command, next);
    if (delimiter !== undefined) heredocs.push({ ...delimiter.value, strip: text === '<<-' });
  }
  if (text === '\n' && heredocs.length > 0) return skipHeredocs(command, next, heredocs.splice(0), result);
  return next;
}

/** A double-quoted part from `start` (after the quote): its text and where it ends, or undefined if unclosed. */
function doubleQuoted(
  command: string,
  start: number,
  result: ShellParse,
  depth: number,
): { text: string; expanded: boolean; next: number } | undefined {
  let text = '';
  let expanded = false;
  let index = start;
  while (index < command.length) {
    const character = command[index] ?? '';
    if (character === '"') return { text, expanded, next: index + 1 };
    if (character === '\\') {
      const next = command[index + 1] ?? '';
      if ('$`"\\\n'.includes(next)) {
        if (next !== '\n') text += next;
      } else text += `\\${next}`;
      index += 2;
      continue;
    }
    if (character === '$' || character === '`') {
      const next = expansion(command, index, result, depth);
      expanded = true;
      text += command.slice(index, next);
      index = next;
      continue;
    }
    text += character;
    index += 1;
  }
  return undefined;
}

/**
 * An expansion at `index` (`$name`, `${…}`, `$(…)`, `$((…))`, `` `…` ``, `$'…'`): where it ends. The commands
 * of a `$(…)` are parsed into `result`; backticks and ANSI-C quotes make the parse uncertain.
 */
function expansion(command: string, index: number, result: ShellParse, depth: number): number {
  if (command[index] === '`') {
    markUncertain(result, 'backticks');
    const end = command.indexOf('`', index + 1);
    return end < 0 ? command.length : end + 1;
  }
  const next = command[index + 1] ?? '';
  if (next === '(') {
    const end = closingParenthesis(command, index + 2);
    if (end === undefined) {
      markUncertain(result, 'an unclosed $(');
      return command.length;
    }
    const inner = command.slice(index + 2, end);
    // `$((…))` is arithmetic; it can still hold `$(…)`, which the parse of its text finds.
    parseInto(inner.startsWith('(') && inner.endsWith(')') ? inner.slice(1, -1) : inner, result, depth + 1);
    return end + 1;
  }
  if (next === '{') {
    const end = command.indexOf('}', index + 2);
    if (command.slice(index, end).includes('$(') || command.slice(index, end).includes('`')) {
      markUncertain(result, 'a substitution inside a parameter expansion');
    }
    return end < 0 ? command.length : end + 1;
  }
  if (next === "'") {
    markUncertain(result, "an ANSI-C quote ($'…')");
    const end = command.indexOf("'", index + 2);
    return end < 0 ? command.length : end + 1;
  }
  const name = /^([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])/.exec(command.slice(index + 1));
  return index + 1 + (name?.[0].length ?? 0);
}

/** The index of the `)` that closes a `(` opened just before `start`, skipping quotes; undefined if none. */
function closingParenthesis(command: string, start: number): number | undefined {
  let depth = 1;
  let index = start;
  while (index < command.length) {
    const character = command[index] ?? '';
    if (character === '\\') index += 2;
    else if (character === "'") {
      const end = command.indexOf("'", index + 1);
      if (end < 0) return undefined;
      index = end + 1;
    } else if (character === '"') {
      const end = doubleQuoted(command, index + 1, { invocations: [], uncertain: undefined }, MAX_DEPTH);
      if (end === undefined) return undefined;
      index = end.next;
    } else {
      if (character === '(') depth += 1;
      if (character === ')') depth -= 1;
      if (depth === 0) return index;
      index += 1;
    }
  }
  return undefined;
}

/** The delimiter word after `<<`: its text, and whether it was quoted (then the body is not expanded). */
function heredocDelimiter(
  command: string,
  index: number,
): { value: { delimiter: string; quoted: boolean } } | undefined {
  const match = /^[ \t]*([^\s;&|<>()]+)/.exec(command.slice(index));
  if (match === null) return undefined;
  const raw = match[1] ?? '';
  return { value: { delimiter: raw.replace(/["'\\]/g, ''), quoted: /["'\\]/.test(raw) } };
}

/** Skips the bodies of the here-documents opened on the line that just ended; returns where commands go on. */
function skipHeredocs(command: string, index: number, heredocs: Heredoc[], result: ShellParse): number {
  let position = index;
  for (const heredoc of heredocs) {
    for (;;) {
      if (position >= command.length) {
        markUncertain(result, 'a here-document without its end');
        return command.length;
      }
      const end = command.indexOf('\n', position);
      const line = command.slice(position, end < 0 ? command.length : end);
      position = end < 0 ? command.length : end + 1;
      if ((heredoc.strip ? line.replace(/^\t+/, '') : line) === heredoc.delimiter) break;
      // An unquoted delimiter lets the body run `$(…)` and backticks.
      if (!heredoc.quoted && (line.includes('$(') || line.includes('`'))) {
        markUncertain(result, 'a substitution inside a here-document');
      }
    }
  }
  return position;
}

/** Words that start a compound command or a pipeline rather than name a program. */
const RESERVED = new Set([
  '!',
  '{',
  '}',
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'do',
  'done',
  'while',
  'until',
  'case',
  'esac',
  'in',
  'function',
  '[[',
  ']]',
]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;

/** One simple command: its assignments and reserved words dropped, the program it runs looked at. */
function commandOf(words: readonly Word[], result: ShellParse, depth: number): void {
  let start = 0;
  while (start < words.length) {
    const word = words[start];
    if (word === undefined) break;
    // `function NAME { …` : the body's first word is the program.
    if (!word.expanded && word.text === 'function') start += 2;
    else if (!word.expanded && RESERVED.has(word.text)) start += 1;
    else if (ASSIGNMENT.test(word.text)) start += 1;
    else break;
  }
  // `for NAME in WORDS` and `select` name no program.
  const first = words[start];
  if (first === undefined || (!first.expanded && (first.text === 'for' || first.text === 'select'))) return;
  invocation(words.slice(start), result, depth);
}

/** Reads a program's words: records it, and looks through it when it runs another program. */
function invocation(words: readonly Word[], result: ShellParse, depth: number): void {
  const first = words[0];
  if (first === undefined) return;
  if (depth > MAX_DEPTH) {
    markUncertain(result, 'commands nested too deep');
    return;
  }
  if (first.expanded || first.text === '') {
    markUncertain(
      result,
      `the program to run is not known before the shell expands it (${first.text.slice(0, 40)})`,
    );
    return;
  }
  const name = baseName(first.text);
  const rest = words.slice(1);
  result.invocations.push([name, ...rest.map((word) => word.text)]);
  lookThrough(name, rest, {
    // What a wrapper runs is read like a command of its own: `sudo FOO=1 rm`, `time { rm x; }`.
    run: (inner) => commandOf(inner, result, depth + 1),
    parse: (text) => parseInto(text, result, depth + 1),
    record: (normalized) => result.invocations.push(normalized),
    uncertain: (why) => markUncertain(result, why),
  });
}

/** The program's own name: `/usr/bin/rm` and `./rm` are `rm`. */
export function baseName(program: string): string {
  const slash = program.lastIndexOf('/');
  return slash < 0 || slash === program.length - 1 ? program : program.slice(slash + 1);
}
