/**
 * The checkpoints' journal (`journal.jsonl`): which session, turn and call each recorded state belongs to, the
 * restores and what they took back, and which session was forked from which. Append-only, one JSON line each.
 */
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** A journal line: a mutating call with the trees before and after it, a restore and what it took back, a fork. */
export type JournalEntry =
  | {
      kind: 'call';
      sessionId: string;
      turnId: string;
      callId: string;
      tool: string;
      before: string;
      after: string;
      /** Paths `before` left out (over the limits, unreadable, behind a link, ignored; a folder ends in `/`). */
      leftOut?: string[];
      /** Paths `after` left out, the same way. */
      afterLeftOut?: string[];
    }
  | { kind: 'restore'; sessionId: string; tree: string; undid: string[] }
  /** Session `sessionId` was forked from `from`: the calls `from` made before count as its own. */
  | { kind: 'fork'; sessionId: string; from: string };

/** A call's line. */
export type CallEntry = Extract<JournalEntry, { kind: 'call' }>;

/** A git object name: only such text is ever handed to git from the journal. */
const OBJECT_NAME = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

function isString(value: unknown): value is string {
  return typeof value === 'string';
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every(isString);
}

/** The line as an entry, or undefined when it is not one (cut by a crash, or not written by youyou). */
function entryOf(value: unknown): JournalEntry | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const entry = value as Record<string, unknown>;
  if (!isString(entry.sessionId)) return undefined;
  if (entry.kind === 'call') {
    const fields = [entry.turnId, entry.callId, entry.tool, entry.before, entry.after];
    if (
      !fields.every(isString) ||
      !OBJECT_NAME.test(String(entry.before)) ||
      !OBJECT_NAME.test(String(entry.after))
    )
      return undefined;
    if (![entry.leftOut, entry.afterLeftOut].every((list) => list === undefined || isStringList(list)))
      return undefined;
    return entry as CallEntry;
  }
  if (entry.kind === 'restore') {
    if (!isString(entry.tree) || !OBJECT_NAME.test(entry.tree)) return undefined;
    if (!Array.isArray(entry.undid) || !entry.undid.every(isString)) return undefined;
    return entry as Extract<JournalEntry, { kind: 'restore' }>;
  }
  if (entry.kind === 'fork' && isString(entry.from)) return entry as Extract<JournalEntry, { kind: 'fork' }>;
  return undefined;
}

/** The journal of one workspace's store, kept in `folder`. */
export class CheckpointJournal {
  readonly #folder: string;

  constructor(folder: string) {
    this.#folder = folder;
  }

  #file(): string {
    return path.join(this.#folder, 'journal.jsonl');
  }

  /** Adds a line. */
  append(entry: JournalEntry): void {
    mkdirSync(this.#folder, { recursive: true, mode: 0o700 });
    appendFileSync(this.#file(), `${JSON.stringify(entry)}\n`, { mode: 0o600 });
  }

  /**
   * The entries of `sessionId`, oldest first, with those of the session it was forked from (up to the fork)
   * before them; a line that is not an entry is skipped.
   */
  entries(sessionId: string): JournalEntry[] {
    let text: string;
    try {
      text = readFileSync(this.#file(), 'utf8');
    } catch {
      return [];
    }
    const all: JournalEntry[] = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        const entry = entryOf(JSON.parse(line));
        if (entry !== undefined) all.push(entry);
      } catch {
        // A line cut by a crash: the entries around it still count.
      }
    }
    return lineage(all, sessionId);
  }

  /** The session's calls that no restore has taken back, oldest first. */
  liveCalls(sessionId: string): CallEntry[] {
    const entries = this.entries(sessionId);
    const undone = new Set(entries.flatMap((entry) => (entry.kind === 'restore' ? entry.undid : [])));
    return entries.filter((entry): entry is CallEntry => entry.kind === 'call' && !undone.has(entry.callId));
  }

  /**
   * The pairs of states between which something other than this session changed the files: from each state
   * youyou left the workspace in (after a call, after a restore) to the state before the session's next call,
   * and from the last one to `current` — all from the call `fromCallId` on.
   */
  outsideGaps(sessionId: string, fromCallId: string, current: string): [string, string][] {
    const entries = this.entries(sessionId);
    const start = entries.findIndex((entry) => entry.kind === 'call' && entry.callId === fromCallId);
    const gaps: [string, string][] = [];
    let left: string | undefined;
    for (const entry of entries.slice(Math.max(0, start))) {
      if (entry.kind === 'call') {
        if (left !== undefined && left !== entry.before) gaps.push([left, entry.before]);
        left = entry.after;
      } else if (entry.kind === 'restore') left = entry.tree;
    }
    if (left !== undefined && left !== current) gaps.push([left, current]);
    return gaps;
  }
}

/** The entries of `sessionId` and, before the line that forked it, those of its source (and theirs). */
function lineage(all: readonly JournalEntry[], sessionId: string, seen = new Set<string>()): JournalEntry[] {
  seen.add(sessionId);
  const result: JournalEntry[] = [];
  all.forEach((entry, index) => {
    if (entry.sessionId !== sessionId) return;
    if (entry.kind === 'fork' && !seen.has(entry.from)) {
      result.push(...lineage(all.slice(0, index), entry.from, seen));
    }
    result.push(entry);
  });
  return result;
}
