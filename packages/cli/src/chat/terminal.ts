import { closeSync, constants, mkdirSync, openSync, readFileSync, readSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { emitKeypressEvents } from 'node:readline';
import { neutralizeLine } from '../text/terminal-text.js';
import { type Completer, type Key, LineEditor } from './line-editor.js';
import { PromptDrawing } from './prompt-drawing.js';

/** How many prompts the history keeps. */
export const HISTORY_SIZE = 1000;

export type { Key } from './line-editor.js';

/** Turns bracketed paste on and off (xterm's mode 2004). */
export const BRACKETED_PASTE_ON = '\x1b[?2004h';
/** See `BRACKETED_PASTE_ON`. */
export const BRACKETED_PASTE_OFF = '\x1b[?2004l';

/** What one prompt came to. */
export type PromptResult =
  | { type: 'line'; text: string }
  /** Ctrl-D at an empty prompt (or the input ended). */
  | { type: 'eof' }
  /** Ctrl-C; `hadText` when it cleared a line being typed. */
  | { type: 'interrupt'; hadText: boolean };

/** Reads the history file: one prompt per line, oldest first; newlines inside a prompt are stored as `\n`. */
export function loadHistory(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) =>
      line.replace(/\\(.)/g, (_match, character: string) => (character === 'n' ? '\n' : character)),
    )
    .slice(-HISTORY_SIZE);
}

/** Writes the history file (oldest first); a failure only costs the history, so it is ignored. */
export function saveHistory(file: string, entries: readonly string[]): void {
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    const lines = entries
      .slice(-HISTORY_SIZE)
      .map((entry) => entry.replace(/\\/g, '\\\\').replace(/\n/g, '\\n'));
    writeFileSync(file, lines.length === 0 ? '' : `${lines.join('\n')}\n`, { mode: 0o600 });
  } catch {
    // The history is a convenience; a read-only home must not stop the chat.
  }
}

/**
 * The terminal of an interactive chat. Keys are always read raw: at the prompt by the line editor (with the
 * history, newest first), between prompts by whoever listens, so that Ctrl-C reaches the running turn and an
 * approval question can take a single key.
 */
export class Terminal {
  readonly input: NodeJS.ReadStream;
  readonly output: NodeJS.WriteStream;
  /** Newest first. */
  #history: string[];
  #keyListener: ((text: string | undefined, key: Key | undefined) => void) | undefined;
  #lastKeyAt = Number.NEGATIVE_INFINITY;
  #bracketedPaste = false;
  /** Between the ESC[200~ and ESC[201~ of a paste. */
  #pasting = false;
  /** Draws the prompt being read again: after a resize, or from the cursor's row (`fresh`) after Ctrl-Z. */
  #redrawPrompt: ((fresh: boolean) => void) | undefined;

  constructor(options: { input: NodeJS.ReadStream; output: NodeJS.WriteStream; history: readonly string[] }) {
    this.input = options.input;
    this.output = options.output;
    this.#history = [...options.history].reverse();
    emitKeypressEvents(this.input);
  }

