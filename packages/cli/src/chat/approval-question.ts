import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { structuredPatch } from 'diff';
import type { ApprovalRequest } from '../approval/policy.js';
import { SHELL_TOOL } from '../approval/rules.js';
import { neutralizeLine } from '../text/terminal-text.js';
import { createStyles, jsonOrString, type Styles, wrapLine } from './format.js';

/**
 * What the approval question shows of a call: everything that will run or be written, never a summary. A
 * shell command in full (each of its lines, wrapped to the terminal), `write_file` and `edit_file` as a
 * unified diff against the file on disk, any other tool's arguments as indented JSON. Every line has its
 * control characters shown escaped, so the text cannot redraw the question.
 */

/** The largest file the question reads to show a diff; a bigger one is diffed as if empty, and says so. */
const MAX_DIFF_SOURCE_BYTES = 2 * 1024 * 1024;
/** How long the diff may take before the question shows the texts whole instead. */
const DIFF_TIMEOUT_MS = 1000;
/** The gutter before each line of the call. */
const GUTTER = '  │ ';

function stringField(args: unknown, key: string): string | undefined {
  if (typeof args !== 'object' || args === null) return undefined;
  const value = (args as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}

/** The file's text, or undefined when it does not exist, is not a plain file inside the workspace, or is too big. */
function currentText(workspace: string, file: string): { text: string; note?: string } | undefined {
  const absolute = path.resolve(workspace, file);
  const relative = path.relative(workspace, absolute);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return undefined;
  try {
    const stat = statSync(absolute);
    if (!stat.isFile()) return undefined;
    if (stat.size > MAX_DIFF_SOURCE_BYTES) return { text: '', note: 'the file is too big to show its diff' };
    return { text: readFileSync(absolute, 'utf8') };
  } catch {
    return undefined;
  }
}

/** Line breaks as the diff shows them: a CRLF file compares like the `\n` text the model writes. */
function lf(text: string): string {
  return text.replace(/\r\n/g, '\n');
}

function diffLines(options: { file: string; before: string; after: string; styles: Styles }): string[] {
  const { styles } = options;
  const before = lf(options.before);
  const after = lf(options.after);
  const patch = structuredPatch(options.file, options.file, before, after, '', '', {
    context: 3,
    // Two big, very different texts: rather than freeze the question, show the whole old and new text.
    timeout: DIFF_TIMEOUT_MS,
  });
  if (patch === undefined) {
    return [
      styles.yellow('(too different to diff quickly: the old text, then the new one)'),
      ...before.split('\n').map((line) => styles.red(neutralizeLine(`-${line}`))),
      ...after.split('\n').map((line) => styles.green(neutralizeLine(`+${line}`))),
    ];
  }
  const lines: string[] = [];
  for (const hunk of patch.hunks) {
    // As in a unified diff, an empty side is numbered by the line before it (`@@ -0,0 +1,2 @@`).
    const oldStart = hunk.oldLines === 0 ? hunk.oldStart - 1 : hunk.oldStart;
    const newStart = hunk.newLines === 0 ? hunk.newStart - 1 : hunk.newStart;
    lines.push(styles.cyan(`@@ -${oldStart},${hunk.oldLines} +${newStart},${hunk.newLines} @@`));
    for (const line of hunk.lines) {
      if (line.startsWith('\\')) lines.push(styles.dim(line));
      else if (line.startsWith('+')) lines.push(styles.green(neutralizeLine(line)));
      else if (line.startsWith('-')) lines.push(styles.red(neutralizeLine(line)));
      else lines.push(neutralizeLine(line));
    }
  }
  if (lines.length === 0) lines.push(styles.dim('(no change)'));
  return lines;
}

function replaced(options: {
  text: string;
  oldString: string;
  newString: string;
  all: boolean;
}): string | undefined {
  const text = lf(options.text);
  const oldString = lf(options.oldString);
  if (oldString === '' || !text.includes(oldString)) return undefined;
  return options.all
    ? text.split(oldString).join(lf(options.newString))
    : text.replace(oldString, () => lf(options.newString));
}

/** The unstyled heading and body lines of one call, before wrapping. */
function describe(options: { request: ApprovalRequest; workspace: string; styles: Styles }): string[] {
  const { request, styles } = options;
  const args = request.arguments;
  if (request.toolName === SHELL_TOOL) {
    const command = stringField(args, 'command');
    if (command !== undefined) {
      const rest = otherArguments(args, ['command']);
      return [...command.split('\n').map(neutralizeLine), ...rest];
    }
  }
  const file = stringField(args, 'path');
  if (request.toolName === 'write_file' && file !== undefined) {
    const content = stringField(args, 'content') ?? '';
    const current = currentText(options.workspace, file);
    const heading = styles.bold(
      `${neutralizeLine(file)} ${current === undefined ? '(new file)' : '(replaces the file)'}`,
    );
    return [
      heading,
      ...(current?.note === undefined ? [] : [styles.yellow(current.note)]),
      ...diffLines({ file, before: current?.text ?? '', after: content, styles }),
    ];
  }
  if (request.toolName === 'edit_file' && file !== undefined) {
    const oldString = stringField(args, 'oldString') ?? '';
    const newString = stringField(args, 'newString') ?? '';
    const all =
      typeof args === 'object' && args !== null && (args as { replaceAll?: unknown }).replaceAll === true;
    const current = currentText(options.workspace, file);
    const after =
      current === undefined ? undefined : replaced({ text: current.text, oldString, newString, all });
    if (current !== undefined && after !== undefined) {
      return [
        styles.bold(`${neutralizeLine(file)}${all ? ' (every occurrence)' : ''}`),
        ...diffLines({ file, before: current.text, after, styles }),
      ];
    }
    // The edit will fail; still show exactly what was asked.
    return [
      styles.bold(`${neutralizeLine(file)} ${styles.yellow('(the text to replace is not in the file)')}`),
      ...diffLines({ file, before: oldString, after: newString, styles }),
    ];
  }
  return jsonOrString(args, 2).split('\n').map(neutralizeLine);
}

function otherArguments(args: unknown, shown: readonly string[]): string[] {
  if (typeof args !== 'object' || args === null) return [];
  return Object.entries(args as Record<string, unknown>)
    .filter(([key]) => !shown.includes(key))
    .map(([key, value]) => neutralizeLine(`${key}: ${jsonOrString(value)}`));
}

/**
 * The lines the question shows for a call, each already wrapped to `columns` with the gutter in front.
 * Styling codes are only those of `color`; the call's own text never carries any.
 */
export function callLines(options: {
  request: ApprovalRequest;
  workspace: string;
  columns: number;
  color: boolean;
}): string[] {
  const styles = createStyles(options.color);
  const room = Math.max(10, options.columns - GUTTER.length - 1);
  const gutter = styles.dim(GUTTER);
  return describe({ request: options.request, workspace: options.workspace, styles }).flatMap((line) =>
    wrapStyled(line, room).map((row) => `${gutter}${row}`),
  );
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: our own styling codes start with the escape character.
const STYLE_CODE = /\u001b\[[0-9;]*m/g;

/** Wraps a line that may hold our own styling: the codes are put back around every row. */
function wrapStyled(line: string, columns: number): string[] {
  const codes = line.match(STYLE_CODE) ?? [];
  if (codes.length === 0) return wrapLine(line, columns);
  const plain = line.replace(STYLE_CODE, '');
  const opening = line.startsWith('\u001b[') ? (codes[0] ?? '') : '';
  const closing = line.endsWith('m') && codes.length > 1 ? (codes.at(-1) ?? '') : '';
  const rows = wrapLine(plain, columns);
  if (rows.length === 1) return [line];
  return rows.map((row) => `${opening}${row}${closing}`);
}
