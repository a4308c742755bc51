import type { ApprovalAnswer, ApprovalRequest } from '../approval/policy.js';
import { type ApprovalRule, offeredShellPattern, parseRule, SHELL_TOOL } from '../approval/rules.js';
import { neutralizeLine } from '../text/terminal-text.js';
import { callLines } from './approval-question.js';
import { createStyles, type Styles } from './format.js';
import { isInterrupt, type Key } from './terminal.js';

/**
 * How long the keyboard must have been quiet before the question takes an answer. Typing that was going on
 * when the question was drawn (a message being typed, keys that piled up while youyou was busy) is not an
 * answer, even the part of it that arrives after the question: only once nothing has been typed for this long
 * does the question show its choices and listen.
 */
export const QUIET_BEFORE_ANSWER_MS = 800;

/** The longest reason the user can type. */
const MAX_REASON_LENGTH = 500;

type Mode = 'choose' | 'always' | 'reason';

/**
 * One approval question on the terminal: the whole call (paged when it is longer than the screen), then a
 * single-key choice, offered once the keyboard was quiet (QUIET_BEFORE_ANSWER_MS). `y` runs it once, `n`/Esc
 * refuses, `r` refuses with a typed reason, and `a` only opens a second step that names the rule to keep
 * (`1`/Enter/`y` or `2`), so one stray key can never allow a tool for good.
 */
export class ApprovalQuestion {
  readonly #request: ApprovalRequest;
  readonly #write: (text: string) => void;
  readonly #styles: Styles;
  readonly #resolve: (answer: ApprovalAnswer) => void;
  readonly #lines: string[];
  readonly #pageSize: number;
  readonly #flushInput: () => number | undefined;
  readonly #lastKeyAt: () => number;
  readonly #quietMs: number;
  /** Set once the keyboard was quiet after the question was drawn: from then on keys answer it. */
  #listening = false;
  /**
   * A key time (`performance.now()`) of keys the question never saw as keys: the drawing itself when the input
   * could not be flushed, and unread input thrown away when the question was about to listen.
   */
  #unseenKeyAt = 0;
  #ignored = 0;
  #timer: NodeJS.Timeout | undefined;
  /** The rules `a` offers, in the order of their keys (`1`, `2`). */
  readonly #offers: ApprovalRule[];
  #page = 0;
  #mode: Mode = 'choose';
  #reason = '';
  #settled = false;

