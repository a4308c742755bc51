import path from 'node:path';

/**
 * Approval rules: `write_file` (every call of a tool), `write_file(src/**)` (calls whose path matches a glob)
 * and `shell(git status)` (shell commands that start with these words). A shell prefix rule allows only a
 * simple command: anything a shell would run as more than that one program (`;`, `&&`, `|`, `$(…)`, backticks,
 * redirections, a line break) never matches an allow rule, so `git status; rm -rf x` is asked about.
 */

/** The tool whose `command` argument is matched by word prefix rather than by glob. */
export const SHELL_TOOL = 'shell';

/** One rule as written (`shell(git status)`), parsed. */
export interface ApprovalRule {
  /** The tool name it applies to. */
  readonly tool: string;
  /** A shell command prefix (for `shell`) or a glob of the call's main argument; undefined: every call. */
  readonly pattern?: string;
  /** The rule as written, for messages. */
  readonly text: string;
}

/** The rules of the config file (and those the user added from the question): deny wins over allow. */
export interface ApprovalRules {
  readonly allow: readonly ApprovalRule[];
  readonly deny: readonly ApprovalRule[];
}

/** No rules at all. */
export const NO_RULES: ApprovalRules = { allow: [], deny: [] };

const RULE = /^([A-Za-z0-9_.-]+)(?:\((.*)\))?$/s;

/** Parses `tool` or `tool(pattern)`; a string saying what is wrong when it is neither. */
export function parseRule(text: string): ApprovalRule | string {
  const match = RULE.exec(text.trim());
  if (match === null) return `"${text}" is not a rule: write TOOL or TOOL(pattern), e.g. shell(git status)`;
  const tool = match[1] ?? '';
  const pattern = match[2]?.trim();
  if (pattern === undefined) return { tool, text: tool };
  if (pattern === '') return `"${text}" has an empty pattern; write ${tool} alone to match every call`;
  if (tool === SHELL_TOOL && splitSimpleCommand(pattern) === undefined) {
    return `"${text}": a shell rule is a plain command prefix such as shell(npm test), without ; | & $ < > or a line break`;
  }
  return { tool, pattern, text: `${tool}(${pattern})` };
}

/** Characters that make a shell do more than run one program with arguments, outside quotes. */
const OPERATORS = new Set([';', '&', '|', '<', '>', '(', ')', '`', '\n', '\r']);

/**
 * The words of a simple command (quotes removed), or undefined when the text is more than one simple command:
 * operators, substitutions (`$(…)`, `${…}`, `$VAR`, backticks), redirections, line breaks, unbalanced quotes.
 */
export function splitSimpleCommand(command: string): string[] | undefined {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let index = 0; index < command.length; index += 1) {
    const character = command[index] ?? '';
    if (quote === "'") {
      if (character === "'") quote = undefined;
      else word += character;
      continue;
    }
    if (quote === '"') {
      if (character === '"') quote = undefined;
      // Inside double quotes $ and ` still expand, and a backslash can hide a quote.
      else if (character === '$' || character === '`' || character === '\\') return undefined;
      else word += character;
      continue;
    }
    if (character === "'" || character === '"') {
      quote = character;
      inWord = true;
      continue;
    }
    if (character === '$' || character === '\\' || OPERATORS.has(character)) return undefined;
    if (character === ' ' || character === '\t') {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      continue;
    }
    word += character;
    inWord = true;
  }
  if (quote !== undefined) return undefined;
  if (inWord) words.push(word);
  return words;
}

/**
 * The command split at every operator into the word lists of its parts, loosely: enough to find a denied
 * program anywhere in `a && b`, `a | b`, `$(b)`. Quotes are kept inside words.
 */