  /** The history, oldest first, for saving. */
  get history(): string[] {
    return [...this.#history].reverse();
  }

  /** Terminal width. */
  get columns(): number {
    return this.output.columns ?? 80;
  }

  /** Terminal height. */
  get rows(): number {
    return this.output.rows ?? 24;
  }

  /**
   * Reads one prompt with line editing and history (`initial` is already typed: text kept from a turn). The
   * text may span lines; a bracketed paste arrives whole; Tab asks `completer` to complete the word before
   * the cursor.
   */
  readLine(prompt: string, initial = '', options: { completer?: Completer } = {}): Promise<PromptResult> {
    const editor = new LineEditor({
      history: this.#history,
      initial,
      ...(options.completer === undefined ? {} : { completer: options.completer }),
    });
    const drawing = new PromptDrawing(this.output, prompt);
    return new Promise<PromptResult>((resolve) => {
      const redraw = (fresh = false): void => {
        if (fresh) drawing.reset();
        drawing.draw(editor.view(), this.columns);
      };
      const onResize = (): void => redraw();
      const finish = (result: PromptResult, suffix = ''): void => {
        this.output.off('resize', onResize);
        this.#redrawPrompt = undefined;
        this.stopKeys();
        drawing.finish(editor.view(), this.columns, suffix);
        resolve(result);
      };
      this.output.on('resize', onResize);
      this.#redrawPrompt = redraw;
      this.startKeys((key) => {
        if (key.ctrl === true && key.name === 'z') {
          this.suspend();
          return;
        }
        const outcome = editor.key(key);
        if (outcome.type === 'submit') finish({ type: 'line', text: outcome.text });
        else if (outcome.type === 'eof') finish({ type: 'eof' });
        else if (outcome.type === 'interrupt') {
          finish({ type: 'interrupt', hadText: outcome.hadText }, outcome.hadText ? '' : '^C');
        } else if (outcome.type === 'choices') {
          // The choices go below the prompt as it stands; the prompt is drawn again under them.
          drawing.finish(editor.view(), this.columns, '');
          this.output.write(`${outcome.choices.map((choice) => neutralizeLine(choice)).join('  ')}\n`);
          redraw(true);
        } else redraw();
      });
      redraw();
    });
  }

  /** Turns on bracketed paste (a paste arrives between ESC[200~ and ESC[201~); `restore` turns it off. */
  enableBracketedPaste(): void {
    if (this.output.isTTY !== true) return;
    this.#bracketedPaste = true;
    this.output.write(BRACKETED_PASTE_ON);
  }

  /**
   * Ctrl-Z: the terminal is given back (cooked mode, no bracketed paste) and the process stops; when it is
   * continued (fg), both come back and the prompt is drawn again.
   */
  suspend(): void {
    const listener = this.#keyListener;
    if (this.input.isTTY) this.input.setRawMode(false);
    if (this.#bracketedPaste) this.output.write(BRACKETED_PASTE_OFF);
    process.once('SIGCONT', () => {
      if (this.#bracketedPaste) this.output.write(BRACKETED_PASTE_ON);
      if (listener !== undefined && this.#keyListener === listener && this.input.isTTY)
        this.input.setRawMode(true);
      this.#redrawPrompt?.(true);
    });
    this.output.write('\r\n');
    process.kill(process.pid, 'SIGTSTP');
  }

  /** When the last raw key came in (`performance.now()`); -Infinity before the first. */
  get lastKeyAt(): number {
    return this.#lastKeyAt;
  }

  /** Reads raw keys until `stopKeys`; Ctrl-C arrives as a key, not as a signal. */
  startKeys(listener: (key: Key) => void): void {
    this.stopKeys();
    const onKeypress = (_text: string | undefined, key: Key | undefined): void => {
      this.#lastKeyAt = performance.now();
      if (key === undefined) return;
      if (key.name === 'paste-start') this.#pasting = true;
      const pasted = this.#pasting;
      if (key.name === 'paste-end') this.#pasting = false;
      listener(pasted ? { ...key, pasted } : key);
    };
    this.#keyListener = onKeypress;
    this.input.on('keypress', onKeypress);
    if (this.input.isTTY) this.input.setRawMode(true);
    this.input.resume();
  }

  /** Stops reading raw keys. */
  stopKeys(): void {
    const listener = this.#keyListener;
    if (listener === undefined) return;
    this.#keyListener = undefined;
    this.input.off('keypress', listener);
    if (this.input.isTTY) this.input.setRawMode(false);
    this.input.pause();
  }

  /**
   * Throws away what was typed but not read yet, so that keys pressed before a question was drawn cannot
   * answer it: how many bytes, or undefined where that cannot be done. The terminal's input is opened a second
   * time without blocking (Linux's /proc/self/fd) and read until it is empty; the stream's own descriptor is
   * left as it is.
   */
  flushInput(): number | undefined {
    const fd = (this.input as { fd?: unknown }).fd;
    if (this.input.isTTY !== true || typeof fd !== 'number' || process.platform !== 'linux') return undefined;
    let reader: number;
    try {
      reader = openSync(
        `/proc/self/fd/${fd}`,
        constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY,
      );
    } catch {
      return undefined;
    }
    let count = 0;
    try {
      const buffer = Buffer.alloc(4096);
      // EAGAIN (nothing left) ends the loop by throwing.
      for (let read = readSync(reader, buffer, 0, buffer.length, null); read > 0; ) {
        count += read;
        read = readSync(reader, buffer, 0, buffer.length, null);
      }
    } catch {
      // Empty.
    } finally {
      closeSync(reader);
    }
    return count;
  }

  /** Gives the terminal back as it was: cooked mode and a visible cursor. */
  restore(): void {
    this.stopKeys();
    if (this.#bracketedPaste) this.output.write(BRACKETED_PASTE_OFF);
    this.#bracketedPaste = false;
    this.output.write('\x1b[?25h');
  }
}

/** True for Ctrl-C typed (a pasted ^C is text). */
export function isInterrupt(key: Key): boolean {
  return key.ctrl === true && key.name === 'c' && key.pasted !== true;
}
