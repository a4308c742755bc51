/**
 * Workspace checkpoints: the state of the workspace's files before and after every mutating tool call (the
 * shell's included), kept as git trees in a shadow store under YOUYOU_HOME/checkpoints/, with a journal of
 * which call of which session and turn each pair belongs to. `/undo`, `/rewind` and `/diff` read it back.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { rm, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { ToolHandler } from '@youyou/agent';
import type { CliSettings } from '../config/config.js';
import {
  behindLink,
  leftOutTest,
  lstatOrUndefined,
  nulJoined,
  type ShadowGit,
  shadowGit,
  zList,
} from './checkpoint-git.js';
import { type CallEntry, CheckpointJournal } from './checkpoint-journal.js';
import {
  type CheckpointLimits,
  DEFAULT_CHECKPOINT_LIMITS,
  leftOutOf,
  type Snapshot,
  takeSnapshot,
} from './checkpoint-snapshot.js';

/** A path a restore changes: written from the target state, or deleted since the target did not have it. */
export interface PathChange {
  path: string;
  action: 'write' | 'delete';
}

/** What a restore would do, computed before it does anything. */
export interface RestorePlan {
  sessionId: string;
  target: string;
  /** The workspace's state when the plan was made. */
  current: string;
  changes: PathChange[];
  /**
   * Paths of `changes` that something other than the session changed (the user, between its calls or since
   * the last one), or whose present state was not recorded (too large, ignored, unreadable, a folder, behind
   * a link), so that nothing tells the session's change from the user's: kept unless confirmed.
   */
  userChanged: string[];
  /** Paths the target state left out: it cannot bring them back, so they stay as they are. */
  leftOut: string[];
  /** The calls the restore takes back. */
  undid: string[];
}

/** The store of the settings' workspace under their home folder, with their limits; undefined when turned off. */
export function checkpointStoreOf(settings: CliSettings): CheckpointStore | undefined {
  const config = settings.checkpoints;
  if (config === false) return undefined;
  return new CheckpointStore({
    home: settings.home,
    workspace: settings.cwd,
    limits: { ...DEFAULT_CHECKPOINT_LIMITS, ...config },
  });
}

/** The folder under `home` that holds the checkpoints of `workspace`. */
export function checkpointFolder(home: string, workspace: string): string {
  const digest = createHash('sha256').update(workspace).digest('hex').slice(0, 16);
  return path.join(home, 'checkpoints', digest);
}

/** The checkpoints of one workspace; every operation runs after the one before it has ended. */
export class CheckpointStore {
  readonly workspace: string;
  readonly #folder: string;
  readonly #git: ShadowGit;
  readonly #limits: CheckpointLimits;
  #queue: Promise<unknown> = Promise.resolve();
  #labelled = false;
  /** The paths and failures already warned about. */
  readonly #warned = new Set<string>();
  readonly #indexFile: string;
  readonly #journal: CheckpointJournal;

  constructor(options: { home: string; workspace: string; limits?: CheckpointLimits }) {
    this.workspace = realpathSync(options.workspace);
    this.#folder = checkpointFolder(options.home, this.workspace);
    this.#journal = new CheckpointJournal(this.#folder);
    this.#limits = options.limits ?? DEFAULT_CHECKPOINT_LIMITS;
    const home = path.resolve(options.home);
    const inside = path.relative(this.workspace, home);
    const excluded = inside !== '' && !inside.startsWith('..') && !path.isAbsolute(inside) ? [inside] : [];
    // Each process indexes on its own copy, so that two youyous in one workspace never meet on git's index lock;
    // `close` hands it back for the next one (it saves rehashing every file on the first snapshot).
    this.#indexFile = path.join(this.#folder, `index-${process.pid}`);
    this.#git = shadowGit({
      gitDir: path.join(this.#folder, 'git'),
      workspace: this.workspace,
      excluded,
      indexFile: this.#indexFile,
    });
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(work, work);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  /** Records the workspace's state now. */
  snapshot(): Promise<Snapshot> {
    return this.#serial(() => this.#snapshot());
  }