function looseSegments(command: string): string[][] {
  return command
    .split(/[;&|<>()`\n\r]|\$\(|\$\{/)
    .map((part) =>
      part
        .trim()
        .split(/[ \t]+/)
        .filter((word) => word !== '')
        .map((word) => word.replace(/^["']+|["']+$/g, '')),
    )
    .filter((words) => words.length > 0);
}

function startsWith(words: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length > 0 && prefix.every((word, index) => words[index] === word);
}

/** The argument a non-shell rule's glob is matched against: the path, else another main string argument. */
const MAIN_KEYS = ['path', 'file', 'url', 'pattern', 'query', 'name', 'command'];

function mainArgument(args: unknown): string | undefined {
  if (typeof args !== 'object' || args === null) return undefined;
  const record = args as Record<string, unknown>;
  for (const key of MAIN_KEYS) {
    const value = record[key];
    if (typeof value === 'string') return value;
  }
  return undefined;
}

/** A glob (`*` within a path segment, `**` across them, `?` one character) as an anchored regular expression. */
function globRegExp(glob: string): RegExp {
  let source = '';
  for (let index = 0; index < glob.length; index += 1) {
    const character = glob[index] ?? '';
    if (character === '*' && glob[index + 1] === '*') {
      const slash = glob[index + 2] === '/';
      source += slash ? '(?:.*/)?' : '.*';
      index += slash ? 2 : 1;
    } else if (character === '*') source += '[^/]*';
    else if (character === '?') source += '[^/]';
    else source += character.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's');
}

function commandOf(args: unknown): string | undefined {
  if (typeof args !== 'object' || args === null) return undefined;
  const command = (args as { command?: unknown }).command;
  return typeof command === 'string' ? command : undefined;
}

/**
 * Whether an allow rule lets this call run: every word of a shell prefix, or the glob on the main argument.
 * `touchedPath` is the path a file tool will really act on (symlinks resolved, relative to the workspace):
 * when given, the glob must match it as well as the path as written, so `write_file(src/**)` does not let
 * `src/up/.git/config` through when `src/up` links to `..`.
 */
export function allowRuleMatches(
  rule: ApprovalRule,
  toolName: string,
  args: unknown,
  touchedPath?: string,
): boolean {
  if (rule.tool !== toolName) return false;
  if (rule.pattern === undefined) return true;
  if (toolName === SHELL_TOOL) {
    const command = commandOf(args);
    const words = command === undefined ? undefined : splitSimpleCommand(command);
    const prefix = splitSimpleCommand(rule.pattern);
    return words !== undefined && prefix !== undefined && startsWith(words, prefix);
  }
  const value = mainArgument(args);
  if (value === undefined || !globMatchesPath(rule.pattern, value)) return false;
  return touchedPath === undefined || globMatchesPath(rule.pattern, touchedPath);
}

/** Whether a rule's glob matches a path; a path that climbs out (`src/../../etc/x`) is compared in its normal form. */
function globMatchesPath(pattern: string, value: string): boolean {
  const normal = path.posix.normalize(value.replace(/\\/g, '/'));
  if (normal.startsWith('../') && !pattern.startsWith('../')) return false;
  return globRegExp(pattern).test(normal) || globRegExp(pattern).test(value);
}

/**
 * Whether a deny rule refuses this call: a shell prefix found at the start of any part of the command, or the
 * glob matching the path as written or the path the tool will really touch (`touchedPath`).
 */
export function denyRuleMatches(
  rule: ApprovalRule,
  toolName: string,
  args: unknown,
  touchedPath?: string,
): boolean {
  if (rule.tool !== toolName) return false;
  if (rule.pattern === undefined) return true;
  if (toolName === SHELL_TOOL) {
    const command = commandOf(args);
    const prefix = splitSimpleCommand(rule.pattern) ?? [];
    if (command === undefined) return false;
    const exact = splitSimpleCommand(command);
    if (exact !== undefined) return startsWith(exact, prefix);
    return looseSegments(command).some((words) => startsWith(words, prefix));
  }
  if (allowRuleMatches(rule, toolName, args)) return true;
  return touchedPath !== undefined && globMatchesPath(rule.pattern, touchedPath);
}

/**
 * What the rules say of one call: the deny rule that refuses it, the allow rule that lets it run, or nothing.
 * `touchedPath`: the path a file tool will really act on, when it differs from what the call says.
 */
export function judgeByRules(
  rules: ApprovalRules,
  toolName: string,
  args: unknown,
  touchedPath?: string,
): { verdict: 'deny' | 'allow'; rule: ApprovalRule } | undefined {
  const denied = rules.deny.find((rule) => denyRuleMatches(rule, toolName, args, touchedPath));
  if (denied !== undefined) return { verdict: 'deny', rule: denied };
  const allowed = rules.allow.find((rule) => allowRuleMatches(rule, toolName, args, touchedPath));
  if (allowed !== undefined) return { verdict: 'allow', rule: allowed };
  return undefined;
}

/**
 * The prefix rule the question offers for a shell command: its program and, when the second word is a
 * subcommand (`git status`, `npm test`), that word too. Undefined when the command is not a simple command.
 */
export function offeredShellPrefix(command: string): string | undefined {
  const words = splitSimpleCommand(command);
  const first = words?.[0];
  if (words === undefined || first === undefined || first.includes('=')) return undefined;
  const second = words[1];
  return second !== undefined && /^[a-z][a-z0-9:_-]*$/i.test(second) ? `${first} ${second}` : first;
}
