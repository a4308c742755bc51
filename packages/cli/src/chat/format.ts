import type { ToolOutput } from '@youyou/agent';
import stringWidth from 'string-width';
import { countOf } from '../text/plural.js';
import { neutralizeLine } from '../text/terminal-text.js';

export { createStyles, plainMessage, type Styles, wantsColor } from './style.js';

/**
 * The columns one line of text takes in a terminal (tabs to the next multiple of 8), measured by the
 * maintained `string-width` (East Asian Width, emoji sequences, zero-width and combining characters);
 * styling codes take no room.
 */
export function displayWidth(line: string): number {
  if (!line.includes('\t')) return stringWidth(line);
  let width = 0;
  for (const [index, part] of line.split('\t').entries()) {
    if (index > 0) width += 8 - (width % 8);
    width += stringWidth(part);
  }
  return width;
}

/** The characters of `text` as the terminal places them: a wide emoji sequence or a base with its marks is one. */
function graphemes(text: string): string[] {
  return Array.from(segmenter.segment(text), (segment) => segment.segment);
}

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** One line of plain (unstyled) text broken into rows of at most `columns` columns; never an empty list. */
export function wrapLine(line: string, columns: number): string[] {
  const width = Math.max(1, columns);
  if (displayWidth(line) <= width) return [line];
  const rows: string[] = [];
  let row = '';
  let used = 0;
  for (const character of graphemes(line)) {
    const next = displayWidth(character);
    if (used + next > width && row !== '') {
      rows.push(row);
      row = '';
      used = 0;
    }
    row += character;
    used += next;
  }
  rows.push(row);
  return rows;
}

/** The terminal rows text written from column 0 occupies, with the cursor left on its last row. */
export function rowsOf(text: string, columns: number): number {
  const width = Math.max(1, columns);
  let rows = 0;
  for (const line of text.split('\n')) rows += Math.max(1, Math.ceil(displayWidth(line) / width));
  return rows;
}

/** `text` cut to `max` columns, with an ellipsis when it was cut. */
export function truncate(text: string, max: number): string {
  if (max <= 0) return '';
  if (displayWidth(text) <= max) return text;
  let result = '';
  let width = 0;
  for (const character of graphemes(text)) {
    const next = displayWidth(character);
    if (width + next > max - 1) break;
    result += character;
    width += next;
  }
  return `${result}…`;
}

/** `12 ms`, `1.4 s`, `2m 05s`. */
export function formatDuration(milliseconds: number): string {
  if (milliseconds < 1000) return `${Math.round(milliseconds)} ms`;
  if (milliseconds < 60_000) return `${(milliseconds / 1000).toFixed(1)} s`;
  const seconds = Math.round(milliseconds / 1000);
  return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, '0')}s`;
}

/** The keys whose value says best what a call is about; shown first and without its name. */
const PRIMARY_KEYS = ['command', 'path', 'pattern', 'query', 'url', 'file', 'name'];
const MAX_VALUE_LENGTH = 60;

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ⏎ ');
}

function valueText(value: unknown, bare: boolean): string {
  if (typeof value === 'string') {
    if (value.includes('\n')) {
      if (!bare) return `(${countOf(lineCount(value), 'line')})`;
      // A multi-line command: its first line says what it is, the count that there is more.
      const first = value.split('\n').find((line) => line.trim() !== '') ?? '';
      return `${truncate(first.trim(), MAX_VALUE_LENGTH)} ⏎ … (${countOf(lineCount(value), 'line')})`;
    }
    const cut = truncate(value, MAX_VALUE_LENGTH);
    return bare || !/[\s"]/.test(cut) ? cut : JSON.stringify(cut);
  }
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return truncate(oneLine(jsonOrString(value)), MAX_VALUE_LENGTH);
}

/** `value` as JSON (indented by `indent` spaces when given), or `String(value)` where JSON has no text for it. */
export function jsonOrString(value: unknown, indent?: number): string {
  try {
    return JSON.stringify(value, null, indent) ?? String(value);
  } catch {
    return String(value);
  }
}

/** One line saying what a tool call was asked to do: `src/a.ts startLine=3`, control characters shown escaped. */
export function summarizeArguments(args: unknown): string {
  return neutralizeLine(summarizeRaw(args));
}

function summarizeRaw(args: unknown): string {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return args === undefined ? '' : valueText(args, true);
  }
  const entries = Object.entries(args as Record<string, unknown>);
  const primary = entries.find(([key, value]) => PRIMARY_KEYS.includes(key) && typeof value === 'string');
  const parts: string[] = [];
  if (primary !== undefined) parts.push(valueText(primary[1], true));
  for (const [key, value] of entries) {
    if (key === primary?.[0]) continue;
    parts.push(`${key}=${valueText(value, false)}`);
  }
  return oneLine(parts.join(' '));
}

function lineCount(text: string): number {
  const lines = text.split('\n');
  return lines.at(-1) === '' ? lines.length - 1 : lines.length;
}

/** What the runtime puts before the reason of a call a BeforeToolUse hook stopped (the deny-rules backstop). */
const HOOK_ABORT_PREFIX = 'Tool aborted by hook: ';
/** What the runtime puts before the reason of a call refused approval: the line says `denied: REASON`. */
const DENIED_PREFIX = /^Tool '[^']*' was denied: /;

/** What a tool call came to, in a few words: its error's first line, or the size of its output. */
export function describeOutput(output: ToolOutput): string {
  const content = output.content.trim();
  if (output.isError) {
    const first = content.split('\n')[0] ?? '';
    const reason = first.startsWith(HOOK_ABORT_PREFIX)
      ? first.slice(HOOK_ABORT_PREFIX.length)
      : first.replace(DENIED_PREFIX, 'denied: ');
    return neutralizeLine(oneLine(reason) || 'failed');
  }
  if (content === '') return 'no output';
  const count = lineCount(content);
  return countOf(count, 'line');
}

/** Word count of reasoning text, for the collapsed summary. */
export function countWords(text: string): number {
  return text.match(/\S+/g)?.length ?? 0;
}
