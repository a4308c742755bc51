/**
 * Programs that run another program named in their arguments (`sudo rm x`, `find -exec rm`, `sh -c 'rm x'`):
 * how to find that program, so that a deny rule sees it. Each wrapper's options are known by name; an option
 * not known here could take the next word as its value, so it makes the parse uncertain rather than guessed.
 */
import {
  names,
  type Options,
  parseString,
  runAfter,
  skipOptions,
  type Word,
  type WrapperContext,
} from './wrapper-options.js';

const SHELLS = new Set(names('sh bash dash zsh ksh ash mksh yash fish'));

/** `sh -c 'text'` runs the text; `sh file` a script; `sh` or `sh -s` what comes on standard input. */
function shell(name: string) {
  return (words: readonly Word[], context: WrapperContext): void => {
    const skipped = skipOptions(
      name,
      // `+x` turns an option off; it is an option all the same.
      words.map((word) => (word.text.startsWith('+') ? { ...word, text: `-${word.text.slice(1)}` } : word)),
      {
        flags: 'abcefhiklmnprstuvxBCEHPT',
        values: 'oO',
        long: names('login norc noprofile posix restricted verbose noediting debugger version help'),
        longValues: ['rcfile', 'init-file'],
      },
      context,
    );
    if (skipped === undefined) return;
    const operand = words[skipped.index];
    if (skipped.seen.includes('c')) {
      if (operand === undefined) context.uncertain(`the command of ${name} -c comes from elsewhere`);
      else parseString(operand, context, `the command of ${name} -c`);
    } else if (skipped.seen.includes('s') || operand === undefined) {
      context.uncertain(`${name} reads its commands from standard input`);
    } else scriptFile(name, operand, context);
  };
}

/** A script a shell or `source` runs: a file is not looked into, but one made on the fly is not known. */
function scriptFile(name: string, operand: Word | undefined, context: WrapperContext): void {
  if (operand === undefined || operand.expanded || /^\/(dev|proc)\//.test(operand.text)) {
    context.uncertain(`${name} runs commands that are not in the command line`);
  }
}

/** `find … -exec PROGRAM … ;` (and -execdir, -ok, -okdir). */
function find(words: readonly Word[], context: WrapperContext): void {
  for (let index = 0; index < words.length; index += 1) {
    if (!['-exec', '-execdir', '-ok', '-okdir'].includes(words[index]?.text ?? '')) continue;
    const start = index + 1;
    let end = start;
    while (end < words.length && words[end]?.text !== ';' && words[end]?.text !== '+') end += 1;
    // `-exec {} ;` runs the files found.
    if (words[start]?.text.includes('{}') === true) context.uncertain('find runs the files it finds');
    else context.run(words.slice(start, end));
    index = end;
  }
}

/**
 * `xargs [options] PROGRAM ARGS…`: its input becomes more arguments, so a program that runs what its arguments
 * say (a shell, `env`, `sudo`, …), or `-I` putting input anywhere in the command, runs commands not in the text.
 */
function xargs(words: readonly Word[], context: WrapperContext): void {
  const skipped = skipOptions(
    'xargs',
    words,
    {
      flags: '0rtpxoel',
      values: 'adEILnPsi',
      long: names('null no-run-if-empty verbose interactive exit open-tty show-limits'),
      longValues: names(
        'arg-file delimiter eof replace max-lines max-args max-procs max-chars process-slot-var',
      ),
    },
    context,
  );
  if (skipped === undefined) return;
  const rest = words.slice(skipped.index);
  const program = baseName(rest[0]?.text ?? '');
  if (skipped.seen.includes('I') || skipped.seen.includes('i') || skipped.values.has('replace')) {
    context.uncertain('xargs -I puts its input into the command');
  } else if (rest[0] !== undefined && runsOthers(program) && !gitSubcommand(program, rest)) {
    context.uncertain(`xargs hands its input to ${program.slice(0, 40)}, which runs what its arguments say`);
  } else context.run(rest);
}

/** `git SUBCOMMAND …`: what comes after the subcommand are its arguments, not git's options. */
function gitSubcommand(program: string, words: readonly Word[]): boolean {
  const second = words[1];
  return program === 'git' && second !== undefined && !second.expanded && /^[a-z]/.test(second.text);
}

/** `ssh [options] HOST COMMAND…`: the words after the host are a command line for a shell (maybe this one). */
function ssh(words: readonly Word[], context: WrapperContext): void {
  const skipped = skipOptions(
    'ssh',
    words,
    { flags: '46AaCfGgKkMNnqsTtVvXxYy', values: 'BbcDEeFIiJLlmOoPpQRSWw' },
    context,
  );
  if (skipped === undefined) return;
  const rest = words.slice(skipped.index + 1);
  if (rest.length === 0) return;
  if (rest.some((word) => word.expanded)) context.uncertain('the command of ssh is expanded by the shell');
  else context.parse(rest.map((word) => word.text).join(' '));
}

