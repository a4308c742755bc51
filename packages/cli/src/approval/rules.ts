import path from 'node:path';
import { baseName, parseShell } from './shell-parse.js';

/**
 * Approval rules: `write_file` (every call of a tool), `write_file(src/**)` (calls whose path matches a glob),
 * `shell(git status)` (shell commands that start with these words) and `shell(=python3 build.py)` (exactly
 * this command, arguments and all).
 *
 * Allow rules are read narrowly. A shell allow rule matches only a simple command: anything a shell would run
 * as more than that one program (`;`, `&&`, `|`, `$(…)`, `$VAR`, backticks, backslashes, redirections, a line
 * break) never matches, so `git status; rm -rf x` is asked about; and the words are compared as written, so
 * `FOO=1 git status`, `/usr/bin/git status` or `git -C x status` do not match `shell(git status)` either.
 *
 * Deny rules are read broadly (shell-parse.ts): the command is parsed as a shell would, and a deny rule
 * matches when any program it runs starts with the rule's words: in any part of a list or pipeline, in
 * `(…)` and `$(…)`, after `FOO=1`, spelled `/bin/rm`, `\rm` or `'rm'`, behind `command`, `env`, `nice`,
 * `nohup`, `timeout`, `time`, `sudo`, `doas`, `su -c`, `xargs`, `find -exec`, `watch`, `sh -c`, `eval`, `npx`
 * and the other wrappers shell-wrappers.ts knows, and `git push` behind git's global options (`git -C . push`).
 * A command whose programs cannot be known from its text (a program named by a variable, backticks, `eval $x`,
 * a shell reading from a pipe, an option of a wrapper that is not known) is refused as soon as any shell deny
 * rule exists: deny rules win when youyou cannot be sure. What scripts and other languages' code do
 * (`python3 -c …`, `bash build.sh`) is not looked into: deny the interpreter itself to stop those.
 */

/** The words of a space-separated list (tables of names stay short). */
function names(text: string): string[] {
  return text.split(' ');
}

/** The tool whose `command` argument is matched by word prefix rather than by glob. */
export const SHELL_TOOL = 'shell';

