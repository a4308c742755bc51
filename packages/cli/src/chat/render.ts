import type { AgentEvent, ToolOutput } from '@youyou/agent';
import { isUnreachableError, unreachableMessage } from '../config/model-server.js';
import { neutralize, neutralizeLine } from '../text/terminal-text.js';
import {
  countWords,
  createStyles,
  describeOutput,
  formatDuration,
  plainMessage,
  rowsOf,
  type Styles,
  summarizeArguments,
  truncate,
} from './format.js';
import type { MarkdownStream } from './markdown.js';
import { turnUsageLine } from './usage-line.js';

/**
 * The answer text as the terminal gets it: control characters shown escaped (a model's OSC 52 must not write
 * the clipboard). The one place answer text is turned into terminal output, for a richer renderer to replace.
 */
export function answerForTerminal(text: string): string {
  return neutralize(text.replace(/\r\n/g, '\n'));
}

/** Where the view writes: the answer text, and everything else (the same terminal in interactive mode). */
export interface ViewSinks {
  answer: (text: string) => void;
  activity: (text: string) => void;
}

/** How a TurnView draws. */
export interface ViewOptions {
  sinks: ViewSinks;
  /** Redraw in place (spinners, collapsing reasoning): only when activity goes to a terminal that shows the answer too. */
  live: boolean;
  color: boolean;
  columns: () => number;
  /** Show reasoning in full instead of collapsing it to a one-line summary (`/reasoning`). */
  showReasoning: () => boolean;
  /** The model server's URL, for the unreachable sentence. */
  baseURL?: string | undefined;
  /** Renders the answer as Markdown (a terminal); without it the answer is written as the model sent it. */
  markdown?: MarkdownStream | undefined;
}

interface ToolEntry {
  kind: 'tool';
  callId: string;
  toolName: string;
  summary: string;
  startedAt: number;
  end?: { output: ToolOutput; durationMs: number; success: boolean } | 'cancelled';
}

type LiveEntry = ToolEntry | { kind: 'status'; text: string; startedAt: number };

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const SPINNER_INTERVAL_MS = 80;
/** ANSI control sequences at the end of a text. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI sequences start with the escape character.
const TRAILING_CODES = /(\u001b\[[0-9;?]*[A-Za-z])+$/;

/**
 * Draws one turn's events in a terminal. In live mode the running tool calls and a "thinking" status form a
 * region at the bottom that is redrawn in place with a spinner; reasoning streams dimmed and is collapsed
 * to "thought for N words" once the answer starts. Without live mode every line is written once.
 */
export class TurnView {
  readonly #options: ViewOptions;
  readonly #styles: Styles;
  #region: LiveEntry[] = [];
  #drawnRows = 0;
  #timer: NodeJS.Timeout | undefined;
  #frame = 0;
  /** Whether the cursor of the shared terminal is at the start of a line. */
  #atLineStart = true;
  /** Whether answer text was written and did not end its line before tools ran. */
  #answerOpen = false;
  #reasoning: string | undefined;
  #cursorHidden = false;

  constructor(options: ViewOptions) {
    this.#options = options;
    this.#styles = createStyles(options.color);
  }

