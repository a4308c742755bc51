import type { ToolOutput } from '@youyou/agent';

/** ANSI styling that turns into plain text when colour is off. */
export interface Styles {
  dim(text: string): string;
  bold(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

function wrap(open: number, close: number): (text: string) => string {
  return (text) => (text === '' ? '' : `\x1b[${open}m${text}\x1b[${close}m`);
}

const identity = (text: string): string => text;

/** Styles for a stream: ANSI codes only when `color` is true. */
export function createStyles(color: boolean): Styles {
  if (!color)
    return {
      dim: identity,
      bold: identity,
      red: identity,
      green: identity,
      yellow: identity,
      cyan: identity,
    };
  return {
    dim: wrap(2, 22),
    bold: wrap(1, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
  };
}

/** Whether a stream gets colours: a terminal, and NO_COLOR unset or empty (https://no-color.org). */
export function wantsColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && (env.NO_COLOR === undefined || env.NO_COLOR === '');
}

/** True for code points a terminal draws two columns wide (CJK, Hangul, full-width forms, most emoji). */
function isWide(codePoint: number): boolean {
  return (
    (codePoint >= 0x1100 && codePoint <= 0x115f) ||
    (codePoint >= 0x2e80 && codePoint <= 0xa4cf) ||
    (codePoint >= 0xac00 && codePoint <= 0xd7a3) ||
    (codePoint >= 0xf900 && codePoint <= 0xfaff) ||
    (codePoint >= 0xfe30 && codePoint <= 0xfe4f) ||
    (codePoint >= 0xff00 && codePoint <= 0xff60) ||
    (codePoint >= 0xffe0 && codePoint <= 0xffe6) ||
    (codePoint >= 0x1f300 && codePoint <= 0x1faff) ||
    (codePoint >= 0x20000 && codePoint <= 0x3fffd)
  );
}

/** The columns one line of plain text takes in a terminal (tabs to the next multiple of 8). */
export function displayWidth(line: string): number {
  let width = 0;
  for (const character of line) {
    const codePoint = character.codePointAt(0) ?? 0;
    if (character === '\t') width += 8 - (width % 8);
    else if (codePoint < 0x20 || (codePoint >= 0x7f && codePoint < 0xa0)) continue;
    else if (codePoint >= 0x300 && codePoint <= 0x36f) continue;
    else width += isWide(codePoint) ? 2 : 1;
  }
  return width;
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
  for (const character of text) {
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
    if (value.includes('\n')) return `(${lineCount(value)} lines)`;
    const cut = truncate(value, MAX_VALUE_LENGTH);
    return bare || !/[\s"]/.test(cut) ? cut : JSON.stringify(cut);
  }
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  let json: string;
  try {
    json = JSON.stringify(value) ?? String(value);
  } catch {
    json = String(value);
  }
  return truncate(oneLine(json), MAX_VALUE_LENGTH);
}

/** One line saying what a tool call was asked to do: `src/a.ts startLine=3`. */
export function summarizeArguments(args: unknown): string {
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

/** What the runtime puts before the reason of a call a BeforeToolUse hook stopped. */
const HOOK_ABORT_PREFIX = 'Tool aborted by hook: ';

/** What a tool call came to, in a few words: its error's first line, or the size of its output. */
export function describeOutput(output: ToolOutput): string {
  const content = output.content.trim();
  if (output.isError) {
    const first = content.split('\n')[0] ?? '';
    return (
      oneLine(first.startsWith(HOOK_ABORT_PREFIX) ? first.slice(HOOK_ABORT_PREFIX.length) : first) || 'failed'
    );
  }
  if (content === '') return 'no output';
  const count = lineCount(content);
  return count === 1 ? '1 line' : `${count} lines`;
}

/** Word count of reasoning text, for the collapsed summary. */
export function countWords(text: string): number {
  return text.match(/\S+/g)?.length ?? 0;
}

/** An error message without its `[CODE] ` prefix, as the user reads it. */
export function plainMessage(message: string): string {
  return message.replace(/^\[[A-Z_]+\] /, '');
}