/** The program's own name: `/usr/bin/rm` is `rm`. */
function baseName(program: string): string {
  return program.slice(program.lastIndexOf('/') + 1);
}

/** `env [options] [NAME=value…] PROGRAM`. */
function env(words: readonly Word[], context: WrapperContext): void {
  const skipped = skipOptions(
    'env',
    words,
    {
      flags: 'i0v',
      values: 'uCP',
      long: ['ignore-environment', 'null', 'debug'],
      longValues: ['unset', 'chdir'],
    },
    context,
  );
  if (skipped === undefined) return;
  let index = skipped.index;
  while (index < words.length && (words[index]?.text === '-' || /^[^=\s]+=/.test(words[index]?.text ?? ''))) {
    index += 1;
  }
  context.run(words.slice(index));
}

/** `su [options] [user]`: only `-c TEXT` runs a command. */
function su(words: readonly Word[], context: WrapperContext): void {
  for (let index = 0; index < words.length; index += 1) {
    const text = words[index]?.text ?? '';
    if (text === '-c' || text === '--command') parseString(words[index + 1], context, 'the command of su -c');
    else if (text.startsWith('--command=')) context.parse(text.slice('--command='.length));
    else if (words[index]?.expanded === true) context.uncertain('an argument of su that the shell expands');
  }
}

/** `watch [options] COMMAND…`: the words joined run in `sh -c`, or with -x as they are. */
function watch(words: readonly Word[], context: WrapperContext): void {
  const skipped = skipOptions(
    'watch',
    words,
    {
      flags: 'bcCdegprtwx',
      values: 'nq',
      long: names('beep color no-color differences errexit chgexit precise no-rerun no-title no-wrap exec'),
      longValues: ['interval', 'equexit'],
    },
    context,
  );
  if (skipped === undefined) return;
  const rest = words.slice(skipped.index);
  if (skipped.seen.includes('x')) context.run(rest);
  else if (rest.some((word) => word.expanded))
    context.uncertain('the command of watch is expanded by the shell');
  else context.parse(rest.map((word) => word.text).join(' '));
}

/** `eval WORDS`: the words joined are a command line. */
function evaluate(words: readonly Word[], context: WrapperContext): void {
  if (words.some((word) => word.expanded)) context.uncertain('eval of text the shell expands');
  else context.parse(words.map((word) => word.text).join(' '));
}

const NPX: Options = {
  flags: 'yq',
  values: 'pc',
  long: names('yes no quiet ignore-existing prefer-online prefer-offline'),
  longValues: names('package call node-options cache registry workspace shell'),
};

/** `npx`, `npm exec` and the like: `-c TEXT` runs a command line, else the first operand is the program. */
function packageRunner(name: string) {
  return (words: readonly Word[], context: WrapperContext): void => {
    const skipped = skipOptions(name, words, NPX, context);
    if (skipped === undefined) return;
    const call = skipped.values.get('c') ?? skipped.values.get('call');
    if (call !== undefined) context.parse(call);
    else context.run(words.slice(skipped.index));
  };
}

/** `npm exec`, `pnpm dlx`, `yarn dlx`, `bun x`: the subcommands that run a package's program. */
const RUNNING_SUBCOMMANDS: Record<string, readonly string[]> = {
  npm: ['exec', 'x'],
  pnpm: ['exec', 'dlx'],
  yarn: ['exec', 'dlx'],
  bun: ['x', 'exec'],
};

/** git's options before its subcommand that take a value as the next word (or after `=`). */
const GIT_VALUES = ['-C', '--git-dir', '--work-tree', '--namespace', '--super-prefix', '--attr-source'];
const GIT_FLAGS = names(
  '-p -P --paginate --no-pager --bare --no-replace-objects --literal-pathspecs --glob-pathspecs --noglob-pathspecs --icase-pathspecs --no-optional-locks --no-advice --no-lazy-fetch',
);
/** Configuration keys that can make git run a program (or another subcommand) of their choosing. */
const GIT_RUNNING_KEY =
  /^alias\.|pager|editor|command|program|helper|hook|fsmonitor|askpass|driver|filter\.|external|proxy|exec|textconv|sshcommand|tool/i;

/** git without its global options: `git -C . push` is `git push`. */
function git(words: readonly Word[], context: WrapperContext): void {
  let index = 0;
  for (; index < words.length; index += 1) {
    const word = words[index];
    if (word === undefined) break;
    const [key = '', attached] = word.text.split(/=(.*)/s);
    if (!word.text.startsWith('-')) break;
    if (word.expanded) {
      context.uncertain(`git with an option the shell expands (${word.text.slice(0, 40)})`);
      return;
    }
    if (GIT_FLAGS.includes(word.text)) continue;
    if (GIT_VALUES.includes(key)) {
      if (attached === undefined) index += 1;
      continue;
    }
    if (word.text === '-c' || key === '--config-env') {
      const setting =
        word.text === '-c' || attached === undefined ? words[index + 1] : { text: attached, expanded: false };
      if (
        setting === undefined ||
        setting.expanded ||
        GIT_RUNNING_KEY.test(setting.text.split('=')[0] ?? '')
      ) {
        context.uncertain('git -c with a setting that can run a program');
        return;
      }
      if (word.text === '-c' || attached === undefined) index += 1;
      continue;
    }
    context.uncertain(
      `git with an option youyou does not know before its subcommand (${word.text.slice(0, 40)})`,
    );
    return;
  }
  if (index > 0 && index < words.length)
    context.record(['git', ...words.slice(index).map((word) => word.text)]);
}