  /** Shows a spinning status line (live mode only), e.g. while waiting for the model. */
  status(text: string): void {
    if (!this.#options.live) return;
    this.#settleMarkdown();
    // Streamed reasoning is collapsed first: its erasure counts only its own rows.
    this.#endReasoning();
    this.#region = this.#region.filter((entry) => entry.kind !== 'status');
    this.#region.push({ kind: 'status', text, startedAt: Date.now() });
    this.#redraw();
  }

  /** Removes the status line and the live region from the screen, so a question can be asked below them. */
  pause(): void {
    this.#settleMarkdown();
    this.#clearStatus();
    this.#endReasoning();
    this.#eraseRegion();
    this.#ensureLineStart();
  }

  /** Writes one line of activity (a notice, an error) above the live region. */
  line(text: string): void {
    this.pause();
    this.#activity(`${text}\n`);
    if (this.#region.length > 0) this.#redraw();
  }

  /** Draws one event. */
  handle(event: AgentEvent): void {
    const payload = event.payload;
    switch (payload.type) {
      case 'reasoning_delta':
        this.#clearStatus();
        this.#reason(payload.text);
        return;
      case 'text_delta':
        this.#clearStatus();
        this.#endReasoning();
        this.#text(payload.text);
        return;
      case 'tool_call_start':
        this.#clearStatus();
        this.#endReasoning();
        this.#toolStart(
          payload.callId,
          neutralizeLine(payload.toolName),
          summarizeArguments(payload.arguments),
        );
        return;
      case 'tool_call_end':
        this.#toolEnd(payload.callId, {
          output: payload.output,
          durationMs: payload.durationMs,
          success: payload.success,
        });
        return;
      case 'context_compacted':
        this.line(this.#styles.dim('· the earlier conversation was summarised to fit the context window'));
        return;
      case 'error': {
        const { error } = payload;
        const text =
          isUnreachableError(error) && this.#options.baseURL !== undefined
            ? unreachableMessage(this.#options.baseURL)
            : plainMessage(error.message);
        this.line(this.#styles.red(`✗ ${text}`));
        return;
      }
      case 'turn_cancelled':
        this.#finish();
        this.line(this.#styles.yellow('⏹ cancelled'));
        return;
      case 'turn_complete': {
        this.#finish();
        const usage = turnUsageLine(payload.usage);
        if (usage !== undefined) this.line(this.#styles.dim(usage));
        return;
      }
      case 'usage':
        // Shown summed up after the answer (turn_complete carries the turn's totals).
        return;
      case 'turn_suspended':
        // youyou asks in-process, so its turns never suspend; another host's tool may still ask for approval.
        this.#finish();
        this.line(
          this.#styles.yellow(`⏸ waiting for approval of ${payload.pendingCalls.length} tool call(s)`),
        );
        return;
      case 'steered':
      case 'follow_up_queued':
      case 'subagent':
        // The chat showed the message when it was typed; youyou registers no sub-agent tools.
        return;
    }
  }

  /** Stops the spinner and leaves the cursor at the start of a line; call when the turn's stream ended. */
  close(): void {
    this.#finish();
    this.pause();
    this.#stopTimer();
  }

  #activity(text: string): void {
    if (text === '') return;
    this.#options.sinks.activity(text);
    // Styling codes after the last newline do not move the cursor off the line start.
    const visible = text.replace(TRAILING_CODES, '');
    if (this.#options.live && visible !== '') this.#atLineStart = visible.endsWith('\n');
  }

  #eraseRegion(): void {
    if (this.#drawnRows === 0) return;
    this.#options.sinks.activity(`\r${this.#drawnRows > 1 ? `\x1b[${this.#drawnRows - 1}A` : ''}\x1b[J`);
    this.#drawnRows = 0;
    this.#atLineStart = true;
  }

  #ensureLineStart(): void {
    if (this.#options.live && !this.#atLineStart) this.#activity('\n');
  }

  #text(received: string): void {
    // The Markdown renderer neutralizes the model's text itself, before adding its own styling.
    const { markdown } = this.#options;
    const text = markdown === undefined ? answerForTerminal(received) : markdown.push(received);
    if (text === '') return;
    if (this.#options.live) this.#ensureRegionFlushed();
    this.#options.sinks.answer(text);
    this.#answerOpen = !text.endsWith('\n');
    if (this.#options.live) this.#atLineStart = text.endsWith('\n');
  }

  /** Answer text that resumes after tool calls starts on its own line, in both sinks. */
  #closeAnswerLine(): void {
    this.#settleMarkdown();
    if (!this.#answerOpen) return;
    this.#answerOpen = false;
    // On a shared terminal a status line may already have moved the cursor to a new line.
    if (this.#options.live && this.#atLineStart) return;
    this.#options.sinks.answer('\n');
    if (this.#options.live) this.#atLineStart = true;
  }

  /** Renders the open Markdown block in place of its raw text: nothing else may be drawn below it. */
  #settleMarkdown(): void {
    const rest = this.#options.markdown?.flush();
    if (rest === undefined || rest === '') return;
    this.#options.sinks.answer(rest);
    this.#answerOpen = !rest.endsWith('\n');
    if (this.#options.live) this.#atLineStart = rest.endsWith('\n');
  }

  #reason(text: string): void {
    if (this.#reasoning === undefined) {
      this.#closeAnswerLine();
      this.#ensureLineStart();
      this.#reasoning = '';
    }
    const shown = neutralize(text);
    // What was drawn is counted, so that collapsing erases exactly the rows the escaped text took.
    this.#reasoning += shown;
    if (this.#options.live) this.#activity(this.#styles.dim(shown));
  }

  #endReasoning(): void {
    const text = this.#reasoning;
    if (text === undefined) return;
    this.#reasoning = undefined;
    const words = countWords(text);
    const summary = this.#styles.dim(`∴ thought for ${words} ${words === 1 ? 'word' : 'words'}`);
    if (!this.#options.live) {
      this.#activity(`${summary}\n`);
      return;
    }
    if (this.#options.showReasoning()) {
      this.#ensureLineStart();
      return;
    }
    const rows = rowsOf(text, this.#options.columns());
    this.#activity(`\r${rows > 1 ? `\x1b[${rows - 1}A` : ''}\x1b[J${summary}\n`);
  }

  #toolStart(callId: string, toolName: string, summary: string): void {
    this.#closeAnswerLine();
    const entry: ToolEntry = { kind: 'tool', callId, toolName, summary, startedAt: Date.now() };
    if (!this.#options.live) {
      this.#activity(`${this.#styles.dim('→')} ${toolName} ${this.#styles.dim(summary)}\n`);
    }
    this.#region.push(entry);
    if (this.#options.live) this.#redraw();
  }

  #toolEnd(callId: string, end: NonNullable<ToolEntry['end']>): void {
    const entry = this.#region.find(
      (candidate): candidate is ToolEntry => candidate.kind === 'tool' && candidate.callId === callId,
    );
    if (entry === undefined) return;
    entry.end = end;
    if (!this.#options.live) {
      this.#region = this.#region.filter((candidate) => candidate !== entry);
      this.#activity(`${this.#toolLine(entry, Number.POSITIVE_INFINITY)}\n`);
      return;
    }
    const running = this.#region.some(
      (candidate) => candidate.kind === 'tool' && candidate.end === undefined,
    );
    if (running) {
      this.#redraw();
      return;
    }
    this.#ensureRegionFlushed();
    // The model is asked again with the results; show that something is happening.
    this.status('thinking');
  }

  /** Writes the region's finished lines for good and empties it. */
  #ensureRegionFlushed(): void {
    if (this.#region.length === 0 && this.#drawnRows === 0) return;
    this.#region = this.#region.filter((entry) => entry.kind === 'tool');
    this.#redraw();
    if (this.#drawnRows > 0) this.#activity('\n');
    this.#region = [];
    this.#drawnRows = 0;
    this.#stopTimer();
  }

  #clearStatus(): void {
    if (!this.#region.some((entry) => entry.kind === 'status')) return;
    this.#region = this.#region.filter((entry) => entry.kind !== 'status');
    this.#redraw();
  }

  #finish(): void {
    for (const entry of this.#region)
      if (entry.kind === 'tool' && entry.end === undefined) entry.end = 'cancelled';
    this.#clearStatus();
    this.#endReasoning();
    if (this.#options.live) this.#ensureRegionFlushed();
    else {
      for (const entry of this.#region) {
        if (entry.kind === 'tool') this.#activity(`${this.#toolLine(entry, Number.POSITIVE_INFINITY)}\n`);
      }
      this.#region = [];
    }
    this.#closeAnswerLine();
  }

  #toolLine(entry: ToolEntry, width: number): string {
    const styles = this.#styles;
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

  #redraw(): void {
    if (!this.#options.live) return;
    const width = Math.max(20, this.#options.columns()) - 1;
    const lines = this.#region.map((entry) =>
      entry.kind === 'tool'
        ? this.#toolLine(entry, width)
        : `${this.#styles.cyan(SPINNER[this.#frame % SPINNER.length] ?? '·')} ${this.#styles.dim(truncate(`${entry.text}…`, width - 2))}`,
    );
    this.#eraseRegion();
    if (lines.length > 0) {
      this.#ensureLineStart();
      this.#options.sinks.activity(lines.join('\n'));
      this.#drawnRows = lines.length;
      this.#atLineStart = false;
    }
    const spinning = this.#region.some((entry) => entry.kind === 'status' || entry.end === undefined);
    if (spinning) this.#startTimer();
    else this.#stopTimer();
  }

  #startTimer(): void {
    if (this.#timer !== undefined) return;
    if (!this.#cursorHidden) {
      this.#options.sinks.activity('\x1b[?25l');
      this.#cursorHidden = true;
    }
    this.#timer = setInterval(() => {
      this.#frame += 1;
      this.#redraw();
    }, SPINNER_INTERVAL_MS);
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#cursorHidden) {
      this.#options.sinks.activity('\x1b[?25h');
      this.#cursorHidden = false;
    }
  }
}
