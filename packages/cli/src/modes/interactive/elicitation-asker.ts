import { createInterface } from 'node:readline';
import {
  type ElicitationAnswer,
  type ElicitationField,
  type ElicitationRequest,
  type ElicitationValue,
  fieldProblem,
} from '@youyou/mcp';
import type { Styles } from '../../chat/format.js';
import type { Terminal } from '../../chat/terminal.js';
import { neutralize, neutralizeLine } from '../../text/terminal-text.js';

/** What one line read came to: the text, Ctrl-C, or the end of input (Ctrl-D) / the question withdrawn. */
type LineRead = { type: 'line'; text: string } | { type: 'interrupt' } | { type: 'end' };

/** Where the questions are drawn and how the turn's keys are handed over. */
export interface ElicitationAskerOptions {
  terminal: Terminal;
  styles: Styles;
  write: (text: string) => void;
  /** Runs a question after the ones already asked (the approval questions share the terminal). */
  inTurn: <T>(ask: () => Promise<T>) => Promise<T>;
  /** Before the question is drawn: the turn's view takes itself off the screen; it answers how to draw it again. */
  beforeAsking: () => (() => void) | undefined;
  /** After it is answered: the running turn reads its keys again. */
  afterAsking: () => void;
}

/**
 * Asks an MCP server's question (elicitation) on the terminal: first whether to answer at all (y answers,
 * n declines, Ctrl-C cancels), then one line per field, checked against the field before the next. Server
 * text is shown with its control characters escaped. The answers stay out of the prompt history.
 */
export class ElicitationAsker {
  readonly #options: ElicitationAskerOptions;
  #onScreen: Promise<void> | undefined;

  constructor(options: ElicitationAskerOptions) {
    this.#options = options;
  }

  /** Settles when the question on screen is answered; undefined while none is (the turn's events wait for it). */
  get onScreen(): Promise<void> | undefined {
    return this.#onScreen;
  }