  async #snapshot(): Promise<Snapshot> {
    if (!this.#labelled) {
      mkdirSync(this.#folder, { recursive: true, mode: 0o700 });
      // Names the workspace, so that a person clearing out checkpoints/ knows whose folder this is.
      writeFileSync(path.join(this.#folder, 'workspace'), `${this.workspace}\n`);
      try {
        copyFileSync(path.join(this.#folder, 'index'), this.#indexFile);
      } catch {
        // No index handed back yet: the first snapshot hashes every file.
      }
      this.#labelled = true;
    }
    return takeSnapshot(this.#git, this.workspace, this.#limits);
  }

  /** Hands this process's index back for the next run (the last one to close wins; any of them will do). */
  close(): void {
    if (!this.#labelled) return;
    try {
      renameSync(this.#indexFile, path.join(this.#folder, 'index'));
    } catch {
      // Nothing was indexed, or the folder was deleted meanwhile.
    }
  }

  /** `tool` recording the workspace before and after each call (a read-only tool is returned as it is). */
  wrap(tool: ToolHandler, warn: (text: string) => void): ToolHandler {
    if (!tool.isMutating) return tool;
    const warned = this.#warned;
    const record = async (): Promise<Snapshot | undefined> => {
      try {
        const snapshot = await this.snapshot();
        const { skipped } = snapshot;
        const fresh = skipped.filter((entry) => !warned.has(entry));
        for (const entry of fresh) warned.add(entry);
        if (fresh.length > 0) {
          warn(
            `checkpoints leave out ${fresh.length} file(s) over the size limits (or unreadable, or behind a link)`,
          );
        }
        return snapshot;
      } catch (error) {
        // Said once: a missing git would otherwise repeat it twice a call.
        const text = `no checkpoint: ${error instanceof Error ? error.message : String(error)}`;
        if (!warned.has(text)) warn(text);
        warned.add(text);
        return undefined;
      }
    };
    return {
      ...tool,
      execute: async (input) => {
        const before = await record();
        try {
          return await tool.execute(input);
        } finally {
          const after = await record();
          if (before !== undefined && after !== undefined) {
            this.#journal.append({
              kind: 'call',
              sessionId: input.sessionId,
              turnId: input.turnId,
              callId: input.callId,
              tool: tool.name,
              before: before.tree,
              after: after.tree,
              leftOut: leftOutOf(before),
              afterLeftOut: leftOutOf(after),
            });
          }
        }
      },
    };
  }

  /** Notes that session `forkId` carries the history of `sourceId`, so its `/undo` and `/rewind` reach those calls. */
  recordFork(sourceId: string, forkId: string): void {
    this.#journal.append({ kind: 'fork', sessionId: forkId, from: sourceId });
  }

  /** How many calls of the session `/undo` could still take back. */
  undoableCount(sessionId: string): number {
    return this.#journal.liveCalls(sessionId).length;
  }

  /** The plan that takes back the session's last mutating call; undefined when there is none. */
  planUndo(sessionId: string): Promise<RestorePlan | undefined> {
    const last = this.#journal.liveCalls(sessionId).at(-1);
    if (last === undefined) return Promise.resolve(undefined);
    return this.#plan(sessionId, [last]);
  }

  /**
   * The plan that returns the files to their state before the first mutating call of the turns `turnIds` (a
   * turn and all after it); undefined when none of them changed anything.
   */
  planRewind(sessionId: string, turnIds: readonly string[]): Promise<RestorePlan | undefined> {
    const wanted = new Set(turnIds);
    const calls = this.#journal.liveCalls(sessionId);
    const first = calls.findIndex((call) => wanted.has(call.turnId));
    const start = calls[first];
    if (start === undefined) return Promise.resolve(undefined);
    return this.#plan(sessionId, calls.slice(first));
  }

  /** The plan that returns the files to the state before `taken[0]`, taking back the calls `taken`. */
  #plan(sessionId: string, taken: readonly CallEntry[]): Promise<RestorePlan> {
    const start = taken[0];
    if (start === undefined) throw new Error('nothing to take back');
    const undid = taken.map((call) => call.callId);
    return this.#serial(async () => {
      const target = start.before;
      const current = (await this.#snapshot()).tree;
      const all = await this.#changes(current, target);
      // A path the target left out was not absent then: deleting it would bring nothing back.
      const isLeftOut = leftOutTest(start.leftOut ?? []);
      const changes = all.filter((change) => !isLeftOut(change.path));
      const leftOut = all.filter((change) => isLeftOut(change.path)).map((change) => change.path);
      // What happened to a path while a state in between left it out was seen by no one: it may be the user's.
      const unseen = leftOutTest(
        taken.flatMap((call, index) => [
          ...(index > 0 ? (call.leftOut ?? []) : []),
          ...(call.afterLeftOut ?? []),
        ]),
      );
      const touched = new Set<string>();
      for (const [from, to] of this.#journal.outsideGaps(sessionId, undid[0] ?? '', current)) {
        for (const change of await this.#changes(from, to)) touched.add(change.path);
      }
      const deleted = new Set(
        changes.filter((change) => change.action === 'delete').map((change) => change.path),
      );
      for (const change of changes) {
        if (unseen(change.path) || !this.#recordedNow(change, deleted)) touched.add(change.path);
      }
      const userChanged = changes.filter((change) => touched.has(change.path)).map((change) => change.path);
      return { sessionId, target, current, changes, userChanged, leftOut, undid };
    });
  }

  /**
   * False when what is at the change's path now is not in the `current` tree although something is there (a
   * file the snapshot left out, a folder, a path behind a link): a restore there would destroy what nothing
   * recorded. A recorded file or link on the way that the restore deletes first is no obstacle.
   */
  #recordedNow(change: PathChange & { absentNow?: boolean }, deleted: ReadonlySet<string>): boolean {
    if (change.absentNow !== true) return true;
    const parts = change.path.split('/');
    for (let end = 1; end <= parts.length; end++) {
      const prefix = parts.slice(0, end).join('/');
      const stats = lstatOrUndefined(path.join(this.workspace, prefix));
      if (stats === undefined) return true;
      if (end < parts.length && stats.isDirectory()) continue;
      return deleted.has(prefix);
    }
    return true;
  }

  /** The paths that differ between two trees, as what turning `from` into `to` takes. */
  async #changes(from: string, to: string): Promise<(PathChange & { absentNow: boolean })[]> {
    const output = zList(
      await this.#git.run(['diff-tree', '-r', '-z', '--no-renames', '--name-status', from, to]),
    );
    const changes: (PathChange & { absentNow: boolean })[] = [];
    for (let index = 0; index + 1 < output.length; index += 2) {
      const status = output[index] ?? '';
      const file = output[index + 1] ?? '';
      // `A`: `from` has no such path, so whatever is there now (if anything) was left out of it.
      changes.push({
        path: file,
        action: status.startsWith('D') ? 'delete' : 'write',
        absentNow: status.startsWith('A'),
      });
    }
    return changes;
  }

  /**
   * Carries out `plan`: the files the user changed meanwhile are kept unless `overwriteUserChanges`, and a
   * file changed since the plan was made is kept in any case. Resolves with the paths written or deleted and
   * those kept.
   */
  apply(plan: RestorePlan, overwriteUserChanges: boolean): Promise<{ restored: string[]; kept: string[] }> {
    return this.#serial(async () => {
      const keep = new Set(overwriteUserChanges ? [] : plan.userChanged);
      // A file changed while the user was being asked was never shown to them: it is kept, whatever they said.
      const now = (await this.#snapshot()).tree;
      if (now !== plan.current)
        for (const change of await this.#changes(plan.current, now)) keep.add(change.path);
      const chosen = plan.changes.filter((change) => !keep.has(change.path));
      const writes = chosen.filter((change) => change.action === 'write').map((change) => change.path);
      const deletes = chosen.filter((change) => change.action === 'delete').map((change) => change.path);
      for (const file of deletes) await this.#delete(file);
      // Git would empty a folder standing where a file goes, or a file where a folder goes, to make room:
      // whatever is still there after the deletes is something no one chose to lose, so it stays.
      const blocked = writes.filter((file) => this.#occupied(file));
      for (const file of blocked) keep.add(file);
      const open = writes.filter((file) => !keep.has(file));
      if (open.length > 0) await this.#checkout(plan.target, open);
      const tree = (await this.#snapshot()).tree;
      this.#journal.append({ kind: 'restore', sessionId: plan.sessionId, tree, undid: plan.undid });
      const kept = plan.changes.filter((change) => keep.has(change.path)).map((change) => change.path);
      const restored = chosen.filter((change) => !keep.has(change.path)).map((change) => change.path);
      return { restored, kept };
    });
  }

  /** True when writing `relative` would first remove a folder at it, or a file or link on the way to it. */
  #occupied(relative: string): boolean {
    if (behindLink(this.workspace, relative)) return true;
    return lstatOrUndefined(path.join(this.workspace, relative))?.isDirectory() === true;
  }

  async #delete(relative: string): Promise<void> {
    // A file behind a link is not at this path of the workspace: removing it would reach outside.
    if (behindLink(this.workspace, relative)) return;
    await unlink(path.join(this.workspace, relative)).catch(() => undefined);
    let folder = path.dirname(relative);
    while (folder !== '.' && folder !== '') {
      const removed = await rmdir(path.join(this.workspace, folder)).then(
        () => true,
        () => false,
      );
      if (!removed) break;
      folder = path.dirname(folder);
    }
  }

  /** Writes `paths` as `tree` holds them, through an index of its own (git replaces links on the way). */
  async #checkout(tree: string, paths: string[]): Promise<void> {
    const indexFile = path.join(this.#folder, `restore-${process.pid}.index`);
    try {
      await this.#git.run(['read-tree', tree], { indexFile });
      await this.#git.run(['checkout-index', '-z', '-f', '--stdin'], { indexFile, input: nulJoined(paths) });
    } finally {
      await rm(indexFile, { force: true });
    }
  }

  /**
   * What the session changed: a unified diff from the state before its first mutating call to the files now;
   * undefined when it changed nothing. At most `maxBytes` of it.
   */
  diff(sessionId: string, maxBytes = 256 * 1024): Promise<{ text: string; cut: boolean } | undefined> {
    const first = this.#journal.entries(sessionId).find((entry) => entry.kind === 'call');
    if (first === undefined) return Promise.resolve(undefined);
    return this.#serial(async () => {
      const current = (await this.#snapshot()).tree;
      const output = await this.#git.run([
        'diff-tree',
        '-p',
        '-r',
        '--no-renames',
        '--no-ext-diff',
        '--no-textconv',
        '--no-color',
        first.before,
        current,
      ]);
      return { text: output.subarray(0, maxBytes).toString('utf8'), cut: output.length > maxBytes };
    });
  }
}
