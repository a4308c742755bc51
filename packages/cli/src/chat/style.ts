import { neutralize } from '../text/terminal-text.js';

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

/** An error message without its `[CODE] ` prefix, as the user reads it, its control characters shown escaped. */
export function plainMessage(message: string): string {
  return neutralize(message.replace(/^\[[A-Z_]+\] /, ''));
}