  /** The user's answer; a question withdrawn by the server (its signal) is cancelled. */
  ask(request: ElicitationRequest): Promise<ElicitationAnswer> {
    return this.#options.inTurn(async () => {
      if (request.signal.aborted) return { action: 'cancel' };
      let answered: (() => void) | undefined;
      this.#onScreen = new Promise<void>((resolve) => {
        answered = resolve;
      });
      const redraw = this.#options.beforeAsking();
      try {
        return await this.#askNow(request);
      } finally {
        this.#options.afterAsking();
        redraw?.();
        this.#onScreen = undefined;
        answered?.();
      }
    });
  }

  async #askNow(request: ElicitationRequest): Promise<ElicitationAnswer> {
    const { styles, write } = this.#options;
    write(`${styles.yellow(`MCP server "${request.server}" asks:`)} ${neutralize(request.message)}\n`);
    for (;;) {
      const read = await this.#readLine(
        'Answer it? [y]es · [n]o, decline · Ctrl-C cancels: ',
        request.signal,
      );
      if (request.signal.aborted) return { action: 'cancel' };
      if (read.type === 'interrupt') return this.#said('cancel');
      if (read.type === 'end') return this.#said('decline');
      if (/^\s*y(es)?\s*$/i.test(read.text)) break;
      if (/^\s*n(o)?\s*$/i.test(read.text)) return this.#said('decline');
    }
    const content: Record<string, ElicitationValue> = {};
    for (const field of request.fields) {
      const value = await this.#askField(field, request.signal);
      if (request.signal.aborted) return { action: 'cancel' };
      if (value === 'interrupt') return this.#said('cancel');
      if (value === 'end') return this.#said('decline');
      if (value !== undefined) content[field.name] = value;
    }
    write(styles.dim('Answer sent.\n'));
    return { action: 'accept', content };
  }

  #said(action: 'decline' | 'cancel'): ElicitationAnswer {
    this.#options.write(this.#options.styles.dim(action === 'decline' ? 'Declined.\n' : 'Cancelled.\n'));
    return { action };
  }

  /** One field's value (undefined: an optional field left empty), asked again until it fits. */
  async #askField(
    field: ElicitationField,
    signal: AbortSignal,
  ): Promise<ElicitationValue | undefined | 'interrupt' | 'end'> {
    const { styles, write } = this.#options;
    if (field.description !== undefined) write(styles.dim(`  ${neutralizeLine(field.description)}\n`));
    if (field.type === 'enum') {
      field.options.forEach((option, index) => {
        write(`  ${index + 1}. ${neutralizeLine(option.label)}\n`);
      });
    }
    const hint = fieldHint(field);
    const label = `${neutralizeLine(field.title)}${field.required ? '*' : ''}${hint === '' ? '' : ` ${hint}`}: `;
    for (;;) {
      const read = await this.#readLine(label, signal);
      if (read.type !== 'line') return read.type;
      const text = read.text.trim();
      if (text === '') {
        if (field.default !== undefined) return field.default;
        if (!field.required) return undefined;
        write(styles.red('  an answer is needed\n'));
        continue;
      }
      const value = parseValue(field, text);
      const problem = value === undefined ? 'not understood' : fieldProblem(field, value);
      if (value !== undefined && problem === undefined) return value;
      write(styles.red(`  ${problem}\n`));
    }
  }

  /** Reads one line with a readline of its own: no history, so answers never come back with ↑. */
  #readLine(prompt: string, signal: AbortSignal): Promise<LineRead> {
    const { terminal } = this.#options;
    terminal.stopKeys();
    const readline = createInterface({
      input: terminal.input,
      output: terminal.output,
      terminal: true,
      history: [],
      historySize: 0,
      prompt,
    });
    return new Promise<LineRead>((resolve) => {
      let settled = false;
      const finish = (result: LineRead): void => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        readline.close();
        resolve(result);
      };
      const onAbort = (): void => {
        terminal.output.write(this.#options.styles.dim('\n(the server withdrew the question)\n'));
        finish({ type: 'end' });
      };
      signal.addEventListener('abort', onAbort);
      readline.on('line', (text: string) => finish({ type: 'line', text }));
      readline.on('SIGINT', () => {
        terminal.output.write('^C\n');
        finish({ type: 'interrupt' });
      });
      readline.on('close', () => finish({ type: 'end' }));
      readline.prompt();
    });
  }
}

/** What the field's line shows after its title: the kind of answer and the default. */
function fieldHint(field: ElicitationField): string {
  let hint: string;
  switch (field.type) {
    case 'enum':
      hint = `(1–${field.options.length})`;
      break;
    case 'boolean':
      hint = '[y/n]';
      break;
    case 'number': {
      const range =
        field.minimum !== undefined && field.maximum !== undefined
          ? ` ${field.minimum}–${field.maximum}`
          : '';
      hint = `(${field.integer ? 'whole number' : 'number'}${range})`;
      break;
    }
    default:
      hint = '';
  }
  if (field.default !== undefined) hint += ` [${neutralizeLine(String(field.default))}]`;
  return hint.trim();
}

/** The typed text as the field's kind of value; undefined when it cannot be one. */
function parseValue(field: ElicitationField, text: string): ElicitationValue | undefined {
  switch (field.type) {
    case 'string':
      return text;
    case 'number': {
      const value = Number(text);
      return Number.isFinite(value) ? value : undefined;
    }
    case 'boolean':
      if (/^y(es)?$|^true$/i.test(text)) return true;
      if (/^no?$|^false$/i.test(text)) return false;
      return undefined;
    case 'enum': {
      const index = Number(text);
      if (Number.isInteger(index) && index >= 1 && index <= field.options.length)
        return field.options[index - 1]?.value;
      return field.options.find((option) => option.value === text)?.value;
    }
  }
}