  constructor(options: {
    request: ApprovalRequest;
    workspace: string;
    columns: number;
    rows: number;
    color: boolean;
    write: (text: string) => void;
    resolve: (answer: ApprovalAnswer) => void;
    /** Throws away unread input: how many bytes, or undefined when it cannot (then the draw counts as a key). */
    flushInput: () => number | undefined;
    /** When the last key came in (`performance.now()`), whoever it went to. */
    lastKeyAt: () => number;
    /** How long no key must come before the question takes one (default QUIET_BEFORE_ANSWER_MS). */
    quietMs?: number | undefined;
  }) {
    this.#quietMs = options.quietMs ?? QUIET_BEFORE_ANSWER_MS;
    this.#request = options.request;
    this.#write = options.write;
    this.#styles = createStyles(options.color);
    this.#resolve = options.resolve;
    this.#lines = callLines({
      request: options.request,
      workspace: options.workspace,
      columns: options.columns,
      color: options.color,
    });
    this.#pageSize = Math.max(5, options.rows - 6);
    this.#offers = offeredRules(options.request);
    this.#flushInput = options.flushInput;
    this.#lastKeyAt = options.lastKeyAt;
  }

  /** Draws the question (its heading and the first page of the call); the choices follow once it listens. */
  open(): void {
    const name = neutralizeLine(this.#request.toolName);
    const file = (this.#request.arguments as { path?: unknown } | null)?.path;
    // The file a call changes is named in the heading; a command is only shown whole, below it.
    const what = typeof file === 'string' ? ` ${neutralizeLine(file)}` : ' to run this';
    this.#write(`${this.#styles.yellow('?')} Allow ${this.#styles.bold(name)}${what}?\n`);
    this.#drawPage();
    // Keys still unread were typed before the question could be read: thrown away. Keys Node has read already
    // are handed out before the next turn of the event loop, so the question listens no sooner than that.
    this.#unseenKeyAt = this.#flushInput() === undefined ? performance.now() : 0;
    setImmediate(() => this.#listenWhenQuiet());
  }

  /**
   * Starts listening once no key has come for the quiet time; until then checks again when it might.
   * Runs after the event loop's poll for input (a timer hops to `setImmediate` first), and throws away what is
   * still unread, counting it as a key: a youyou that was stopped or starved while typing went on sees that
   * typing before it listens, not after.
   */
  #listenWhenQuiet(): void {
    this.#timer = undefined;
    if (this.#settled || this.#listening) return;
    const unread = this.#flushInput() ?? 0;
    if (unread > 0) {
      this.#ignored += unread;
      this.#unseenKeyAt = performance.now();
    }
    const quietFor = performance.now() - Math.max(this.#lastKeyAt(), this.#unseenKeyAt);
    if (quietFor < this.#quietMs) {
      this.#timer = setTimeout(() => setImmediate(() => this.#listenWhenQuiet()), this.#quietMs - quietFor);
      return;
    }
    this.#listening = true;
    if (this.#ignored > 0) {
      const keys = this.#ignored === 1 ? '1 key' : `${this.#ignored} keys`;
      this.#write(`  ${this.#styles.dim(`(${keys} typed before the question ignored)`)}\n`);
    }
    this.#drawChoices();
  }

  /** Handles one key; `cancelTurn` is called for Ctrl-C, which refuses and cancels the turn. */
  key(key: Key, cancelTurn: () => void): void {
    if (this.#settled) return;
    if (isInterrupt(key)) {
      this.#finish({ type: 'deny' }, 'no');
      cancelTurn();
      return;
    }
    if (!this.#listening) {
      // Part of typing that began before the question: not an answer (and it keeps the question waiting).
      this.#ignored += 1;
      return;
    }
    if (this.#mode === 'reason') {
      this.#reasonKey(key);
      return;
    }
    const name = key.name ?? key.sequence ?? '';
    if (this.#mode === 'always') {
      // Enter or y confirms the first (narrowest) rule offered; a digit picks one.
      const confirm = name === 'return' || name === 'enter' || name === 'y';
      const index = confirm ? 0 : Number.parseInt(key.sequence ?? '', 10) - 1;
      const rule = this.#offers[index];
      if (rule !== undefined) this.#finish({ type: 'always', rule }, `always ${neutralizeLine(rule.text)}`);
      else if (name === 'escape' || name === 'backspace') {
        this.#mode = 'choose';
        this.#write('\n');
        this.#drawChoices();
      }
      return;
    }
    if (key.ctrl === true || key.meta === true) return;
    if (name === 'y') this.#finish({ type: 'once' }, 'yes');
    else if (name === 'n' || name === 'escape') this.#finish({ type: 'deny' }, 'no');
    else if (name === 'r') {
      this.#mode = 'reason';
      this.#write(`\n  ${this.#styles.dim('why not? (Enter sends it to the model, Esc goes back) ›')} `);
    } else if (name === 'a') {
      this.#mode = 'always';
      const offers = this.#offers.map(
        (rule, index) => `${index === 0 ? '1 (or Enter)' : index + 1} = ${this.#describeRule(rule)}`,
      );
      this.#write(
        `\n  ${this.#styles.dim(`always allow, for this session: ${offers.join(' · ')} · Esc = back ›`)} `,
      );
    } else if (name === 'space' || name === 'pagedown') this.#turnPage(1);
    else if (name === 'b' || name === 'pageup') this.#turnPage(-1);
  }

  /** The question was given up (no answer in time, or the turn ended): says so on the screen. */
  abandon(): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    this.#write(`${this.#styles.yellow('no answer — not run')}\n`);
    this.#resolve({ type: 'deny' });
  }

  #describeRule(rule: ApprovalRule): string {
    if (rule.pattern === undefined) return `every ${neutralizeLine(rule.tool)} call`;
    if (rule.exact === true) return `exactly \`${neutralizeLine(rule.pattern)}\` again`;
    return `${neutralizeLine(rule.tool)} commands starting with \`${neutralizeLine(rule.pattern)}\``;
  }

  #reasonKey(key: Key): void {
    const name = key.name;
    if (name === 'return' || name === 'enter') {
      const reason = this.#reason.trim();
      this.#finish(reason === '' ? { type: 'deny' } : { type: 'deny', reason }, '', ' — no');
      return;
    }
    if (name === 'escape') {
      this.#mode = 'choose';
      this.#reason = '';
      this.#write('\n');
      this.#drawChoices();
      return;
    }
    if (name === 'backspace') {
      if (this.#reason === '') return;
      const characters = Array.from(this.#reason);
      characters.pop();
      this.#reason = characters.join('');
      this.#write('\b \b');
      return;
    }
    const text = key.sequence;
    if (text === undefined || key.ctrl === true || key.meta === true) return;
    const printable = neutralizeLine(text);
    // A control key (an arrow, F-keys) is not part of a reason.
    if (printable !== text || this.#reason.length + text.length > MAX_REASON_LENGTH) return;
    this.#reason += text;
    this.#write(text);
  }

  #turnPage(step: number): void {
    const pages = Math.ceil(this.#lines.length / this.#pageSize);
    const next = Math.min(pages - 1, Math.max(0, this.#page + step));
    if (next === this.#page) return;
    this.#page = next;
    this.#write('\n');
    this.#drawPage();
  }

  #drawPage(): void {
    const start = this.#page * this.#pageSize;
    const shown = this.#lines.slice(start, start + this.#pageSize);
    if (shown.length > 0) this.#write(`${shown.join('\n')}\n`);
    const total = this.#lines.length;
    if (total > this.#pageSize) {
      const last = start + shown.length;
      const keys = [last < total ? 'space = more' : '', this.#page > 0 ? 'b = back' : '']
        .filter((part) => part !== '')
        .join(' · ');
      this.#write(
        `  ${this.#styles.yellow(`lines ${start + 1}–${last} of ${total}`)} ${this.#styles.dim(keys)}\n`,
      );
    }
    // Until the question listens, its choices are not shown: they appear when a key would answer.
    if (this.#listening) this.#drawChoices();
  }

  #drawChoices(): void {
    this.#write(`  ${this.#styles.dim('y = yes · n = no · r = no, say why · a = always… ›')} `);
  }

  #finish(answer: ApprovalAnswer, label: string, suffix = ''): void {
    this.#settled = true;
    clearTimeout(this.#timer);
    const text = `${label}${suffix}`;
    this.#write(`${answer.type === 'deny' ? this.#styles.red(text) : this.#styles.green(text)}\n`);
    this.#resolve(answer);
  }
}

/** The rules `a` offers: for a simple shell command its prefix first, then the whole tool. */
export function offeredRules(request: ApprovalRequest): ApprovalRule[] {
  const offers: ApprovalRule[] = [];
  if (request.toolName === SHELL_TOOL) {
    const command = (request.arguments as { command?: unknown } | null)?.command;
    const pattern = typeof command === 'string' ? offeredShellPattern(command) : undefined;
    const rule = pattern === undefined ? undefined : parseRule(`${SHELL_TOOL}(${pattern})`);
    if (rule !== undefined && typeof rule !== 'string') offers.push(rule);
  }
  const whole = parseRule(request.toolName);
  offers.push(typeof whole === 'string' ? { tool: request.toolName, text: request.toolName } : whole);
  return offers;
}
