/**
 * `@path` in a message: the file's text is attached to the message as the read_file tool would return it
 * (the same confinement to the workspace, binary refusal and caps: 2000 lines or 256 KiB, with a note where it
 * stopped). A path outside the workspace (`@../x`, `@/etc/x`, a symlink that leads out), under a path hidden
 * from the shell, or refused to read_file by a deny rule is not attached, and the screen says why.
 */
import { readdirSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import type { ToolHandler } from '@youyou/agent';
import { type ApprovalRules, judgeByRules } from '../../approval/rules.js';
import type { Styles } from '../../chat/format.js';
import type { Completion } from '../../chat/line-editor.js';
import { countOf } from '../../text/plural.js';
import { neutralizeLine } from '../../text/terminal-text.js';
import { touchedPathResolver } from '../../tools/index.js';

/** What a mention check needs of the chat. */
export interface MentionScope {
  /** The workspace root. */
  readonly root: string;
  /** Paths hidden from the shell (absolute): never attached nor completed. */
  readonly hiddenPaths: readonly string[];
  readonly rules: ApprovalRules;
  readonly tools: readonly ToolHandler[];
}

/** What became of one mention: attached (with its line count) or not (and why). */
export type MentionNote =
  | { path: string; attached: true; lines: number }
  | { path: string; attached: false; reason: string };

/** A message with its mentioned files attached, and one line per mention for the screen. */
export interface AttachedMessage {
  readonly text: string;
  readonly notes: MentionNote[];
}

/** `@` at the start or after white space, then a path up to the next white space. */
const MENTION = /(?:^|\s)@([^\s@][^\s]*)/g;

/** The mentioned paths of a message, each once, in order; a trailing `,.;:!?)` is punctuation, not path. */
export function mentionedPaths(text: string): string[] {
  const paths = new Set<string>();
  for (const match of text.matchAll(MENTION)) {
    const given = (match[1] ?? '').replace(/[,.;:!?)]+$/, '');
    if (given !== '') paths.add(given);
  }
  return [...paths];
}

function realOrUndefined(target: string): string | undefined {
  try {
    return realpathSync(target);
  } catch {
    return undefined;
  }
}

function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** Why `given` may not be read for the user, or undefined when it may: outside, hidden. */
function outOfScope(scope: MentionScope, given: string): string | undefined {
  if (path.isAbsolute(given) || given.startsWith('~')) return 'outside the workspace';
  const root = realOrUndefined(scope.root) ?? scope.root;
  const lexical = path.resolve(root, given);
  if (!isInside(root, lexical)) return 'outside the workspace';
  const real = realOrUndefined(lexical);
  if (real === undefined) return undefined;
  if (!isInside(root, real)) return 'outside the workspace (a symlink leads out)';
  for (const hidden of scope.hiddenPaths) {
    const hiddenReal = realOrUndefined(hidden) ?? hidden;
    // As in the sandbox, a hidden folder that holds the workspace does not hide the workspace from itself.
    if (isInside(hiddenReal, root)) continue;
    if (isInside(hiddenReal, real) || isInside(hiddenReal, lexical)) return 'a path hidden from the shell';
  }
  return undefined;
}

/** Reads one mentioned file as read_file does; the text to attach, or why it is not attached. */
async function readMention(
  scope: MentionScope,
  given: string,
): Promise<{ ok: true; content: string } | { ok: false; reason: string }> {
  const outside = outOfScope(scope, given);
  if (outside !== undefined) return { ok: false, reason: outside };
  const args = { path: given };
  const touched = await touchedPathResolver(scope.root)({ toolName: 'read_file', arguments: args });
  const verdict = judgeByRules(scope.rules, 'read_file', args, touched);
  if (verdict?.verdict === 'deny') return { ok: false, reason: `denied by the rule ${verdict.rule.text}` };
  const tool = scope.tools.find((candidate) => candidate.name === 'read_file');
  if (tool === undefined) return { ok: false, reason: 'the read_file tool is not there' };
  const output = await tool.execute({
    callId: 'mention',
    arguments: args,
    sessionId: 'prompt',
    turnId: 'prompt',
    signal: new AbortController().signal,
  });
  return output.isError ? { ok: false, reason: output.content } : { ok: true, content: output.content };
}

/**
 * The message with each mentioned file it may read attached after it, as `<file path="…">` blocks holding
 * read_file's numbered lines (a file over the caps ends with read_file's note of where it stopped).
 */
export async function attachMentions(scope: MentionScope, text: string): Promise<AttachedMessage> {
  const notes: AttachedMessage['notes'] = [];
  const blocks: string[] = [];
  for (const given of mentionedPaths(text)) {
    const read = await readMention(scope, given);
    if (!read.ok) {
      notes.push({ path: given, attached: false, reason: read.reason });
      continue;
    }
    notes.push({
      path: given,
      attached: true,
      lines: read.content === '' ? 0 : read.content.split('\n').length,
    });
    blocks.push(`<file path=${JSON.stringify(given)}>\n${read.content}\n</file>`);
  }
  if (blocks.length === 0) return { text, notes };
  return { text: `${text}\n\n${blocks.join('\n\n')}`, notes };
}

/** One line per mention for the screen, the paths and reasons neutralised. */
export function mentionNotesText(notes: readonly MentionNote[], styles: Styles): string {
  return notes
    .map((note) =>
      note.attached
        ? styles.dim(`attached @${neutralizeLine(note.path)} (${countOf(note.lines, 'line')})\n`)
        : styles.yellow(`@${neutralizeLine(note.path)} not attached: ${neutralizeLine(note.reason)}\n`),
    )
    .join('');
}

/**
 * Tab after `@partial`: the longest completion of the path among the workspace's entries (a folder gets its
 * `/`), and the entries it could be. Nothing outside the workspace is offered: not `@../`, absolute paths,
 * symlinks that lead out, hidden paths, nor paths a deny rule refuses to read_file.
 */
export function completeMention(scope: MentionScope, word: string): Completion | undefined {
  if (!word.startsWith('@')) return undefined;
  const given = word.slice(1);
  const slash = given.lastIndexOf('/');
  const folderPart = slash === -1 ? '' : given.slice(0, slash + 1);
  const prefix = given.slice(slash + 1);
  if (outOfScope(scope, folderPart === '' ? '.' : folderPart) !== undefined) return undefined;
  let names: string[];
  try {
    names = readdirSync(path.resolve(scope.root, folderPart === '' ? '.' : folderPart));
  } catch {
    return undefined;
  }
  const offered = (name: string): boolean => {
    const candidate = `${folderPart}${name}`;
    if (outOfScope(scope, candidate) !== undefined) return false;
    return judgeByRules(scope.rules, 'read_file', { path: candidate })?.verdict !== 'deny';
  };
  const matches = names
    .filter((name) => name.startsWith(prefix) && (prefix.startsWith('.') || !name.startsWith('.')))
    .filter(offered)
    .sort();
  const first = matches[0];
  if (first === undefined) return undefined;
  let common = first;
  for (const name of matches) {
    while (!name.startsWith(common)) common = common.slice(0, -1);
  }
  let completed = `${folderPart}${common}`;
  if (matches.length === 1 && isFolder(path.resolve(scope.root, completed))) completed += '/';
  return { replacement: `@${completed}`, choices: matches };
}

function isFolder(target: string): boolean {
  try {
    return statSync(target).isDirectory();
  } catch {
    return false;
  }
}