type Wrapper = (words: readonly Word[], context: WrapperContext) => void;

const WRAPPERS: Record<string, Wrapper> = {
  command: runAfter('command', { flags: 'pvV' }),
  builtin: runAfter('builtin', {}),
  exec: runAfter('exec', { flags: 'cl', values: 'a' }),
  nohup: runAfter('nohup', {}),
  nice: runAfter('nice', { values: 'n', numeric: true, longValues: ['adjustment'] }),
  time: runAfter('time', {
    flags: 'pvaq',
    values: 'fo',
    long: ['portability', 'verbose', 'append', 'quiet'],
    longValues: ['format', 'output'],
  }),
  timeout: (words, context) => {
    const options = {
      flags: 'v',
      values: 'sk',
      long: ['preserve-status', 'foreground', 'verbose'],
      longValues: ['signal', 'kill-after'],
    };
    const skipped = skipOptions('timeout', words, options, context);
    // The first operand is the duration.
    if (skipped !== undefined) context.run(words.slice(skipped.index + 1));
  },
  sudo: (words, context) => {
    const skipped = skipOptions(
      'sudo',
      words,
      {
        flags: 'AbBeEHiKklnNPSsVv',
        values: 'CDghpRrTtUu',
        long: names(
          'askpass background bell edit preserve-env set-home login remove-timestamp reset-timestamp list non-interactive preserve-groups stdin shell validate',
        ),
        longValues: names(
          'close-from chdir group host prompt chroot role type command-timeout other-user user',
        ),
      },
      context,
    );
    // `sudo -e` edits files; it runs no program of the command line.
    if (skipped !== undefined && !skipped.seen.includes('e')) context.run(words.slice(skipped.index));
  },
  doas: runAfter('doas', { flags: 'nsL', values: 'uC' }),
  su,
  env,
  stdbuf: runAfter('stdbuf', { values: 'ioe', longValues: ['input', 'output', 'error'] }),
  setsid: runAfter('setsid', { flags: 'cfw', long: ['ctty', 'fork', 'wait'] }),
  ionice: runAfter('ionice', {
    flags: 't',
    values: 'cnpPu',
    long: ['ignore'],
    longValues: ['class', 'classdata'],
  }),
  xargs,
  busybox: (words, context) => context.run(words),
  toybox: (words, context) => context.run(words),
  find,
  watch,
  ssh,
  source: (words, context) => scriptFile('source', words[0], context),
  '.': (words, context) => scriptFile('.', words[0], context),
  eval: evaluate,
  trap: (words, context) => parseString(words[0], context, 'the command of trap'),
  npx: packageRunner('npx'),
  pnpx: packageRunner('pnpx'),
  bunx: packageRunner('bunx'),
  git,
};

/** Programs that run others in ways this file does not follow: their command is never known for certain. */
const OPAQUE = new Set(
  names(
    'alias coproc parallel chrt taskset flock script strace ltrace gdb valgrind nsenter unshare chroot firejail bwrap runuser pkexec sg expect unbuffer systemd-run',
  ),
);

/** Whether program `name` runs other programs named in its arguments. */
function runsOthers(name: string): boolean {
  return (
    SHELLS.has(name) ||
    OPAQUE.has(name) ||
    Object.hasOwn(WRAPPERS, name) ||
    Object.hasOwn(RUNNING_SUBCOMMANDS, name)
  );
}

/** Looks through program `name` (already recorded) to the programs it runs. */
export function lookThrough(name: string, rest: readonly Word[], context: WrapperContext): void {
  if (SHELLS.has(name)) shell(name)(rest, context);
  else if (OPAQUE.has(name)) context.uncertain(`${name} runs a command youyou cannot follow`);
  if (SHELLS.has(name) || OPAQUE.has(name)) return;
  const running = Object.hasOwn(RUNNING_SUBCOMMANDS, name) ? RUNNING_SUBCOMMANDS[name] : undefined;
  if (running !== undefined) {
    if (running.includes(rest[0]?.text ?? ''))
      packageRunner(`${name} ${rest[0]?.text}`)(rest.slice(1), context);
    return;
  }
  if (Object.hasOwn(WRAPPERS, name)) WRAPPERS[name]?.(rest, context);
}