/** One rule as written (`shell(git status)`), parsed. */
export interface ApprovalRule {
  /** The tool name it applies to. */
  readonly tool: string;
  /** A shell command prefix (for `shell`) or a glob of the call's main argument; undefined: every call. */
  readonly pattern?: string;
  /** A shell rule written `shell(=…)`: the command must be exactly these words, not only start with them. */
  readonly exact?: boolean;
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
  if (tool === SHELL_TOOL) {
    const exact = pattern.startsWith('=');
    const command = exact ? pattern.slice(1).trim() : pattern;
    const words = splitSimpleCommand(command);
    if (words === undefined || words.length === 0) {
      return `"${text}": a shell rule is a plain command prefix such as shell(npm test), or shell(=COMMAND) for exactly one command, without ; | & $ \\ < > or a line break`;
    }
    return exact
      ? { tool, pattern: command, exact, text: `${tool}(=${command})` }
      : { tool, pattern: command, text: `${tool}(${command})` };
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

/** Whether the words are the rule's: all of them for `shell(=…)`, else the rule's words first. */
function shellWordsMatch(rule: ApprovalRule, words: readonly string[], prefix: readonly string[]): boolean {
  return rule.exact === true
    ? words.length === prefix.length && startsWith(words, prefix)
    : startsWith(words, prefix);
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
    return words !== undefined && prefix !== undefined && shellWordsMatch(rule, words, prefix);
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
 * Whether a deny rule refuses this call: its words start any program the shell command runs (see above), or
 * the glob matches the path as written or the path the tool will really touch (`touchedPath`).
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
    if (command === undefined) return false;
    return parseShell(command).invocations.some((words) => shellWordsMatch(rule, words, denyPrefix(rule)));
  }
  if (allowRuleMatches(rule, toolName, args)) return true;
  return touchedPath !== undefined && globMatchesPath(rule.pattern, touchedPath);
}

/** A deny rule's words with its program by its base name, as the parse names programs (`/bin/rm` is `rm`). */
function denyPrefix(rule: ApprovalRule): string[] {
  const [program, ...rest] = splitSimpleCommand(rule.pattern ?? '') ?? [];
  return program === undefined ? [] : [baseName(program), ...rest];
}

/** What the rules say of one call, and, when a deny rule wins because the command is unclear, why it is. */
export interface RulesVerdict {
  verdict: 'deny' | 'allow';
  rule: ApprovalRule;
  /** Set when no deny rule matched for certain but the command's programs cannot be known from its text. */
  uncertain?: string;
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
): RulesVerdict | undefined {
  if (toolName === SHELL_TOOL) {
    const command = commandOf(args);
    const parsed = command === undefined ? undefined : parseShell(command);
    const shellDeny = rules.deny.filter((rule) => rule.tool === SHELL_TOOL);
    const denied = shellDeny.find(
      (rule) =>
        rule.pattern === undefined ||
        parsed?.invocations.some((words) => shellWordsMatch(rule, words, denyPrefix(rule))) === true,
    );
    if (denied !== undefined) return { verdict: 'deny', rule: denied };
    const first = shellDeny[0];
    if (first !== undefined && parsed?.uncertain !== undefined) {
      return { verdict: 'deny', rule: first, uncertain: parsed.uncertain };
    }
  }
  const denied = rules.deny.find((rule) => denyRuleMatches(rule, toolName, args, touchedPath));
  if (denied !== undefined) return { verdict: 'deny', rule: denied };
  const allowed = rules.allow.find((rule) => allowRuleMatches(rule, toolName, args, touchedPath));
  if (allowed !== undefined) return { verdict: 'allow', rule: allowed };
  return undefined;
}

/**
 * Programs that run whatever their arguments say (interpreters, shells, command runners, build tools): for them
 * a prefix rule would allow any code (`shell(python3)` lets `python3 -c …` run), so the question offers only
 * the exact command.
 */
const RUNNERS = new Set(
  names(
    'sh bash dash zsh ksh ash mksh yash fish csh tcsh node nodejs deno bun bunx npx pnpx ruby irb perl php lua luajit tclsh wish Rscript julia pwsh powershell osascript awk gawk mawk nawk sed env xargs find nice nohup timeout time sudo doas su runuser pkexec watch parallel command builtin exec eval source . trap coproc stdbuf setsid ionice chrt taskset flock busybox toybox make gmake cmake ninja ssh script strace ltrace gdb valgrind nsenter unshare chroot firejail bwrap expect unbuffer systemd-run',
  ),
);
const INTERPRETER = /^(python|pypy|ruby|perl|php|lua|node)[0-9.]*$/;
/** Subcommands of package managers that run a package's program. */
const RUNNING_SUBCOMMANDS = new Set(['exec', 'x', 'dlx', 'run-script']);
const PACKAGE_MANAGERS = new Set(['npm', 'pnpm', 'yarn']);
/** git's own subcommands: any other word may be an alias, which can run any program. */
const GIT_SUBCOMMANDS = new Set(
  names(
    'status diff log show add commit branch checkout switch restore fetch pull push merge rebase stash tag rm mv reset init clone remote grep blame describe rev-parse ls-files cherry-pick revert bisect worktree shortlog reflog',
  ),
);

/**
 * The shell pattern the question offers for a command: its program and, when the second word is a subcommand
 * (`git status`, `npm test`), that word too; `=COMMAND` (exactly this command) for programs that run
 * whatever their arguments say (see RUNNERS), scripts named by a path, `git` with options before its
 * subcommand or an alias, and commands that set variables. Undefined when the command is not a simple command.
 */
export function offeredShellPattern(command: string): string | undefined {
  const words = splitSimpleCommand(command);
  const first = words?.[0];
  if (words === undefined || first === undefined) return undefined;
  const second = words[1];
  const quoted = words.map(quoteWord);
  const exact = quoted.includes(undefined) ? undefined : `=${quoted.join(' ')}`;
  if (first.includes('=') || first.includes('/') || RUNNERS.has(first) || INTERPRETER.test(first))
    return exact;
  if (first === 'git' && (second === undefined || !GIT_SUBCOMMANDS.has(second))) return exact;
  if (PACKAGE_MANAGERS.has(first) && second !== undefined && RUNNING_SUBCOMMANDS.has(second)) return exact;
  // `npm run build` names one script of the project: the rule keeps its name, not every script.
  const script = words[2];
  if (
    PACKAGE_MANAGERS.has(first) &&
    second === 'run' &&
    script !== undefined &&
    /^[a-z][a-z0-9:_-]*$/i.test(script)
  ) {
    return `${first} run ${script}`;
  }
  return second !== undefined && /^[a-z][a-z0-9:_-]*$/i.test(second) ? `${first} ${second}` : first;
}

/** A word as a rule writes it, quoted when it must be; undefined when a rule cannot hold it. */
function quoteWord(word: string): string | undefined {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  if (!word.includes("'")) return `'${word}'`;
  return /["$`\\]/.test(word) ? undefined : `"${word}"`;
}
