/** How a wrapper's options are read: by name, so that an option not known makes the parse uncertain. */

/** The words of a space-separated list (tables of names stay short). */
export function names(text: string): string[] {
  return text.split(' ');
}

/** One word after quote removal; `expanded` when the shell would change it (`$…`, a glob, `{a,b}`). */
export interface Word {
  text: string;
  expanded: boolean;
}

/** What a wrapper can do with the program it found. */
export interface WrapperContext {
  /** Another program invocation, as words. */
  run(words: readonly Word[]): void;
  /** A command line given as one string (`sh -c`, `eval`, `watch`). */
  parse(text: string): void;
  /** An extra normalized form of the same invocation (git without its global options). */
  record(words: string[]): void;
  uncertain(why: string): void;
}

export interface Options {
  /** Short flags without a value. */
  flags?: string;
  /** Short options that take a value (attached, or the next word). */
  values?: string;
  /** Long options without a value. */
  long?: readonly string[];
  /** Long options that take a value (`--name=value` or the next word). */
  longValues?: readonly string[];
  /** `-10` (nice) is an option. */
  numeric?: boolean;
}

/**
 * The index of the first operand after `name`'s options, the short flags seen, or undefined (and the parse
 * uncertain) when an option is not known.
 */
export function skipOptions(
  name: string,
  words: readonly Word[],
  options: Options,
  context: WrapperContext,
): { index: number; seen: string; values: Map<string, string> } | undefined {
  let seen = '';
  const values = new Map<string, string>();
  let index = 0;
  const fail = (text: string) => {
    context.uncertain(`${name} with an option youyou does not know (${text.slice(0, 40)})`);
    return undefined;
  };
  for (; index < words.length; index += 1) {
    const word = words[index];
    if (word === undefined) break;
    const text = word.text;
    if (text === '--') return { index: index + 1, seen, values };
    if (!text.startsWith('-') || text === '-') return { index, seen, values };
    if (word.expanded) return fail(text);
    if (text.startsWith('--')) {
      const [key = '', value] = text.slice(2).split(/=(.*)/s);
      if (options.long?.includes(key) && value === undefined) continue;
      if (!options.longValues?.includes(key)) return fail(text);
      if (value === undefined) index += 1;
      values.set(key, value ?? words[index]?.text ?? '');
      continue;
    }
    if (options.numeric === true && /^-[0-9]+$/.test(text)) continue;
    for (let position = 1; position < text.length; position += 1) {
      const letter = text[position] ?? '';
      if (options.flags?.includes(letter)) {
        seen += letter;
        continue;
      }
      if (!options.values?.includes(letter)) return fail(text);
      seen += letter;
      const attached = text.slice(position + 1);
      if (attached === '') index += 1;
      values.set(letter, attached === '' ? (words[index]?.text ?? '') : attached);
      break;
    }
  }
  return { index, seen, values };
}

/** Runs the words from the first operand on, after `name`'s options. */
export function runAfter(name: string, options: Options) {
  return (words: readonly Word[], context: WrapperContext): void => {
    const skipped = skipOptions(name, words, options, context);
    if (skipped !== undefined) context.run(words.slice(skipped.index));
  };
}

/** A command line given as a string: parsed, unless the shell expands it first. */
export function parseString(word: Word | undefined, context: WrapperContext, what: string): void {
  if (word === undefined) return;
  if (word.expanded) context.uncertain(`${what} is not known before the shell expands it`);
  else context.parse(word.text);
}
