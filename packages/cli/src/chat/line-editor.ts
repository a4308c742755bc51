/**
 * The prompt's line editor. Node's readline edits one line and sends each pasted line on its own, so the
 * prompt has its own editor: the text may hold newlines (Shift+Enter, Alt+Enter, `\` then Enter), a bracketed
 * paste arrives whole and is data (its ESC, CR and control sequences never act as keys), and a long paste is
 * shown as one `[pasted N lines]` item while the whole text is what gets sent.
 */

import { countOf } from '../text/plural.js';
import { neutralizeLine } from '../text/terminal-text.js';
import { displayWidth } from './format.js';

/** A key as node:readline's keypress event describes it. */
export interface Key {
  name?: string;
  sequence?: string;
  ctrl?: boolean;
  meta?: boolean;
  /** Part of a bracketed paste (between ESC[200~ and ESC[201~, the markers included): text, never a command. */
  pasted?: boolean;
}

/** A paste of more lines than this is shown as `[pasted N lines]`. */
export const PASTE_PLACEHOLDER_LINES = 5;

/** One item of the text being edited: a character (a newline included) or a long paste shown as one item. */
type Unit = { kind: 'char'; text: string } | { kind: 'paste'; text: string; lines: number };

/** What a key did to the prompt. */
export type EditOutcome =
  | { type: 'edit' }
  | { type: 'submit'; text: string }
  | { type: 'interrupt'; hadText: boolean }
  | { type: 'eof' }
  /** Tab could not complete further: these are the choices. */
  | { type: 'choices'; choices: string[] };

/** What Tab makes of the word before the cursor: its longest completion, and the choices when there are several. */
export interface Completion {
  readonly replacement: string;
  readonly choices: readonly string[];
}

/** How the editor completes a word (Tab); undefined when it cannot. */
export type Completer = (word: string) => Completion | undefined;

/** `[pasted N lines]`, the form a long paste takes on the prompt. */
export function pasteLabel(lines: number): string {
  return `[pasted ${countOf(lines, 'line')}]`;
}

const ESC = '\x1b';

