import type { ToolOutput } from '@youyou/agent';
import { neutralize, neutralizeLine } from '../text/terminal-text.js';
import { describeOutput, formatDuration, type Styles, truncate } from './format.js';

/** A tool call as the region shows it: running, or ended (with its output) or cancelled. */
interface ToolEntry {
  kind: 'tool';
  callId: string;
  toolName: string;
  summary: string;
  startedAt: number;
  end?: ToolEnd;
  /** The end of the output the call reported while it ran (live mode), for its last lines under its line. */
  output: string;
}

/** How a tool call ended. */
export type ToolEnd = { output: ToolOutput; durationMs: number; success: boolean } | 'cancelled';

type LiveEntry = ToolEntry | { kind: 'status'; text: string; startedAt: number };

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const SPINNER_INTERVAL_MS = 80;
/** How many of a running call's last output lines show under its line. */
const OUTPUT_LINES = 5;
/** How much of a running call's output is kept to find its last lines (each is cut to the screen's width). */
const OUTPUT_KEPT_CHARS = 4096;

/**
 * The last `count` lines of output, as a terminal would leave them: a carriage return starts its line over
 * (progress bars), and the empty line after a final newline does not count.
 */
function lastOutputLines(output: string, count: number): string[] {
  const lines = output.split('\n').map((line) => line.replace(/\r+$/, '').replace(/^[\s\S]*\r/, ''));
  if (lines.at(-1) === '') lines.pop();
  return lines.slice(-count);
}

/** Whether the cursor of the shared terminal is at the start of a line: kept by a view and its region together. */
export interface Cursor {
  atLineStart: boolean;
}

/** What a region draws with. */
export interface RegionOptions {
  /** Redraw in place; without it every tool line is written once, when its call ends. */
  live: boolean;
  styles: Styles;
  columns: () => number;
  cursor: Cursor;
  /** Writes to the activity sink as it is (cursor moves, the region's lines). */
  raw: (text: string) => void;
  /** Writes a line of activity, keeping the cursor's state. */
  activity: (text: string) => void;
  /** Starts a new line unless the cursor is at the start of one. */
  ensureLineStart: () => void;
}

/**
 * The bottom of a live turn view: the running tool calls and a status line, redrawn in place with a spinner
 * until they end; then their lines are written for good above what comes next.
 */
export class LiveRegion {
  readonly #options: RegionOptions;
  #entries: LiveEntry[] = [];
  #drawnRows = 0;
  /** The call that reported output last: only its lines show, so calls running together stay 5 rows at most. */
  #lastReporter: string | undefined;
  /** Without live mode: whether written output left its line open, to be ended before the next line. */
  #outputOpen = false;
  #timer: NodeJS.Timeout | undefined;
  #frame = 0;
  #cursorHidden = false;

  constructor(options: RegionOptions) {
    this.#options = options;
  }

  /** Whether the region shows anything. */
  get isEmpty(): boolean {
    return this.#entries.length === 0;
  }

  /** Shows `text` as the spinning status line, in place of an earlier one. */
  setStatus(text: string): void {
    this.#entries = this.#entries.filter((entry) => entry.kind !== 'status');
    this.#entries.push({ kind: 'status', text, startedAt: Date.now() });
    this.redraw();
  }

