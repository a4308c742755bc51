/**
 * The shadow git object store behind checkpoints. Git runs as the user and outside the sandbox, on a workspace
 * whose content the model may have written, so every run is pinned down: its own GIT_DIR, index and work tree,
 * no global or system config, no hooks, no fsmonitor, no excludes file of the user's, and attributes that
 * switch off every filter, conversion and diff driver a hostile `.gitattributes` could ask for. The user's own
 * `.git` is never named (git skips `.git` in a work tree by itself), and links are stored as links, never followed.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, lstatSync, mkdirSync, type Stats, writeFileSync } from 'node:fs';
import path from 'node:path';

/** `info/attributes` outranks every `.gitattributes` of the work tree: no filter, eol, ident or encoding runs. */
const NEUTRAL_ATTRIBUTES = '* -text -filter -ident -working-tree-encoding !diff !merge !eol\n';

/** Settings given on every command line, so that nothing the store's own config might gain can change them. */
const PINNED_CONFIG = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.untrackedCache=false',
  'core.excludesFile=/dev/null',
  'core.attributesFile=/dev/null',
  'core.autocrlf=false',
  'core.safecrlf=false',
  'core.symlinks=true',
  'core.quotePath=false',
  'core.splitIndex=false',
  'gc.auto=0',
  'maintenance.auto=false',
  'diff.noprefix=false',
  'diff.mnemonicPrefix=false',
  'diff.renames=false',
  'diff.external=',
  'status.showUntrackedFiles=all',
].flatMap((setting) => ['-c', setting]);

/** A git store for one workspace: the folder of its objects and its index. */
export interface ShadowGit {
  readonly gitDir: string;
  readonly workspace: string;
  /** Runs git with `args`; `input` on stdin; another index than the store's with `indexFile`. Rejects on failure. */
  run(args: readonly string[], options?: { input?: string; indexFile?: string }): Promise<Buffer>;
}

/**
 * Creates (once) the store at `gitDir` for `workspace`, with `excluded` (paths in the workspace) left out;
 * `indexFile` is the index its commands use unless told otherwise.
 */
export function shadowGit(options: {
  gitDir: string;
  workspace: string;
  excluded: readonly string[];
  indexFile: string;
}): ShadowGit {
  const { gitDir, workspace } = options;
  let ready: Promise<void> | undefined;
  const env = (indexFile: string | undefined): NodeJS.ProcessEnv => ({
    // Nothing of the user's environment but PATH: no GIT_* variable of theirs may redirect or configure git.
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: gitDir,
    XDG_CONFIG_HOME: gitDir,
    LC_ALL: 'C',
    GIT_DIR: gitDir,
    GIT_WORK_TREE: workspace,
    GIT_INDEX_FILE: indexFile ?? options.indexFile,
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_AUTHOR_NAME: 'youyou',
    GIT_AUTHOR_EMAIL: 'youyou@localhost',
    GIT_COMMITTER_NAME: 'youyou',
    GIT_COMMITTER_EMAIL: 'youyou@localhost',
  });
  const exec = (args: readonly string[], input: string | undefined, indexFile?: string) =>
    new Promise<Buffer>((resolve, reject) => {
      const child = spawn('git', [...PINNED_CONFIG, ...args], {
        cwd: workspace,
        env: env(indexFile),
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
      child.on('error', (error) => reject(new Error(`checkpoints need git: ${error.message}`)));
      child.on('close', (code) => {
        if (code === 0) resolve(Buffer.concat(out));
        else {
          const message = Buffer.concat(err).toString('utf8').trim().split('\n')[0] ?? '';
          reject(new Error(`git ${args[0] ?? ''} failed (exit ${code}): ${message}`));
        }
      });
      child.stdin.on('error', () => undefined);
      child.stdin.end(input ?? '');
    });
  const prepare = async (): Promise<void> => {
    mkdirSync(gitDir, { recursive: true, mode: 0o700 });
    // An empty template folder: no sample hooks, no description, nothing but what git needs.
    await exec(['init', '--quiet', '--template='], undefined);
    mkdirSync(path.join(gitDir, 'info'), { recursive: true });
    writeFileSync(path.join(gitDir, 'info', 'attributes'), NEUTRAL_ATTRIBUTES);
    const exclude = ['.git', ...options.excluded.map((entry) => `/${entry.replace(/([\\*?[!#])/g, '\\$1')}`)];
    writeFileSync(path.join(gitDir, 'info', 'exclude'), `${exclude.join('\n')}\n`);
  };
  return {
    gitDir,
    workspace,
    run: async (args, runOptions = {}) => {
      ready ??= prepare();
      await ready;
      return exec(args, runOptions.input, runOptions.indexFile);
    },
  };
}

/** The NUL-separated entries of git's `-z` output. */
export function zList(output: Buffer): string[] {
  return output
    .toString('utf8')
    .split('\0')
    .filter((entry) => entry !== '');
}

/** `paths` as a `-z --stdin` list for git: each one ended by a NUL. */
export function nulJoined(paths: readonly string[]): string {
  return `${paths.join('\0')}\0`;
}

/**
 * True when a folder on the way to `relative` (not the entry itself) is a link or no folder: what lies behind
 * it is elsewhere. `folders` remembers the answers for the folders seen (one snapshot's worth).
 */
export function behindLink(
  workspace: string,
  relative: string,
  folders = new Map<string, boolean>(),
): boolean {
  const parts = relative.split('/');
  let current = '';
  for (const part of parts.slice(0, -1)) {
    current = current === '' ? part : `${current}/${part}`;
    let real = folders.get(current);
    if (real === undefined) {
      const stats = lstatOrUndefined(path.join(workspace, current));
      // A folder that is gone has nothing behind it to reach.
      real = stats === undefined || stats.isDirectory();
      folders.set(current, real);
    }
    if (!real) return true;
  }
  return false;
}

/** The entry's own stats (a link's, not its target's); undefined when it is not there. */
export function lstatOrUndefined(file: string): Stats | undefined {
  try {
    return lstatSync(file);
  } catch {
    return undefined;
  }
}

/** A test for paths in `entries` or under one of its folders (those end in `/`). */
export function leftOutTest(entries: readonly string[]): (file: string) => boolean {
  const exact = new Set(entries);
  const folders = entries.filter((entry) => entry.endsWith('/'));
  return (file) => exact.has(file) || folders.some((folder) => file.startsWith(folder));
}

/** False for a file this process may not read (git could not record it). */
export function readable(file: string): boolean {
  try {
    accessSync(file, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}