/** A newline key: CSI 13;Nu (kitty's protocol, any modifier) or Alt+Enter (ESC CR). */
export function isNewlineKey(key: Key): boolean {
  const sequence = key.sequence ?? '';
  if (sequence.startsWith(ESC) && /^\[13;\d+u$/.test(sequence.slice(1))) return true;
  return key.meta === true && (key.name === 'return' || key.name === 'enter');
}

/**
 * xterm's modifyOtherKeys sends Shift+Enter as CSI 27;2;13~, which node's key decoder splits into `ESC[27;2;`
 * and then `1`, `3`, `~` as keys of their own: the editor puts them together again.
 */
function startsModifiedKey(key: Key): boolean {
  const sequence = key.sequence ?? '';
  return sequence.startsWith(ESC) && /^\[27;\d+;$/.test(sequence.slice(1));
}

/** The text being edited, the cursor in it, a paste being received, and the history. */
export class LineEditor {
  #units: Unit[] = [];
  #cursor = 0;
  /** Between ESC[200~ and ESC[201~: what arrives is pasted text. */
  #pasting: string | undefined;
  /** Newest first. */
  readonly #history: string[];
  /** -1 while editing the draft; otherwise the history entry shown. */
  #historyIndex = -1;
  #draft: Unit[] = [];
  readonly #completer: Completer | undefined;
  /** The key code of a CSI 27;N;CODE~ key so far. */
  #modifiedKey: string | undefined;

  constructor(options: { history: string[]; initial: string; completer?: Completer }) {
    this.#history = options.history;
    this.#completer = options.completer;
    this.#insertText(options.initial);
  }

  /** The whole text, long pastes included. */
  get text(): string {
    return this.#units.map((unit) => unit.text).join('');
  }

  /** The lines as the prompt shows them (long pastes as their label), and where the cursor is: line and column. */
  view(): { lines: string[]; cursorLine: number; cursorColumn: number } {
    const lines: string[] = [''];
    let cursorLine = 0;
    let cursorColumn = 0;
    this.#units.forEach((unit, index) => {
      if (index === this.#cursor) {
        cursorLine = lines.length - 1;
        cursorColumn = displayWidth(lines[cursorLine] ?? '');
      }
      if (unit.kind === 'char' && unit.text === '\n') lines.push('');
      else {
        const shown = unit.kind === 'paste' ? pasteLabel(unit.lines) : neutralizeLine(unit.text);
        lines[lines.length - 1] += shown;
      }
    });
    if (this.#cursor >= this.#units.length) {
      cursorLine = lines.length - 1;
      cursorColumn = displayWidth(lines[cursorLine] ?? '');
    }
    return { lines, cursorLine, cursorColumn };
  }

  /** Takes one key. */
  key(key: Key): EditOutcome {
    if (key.name === 'paste-start' && this.#pasting === undefined) {
      this.#pasting = '';
      return { type: 'edit' };
    }
    // The rest of a paste that began before this prompt (while a turn ran) is still pasted text.
    if (key.pasted === true && this.#pasting === undefined && key.name !== 'paste-end') this.#pasting = '';
    // Inside a paste everything is text, a second ESC[200~ included.
    if (this.#pasting !== undefined) {
      if (key.name === 'paste-end') this.#endPaste();
      else this.#pasting += key.sequence ?? '';
      return { type: 'edit' };
    }
    if (key.name === 'paste-end') return { type: 'edit' };
    if (this.#modifiedKey !== undefined) return this.#continueModifiedKey(key);
    if (startsModifiedKey(key)) {
      this.#modifiedKey = '';
      return { type: 'edit' };
    }
    if (isNewlineKey(key)) return this.#insert([{ kind: 'char', text: '\n' }]);
    if (key.ctrl === true) return this.#controlKey(key);
    switch (key.name) {
      case 'return':
      case 'enter':
        return this.#enter();
      case 'backspace':
        if (this.#cursor > 0) this.#removeRange(this.#cursor - 1, this.#cursor);
        return { type: 'edit' };
      case 'delete':
        this.#removeRange(this.#cursor, this.#cursor + 1);
        return { type: 'edit' };
      case 'left':
        this.#cursor = Math.max(0, this.#cursor - 1);
        return { type: 'edit' };
      case 'right':
        this.#cursor = Math.min(this.#units.length, this.#cursor + 1);
        return { type: 'edit' };
      case 'home':
        this.#cursor = this.#lineStart();
        return { type: 'edit' };
      case 'end':
        this.#cursor = this.#lineEnd();
        return { type: 'edit' };
      case 'up':
        return this.#vertical(-1);
      case 'down':
        return this.#vertical(1);
      case 'tab':
        return this.#complete();
      default:
        return this.#typed(key);
    }
  }

  /** The digits of a CSI 27;N;CODE~ key until its `~`: Enter (13) with a modifier is a newline; others are dropped. */
  #continueModifiedKey(key: Key): EditOutcome {
    const character = key.sequence ?? '';
    if (/^\d$/.test(character) && (this.#modifiedKey ?? '').length < 8) {
      this.#modifiedKey += character;
      return { type: 'edit' };
    }
    const code = this.#modifiedKey;
    this.#modifiedKey = undefined;
    if (character === '~' && code === '13') return this.#insert([{ kind: 'char', text: '\n' }]);
    // Not such a key after all: what came is a key of its own.
    return character === '~' ? { type: 'edit' } : this.key(key);
  }

  #controlKey(key: Key): EditOutcome {
    switch (key.name) {
      case 'c':
        return { type: 'interrupt', hadText: this.#units.length > 0 };
      case 'd':
        if (this.#units.length === 0) return { type: 'eof' };
        this.#removeRange(this.#cursor, this.#cursor + 1);
        return { type: 'edit' };
      case 'a':
        this.#cursor = this.#lineStart();
        return { type: 'edit' };
      case 'e':
        this.#cursor = this.#lineEnd();
        return { type: 'edit' };
      case 'b':
        this.#cursor = Math.max(0, this.#cursor - 1);
        return { type: 'edit' };
      case 'f':
        this.#cursor = Math.min(this.#units.length, this.#cursor + 1);
        return { type: 'edit' };
      case 'h':
        if (this.#cursor > 0) this.#removeRange(this.#cursor - 1, this.#cursor);
        return { type: 'edit' };
      case 'u':
        this.#removeRange(this.#lineStart(), this.#cursor);
        return { type: 'edit' };
      case 'k':
        this.#removeRange(this.#cursor, this.#lineEnd());
        return { type: 'edit' };
      case 'w':
        this.#removeRange(this.#wordStart(), this.#cursor);
        return { type: 'edit' };
      case 'p':
        return this.#vertical(-1);
      case 'n':
        return this.#vertical(1);
      default:
        return { type: 'edit' };
    }
  }

  /** Enter sends, unless the character before the cursor is `\`: then it becomes a newline. */
  #enter(): EditOutcome {
    const before = this.#units[this.#cursor - 1];
    if (before?.kind === 'char' && before.text === '\\') {
      this.#units[this.#cursor - 1] = { kind: 'char', text: '\n' };
      return { type: 'edit' };
    }
    const text = this.text;
    if (text.trim() !== '') {
      const existing = this.#history.indexOf(text);
      if (existing !== -1) this.#history.splice(existing, 1);
      this.#history.unshift(text);
    }
    return { type: 'submit', text };
  }

  #typed(key: Key): EditOutcome {
    const text = key.sequence;
    if (text === undefined || key.meta === true) return { type: 'edit' };
    // Only printable text is typed: function keys and other sequences are not part of a message.
    if (neutralizeLine(text) !== text) return { type: 'edit' };
    this.#insertText(text);
    return { type: 'edit' };
  }

  /** A paste ended: CR and CRLF become newlines; a long one is one item. */
  #endPaste(): void {
    const text = (this.#pasting ?? '').replace(/\r\n?/g, '\n');
    this.#pasting = undefined;
    this.#insertPasted(text);
  }

  /** Inserts pasted (or recalled) text: as it is, or as one `[pasted N lines]` item when long. */
  #insertPasted(text: string): void {
    if (text === '') return;
    const lines = text.replace(/\n$/, '').split('\n').length;
    if (lines > PASTE_PLACEHOLDER_LINES) this.#insert([{ kind: 'paste', text, lines }]);
    else this.#insertText(text);
  }

  #insertText(text: string): void {
    this.#insert(Array.from(text, (character): Unit => ({ kind: 'char', text: character })));
  }

  #insert(units: Unit[]): EditOutcome {
    this.#units.splice(this.#cursor, 0, ...units);
    this.#cursor += units.length;
    return { type: 'edit' };
  }

  #removeRange(start: number, end: number): void {
    const from = Math.max(0, start);
    const to = Math.min(this.#units.length, end);
    if (to <= from) return;
    this.#units.splice(from, to - from);
    this.#cursor = from;
  }

  #isNewline(index: number): boolean {
    const unit = this.#units[index];
    return unit?.kind === 'char' && unit.text === '\n';
  }

  #lineStart(from = this.#cursor): number {
    let index = from;
    while (index > 0 && !this.#isNewline(index - 1)) index -= 1;
    return index;
  }

  #lineEnd(from = this.#cursor): number {
    let index = from;
    while (index < this.#units.length && !this.#isNewline(index)) index += 1;
    return index;
  }

  #wordStart(): number {
    let index = this.#cursor;
    const isSpace = (at: number) => /^\s$/.test(this.#units[at]?.text ?? '');
    while (index > 0 && isSpace(index - 1) && !this.#isNewline(index - 1)) index -= 1;
    while (index > 0 && !isSpace(index - 1)) index -= 1;
    return index;
  }

  /** Up/Down move between the lines of the text; past its first or last line they browse the history. */
  #vertical(direction: -1 | 1): EditOutcome {
    const start = this.#lineStart();
    const column = this.#cursor - start;
    if (direction === -1 && start > 0) {
      const previousStart = this.#lineStart(start - 1);
      this.#cursor = Math.min(previousStart + column, start - 1);
      return { type: 'edit' };
    }
    const end = this.#lineEnd();
    if (direction === 1 && end < this.#units.length) {
      const nextStart = end + 1;
      this.#cursor = Math.min(nextStart + column, this.#lineEnd(nextStart));
      return { type: 'edit' };
    }
    const index = this.#historyIndex - direction;
    if (index < -1 || index >= this.#history.length) return { type: 'edit' };
    if (this.#historyIndex === -1) this.#draft = this.#units;
    this.#historyIndex = index;
    if (index === -1) this.#units = this.#draft;
    else {
      this.#units = [];
      this.#cursor = 0;
      this.#insertPasted(this.#history[index] ?? '');
    }
    this.#cursor = this.#units.length;
    return { type: 'edit' };
  }

  /** Tab: the completer replaces the word before the cursor. */
  #complete(): EditOutcome {
    if (this.#completer === undefined) return { type: 'edit' };
    const start = this.#wordStartForCompletion();
    const word = this.#units
      .slice(start, this.#cursor)
      .map((unit) => unit.text)
      .join('');
    const completion = this.#completer(word);
    if (completion === undefined) return { type: 'edit' };
    if (completion.replacement === word) {
      return completion.choices.length > 1
        ? { type: 'choices', choices: [...completion.choices] }
        : { type: 'edit' };
    }
    this.#removeRange(start, this.#cursor);
    this.#insertText(completion.replacement);
    return { type: 'edit' };
  }

  #wordStartForCompletion(): number {
    let index = this.#cursor;
    while (index > 0) {
      const unit = this.#units[index - 1];
      if (unit === undefined || unit.kind === 'paste' || /^\s$/.test(unit.text)) break;
      index -= 1;
    }
    return index;
  }
}