  /** Removes the status line, if one is shown. */
  clearStatus(): void {
    if (!this.#entries.some((entry) => entry.kind === 'status')) return;
    this.#entries = this.#entries.filter((entry) => entry.kind !== 'status');
    this.redraw();
  }

  /** A tool call started: a line of its own (written at once without live mode). */
  toolStarted(call: { callId: string; toolName: string; summary: string }): void {
    const entry: ToolEntry = { kind: 'tool', ...call, startedAt: Date.now(), output: '' };
    if (!this.#options.live) {
      const { styles } = this.#options;
      this.#options.activity(`${styles.dim('→')} ${call.toolName} ${styles.dim(call.summary)}\n`);
    }
    this.#entries.push(entry);
    if (this.#options.live) this.redraw();
  }

  /**
   * A running call reported output. Live: its last lines show under its line, drawn with the spinner's next
   * frame (a command that floods its output costs one redraw per frame). Otherwise the text is written as it
   * comes. Neutralized either way: a command's output is as hostile as a model's text.
   */
  toolOutput(callId: string, text: string): void {
    const entry = this.#entries.find(
      (candidate): candidate is ToolEntry => candidate.kind === 'tool' && candidate.callId === callId,
    );
    if (entry === undefined || entry.end !== undefined) return;
    if (!this.#options.live) {
      const shown = neutralize(text.replace(/\r\n/g, '\n'));
      this.#options.activity(this.#options.styles.dim(shown));
      this.#outputOpen = !shown.endsWith('\n');
      return;
    }
    entry.output = (entry.output + text).slice(-OUTPUT_KEPT_CHARS);
    this.#lastReporter = callId;
    this.#startTimer();
  }

  /**
   * A tool call ended: its line shows how. True when it was the last running call of a live region, whose
   * lines the view then writes for good (the model is asked again).
   */
  toolEnded(callId: string, end: ToolEnd): boolean {
    const entry = this.#entries.find(
      (candidate): candidate is ToolEntry => candidate.kind === 'tool' && candidate.callId === callId,
    );
    if (entry === undefined) return false;
    entry.end = end;
    entry.output = '';
    if (!this.#options.live) {
      this.#entries = this.#entries.filter((candidate) => candidate !== entry);
      this.#closeOutputLine();
      this.#options.activity(`${this.#toolLine(entry, Number.POSITIVE_INFINITY)}\n`);
      return false;
    }
    const running = this.#entries.some(
      (candidate) => candidate.kind === 'tool' && candidate.end === undefined,
    );
    if (running) this.redraw();
    return !running;
  }

  /** The turn ended: calls still running count as cancelled, and every line is written for good. */
  finish(): void {
    for (const entry of this.#entries) {
      if (entry.kind === 'tool' && entry.end === undefined) entry.end = 'cancelled';
    }
  }

  /** Writes the region's lines for good and empties it (live mode), or the lines not written yet. */
  flush(): void {
    if (!this.#options.live) {
      this.#closeOutputLine();
      for (const entry of this.#entries) {
        if (entry.kind === 'tool')
          this.#options.activity(`${this.#toolLine(entry, Number.POSITIVE_INFINITY)}\n`);
      }
      this.#entries = [];
      return;
    }
    if (this.#entries.length === 0 && this.#drawnRows === 0) return;
    this.#entries = this.#entries.filter((entry) => entry.kind === 'tool');
    this.redraw();
    if (this.#drawnRows > 0) this.#options.activity('\n');
    this.#entries = [];
    this.#drawnRows = 0;
    this.stopTimer();
  }

  /** Takes the region off the screen (it is drawn again by the next redraw). */
  erase(): void {
    // Without live mode nothing is redrawn: a line of output left open is ended, so what comes next starts anew.
    if (!this.#options.live) this.#closeOutputLine();
    if (this.#drawnRows === 0) return;
    this.#options.raw(`\r${this.#drawnRows > 1 ? `\x1b[${this.#drawnRows - 1}A` : ''}\x1b[J`);
    this.#drawnRows = 0;
    this.#options.cursor.atLineStart = true;
  }

  /** Draws the region again in place (live mode), spinning while something runs. */
  redraw(): void {
    if (!this.#options.live) return;
    const { styles } = this.#options;
    const width = Math.max(20, this.#options.columns()) - 1;
    const lines = this.#entries.flatMap((entry) =>
      entry.kind === 'tool'
        ? [this.#toolLine(entry, width), ...this.#outputLines(entry, width)]
        : [
            `${styles.cyan(SPINNER[this.#frame % SPINNER.length] ?? '·')} ${styles.dim(truncate(`${entry.text}…`, width - 2))}`,
          ],
    );
    this.erase();
    if (lines.length > 0) {
      this.#options.ensureLineStart();
      this.#options.raw(lines.join('\n'));
      this.#drawnRows = lines.length;
      this.#options.cursor.atLineStart = false;
    }
    const spinning = this.#entries.some((entry) => entry.kind === 'status' || entry.end === undefined);
    if (spinning) this.#startTimer();
    else this.stopTimer();
  }

  /** Stops the spinner and shows the cursor again. */
  stopTimer(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#cursorHidden) {
      this.#options.raw('\x1b[?25h');
      this.#cursorHidden = false;
    }
  }

  #startTimer(): void {
    if (this.#timer !== undefined) return;
    if (!this.#cursorHidden) {
      this.#options.raw('\x1b[?25l');
      this.#cursorHidden = true;
    }
    this.#timer = setInterval(() => {
      this.#frame += 1;
      this.redraw();
    }, SPINNER_INTERVAL_MS);
  }

  /** The last lines a running call reported (the last to report), one row each, indented under its line. */
  #outputLines(entry: ToolEntry, width: number): string[] {
    if (entry.end !== undefined || entry.output === '' || entry.callId !== this.#lastReporter) return [];
    const { styles } = this.#options;
    return lastOutputLines(entry.output, OUTPUT_LINES).map(
      (line) => `  ${styles.dim(`│ ${truncate(neutralizeLine(line), width - 4)}`)}`,
    );
  }

  /** Ends the line written output left open (without live mode), so the next line starts on its own. */
  #closeOutputLine(): void {
    if (!this.#outputOpen) return;
    this.#outputOpen = false;
    this.#options.activity('\n');
  }

  #toolLine(entry: ToolEntry, width: number): string {
    const { styles } = this.#options;
    const end = entry.end;
    let icon: string;
    let detail: string;
    if (end === undefined) {
      icon = styles.cyan(SPINNER[this.#frame % SPINNER.length] ?? '·');
      const elapsed = Date.now() - entry.startedAt;
      detail = elapsed >= 1000 ? formatDuration(elapsed) : '';
    } else if (end === 'cancelled') {
      icon = styles.yellow('⏹');
      detail = 'cancelled';
    } else {
      icon = end.success ? styles.green('✓') : styles.red('✗');
      detail = `${formatDuration(end.durationMs)} · ${describeOutput(end.output)}`;
    }
    const head = `${entry.toolName} `;
    const rest = [entry.summary, detail].filter((part) => part !== '').join(' · ');
    const room = width - 2 - head.length;
    return `${icon} ${styles.bold(entry.toolName)} ${styles.dim(truncate(rest, room))}`;
  }
}
