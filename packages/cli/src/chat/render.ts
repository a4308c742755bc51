import type { AgentEvent } from '@youyou/agent';
import { isUnreachableError, unreachableMessage } from '../config/model-server.js';
import { neutralize, neutralizeLine } from '../text/terminal-text.js';
import { countWords, createStyles, plainMessage, rowsOf, type Styles, summarizeArguments } from './format.js';
import { type Cursor, LiveRegion } from './live-region.js';
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
  readonly #region: LiveRegion;
  /** Whether the cursor of the shared terminal is at the start of a line. */
  readonly #cursor: Cursor = { atLineStart: true };
  /** Whether answer text was written and did not end its line before tools ran. */
  #answerOpen = false;
  #reasoning: string | undefined;

  constructor(options: ViewOptions) {
    this.#options = options;
    this.#styles = createStyles(options.color);
    this.#region = new LiveRegion({
      live: options.live,
      styles: this.#styles,
      columns: options.columns,
      cursor: this.#cursor,
      raw: (text) => options.sinks.activity(text),
      activity: (text) => this.#activity(text),
      ensureLineStart: () => this.#ensureLineStart(),
    });
  }

  /** Shows a spinning status line (live mode only), e.g. while waiting for the model. */
  status(text: string): void {
    if (!this.#options.live) return;
    this.#settleMarkdown();
    // Streamed reasoning is collapsed first: its erasure counts only its own rows.
    this.#endReasoning();
    this.#region.setStatus(text);
  }

  /** Removes the status line and the live region from the screen, so a question can be asked below them. */
  pause(): void {
    this.#settleMarkdown();
    this.#region.clearStatus();
    this.#endReasoning();
    this.#region.erase();
    this.#ensureLineStart();
  }

  /**
   * Takes the live region off the screen and stops its spinner, for a question asked while tools run (an MCP
   * server's); the returned function draws it again. Events must wait meanwhile: each would redraw it.
   */
  holdForQuestion(): () => void {
    this.pause();
    this.#region.stopTimer();
    return () => this.#region.redraw();
  }

  /** Writes one line of activity (a notice, an error) above the live region. */
  line(text: string): void {
    this.pause();
    this.#activity(`${text}\n`);
    if (!this.#region.isEmpty) this.#region.redraw();
  }

  /** Draws one event. */
  handle(event: AgentEvent): void {
    const payload = event.payload;
    switch (payload.type) {
      case 'reasoning_delta':
        this.#region.clearStatus();
        this.#reason(payload.text);
        return;
      case 'text_delta':
        this.#region.clearStatus();
        this.#endReasoning();
        this.#text(payload.text);
        return;
      case 'tool_call_start':
        this.#region.clearStatus();
        this.#endReasoning();
        this.#closeAnswerLine();
        this.#region.toolStarted({
          callId: payload.callId,
          toolName: neutralizeLine(payload.toolName),
          summary: summarizeArguments(payload.arguments),
        });
        return;
      case 'tool_output_delta':
        this.#region.toolOutput(payload.callId, payload.text);
        return;
      case 'tool_call_end':
        if (
          this.#region.toolEnded(payload.callId, {
            output: payload.output,
            durationMs: payload.durationMs,
            success: payload.success,
          })
        ) {
          this.#region.flush();
          // The model is asked again with the results; show that something is happening.
          this.status('thinking');
        }
        return;
      case 'context_compacted':
        this.line(this.#styles.dim('· the earlier conversation was summarised to fit the context window'));
        return;
      case 'model_fallback':
        this.#region.clearStatus();
        this.line(
          this.#styles.yellow(
            `↪ ${neutralizeLine(payload.from)} failed (${plainMessage(payload.reason.message)}); asking ${neutralizeLine(payload.to)}`,
          ),
        );
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
      case 'turn_continued':
        this.line(
          this.#styles.dim(
            payload.askedAgain
              ? '· continuing the cut turn: asking the model again'
              : `· continuing the cut turn: ${payload.calls.length} tool call(s) without a result`,
          ),
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
    this.#region.stopTimer();
  }

  #activity(text: string): void {
    if (text === '') return;
    this.#options.sinks.activity(text);
    // Styling codes after the last newline do not move the cursor off the line start.
    const visible = text.replace(TRAILING_CODES, '');
    if (this.#options.live && visible !== '') this.#cursor.atLineStart = visible.endsWith('\n');
  }

  #ensureLineStart(): void {
    if (this.#options.live && !this.#cursor.atLineStart) this.#activity('\n');
  }

  #text(received: string): void {
    // The Markdown renderer neutralizes the model's text itself, before adding its own styling.
    const { markdown } = this.#options;
    const text = markdown === undefined ? answerForTerminal(received) : markdown.push(received);
    if (text === '') return;
    if (this.#options.live) this.#region.flush();
    this.#options.sinks.answer(text);
    this.#answerOpen = !text.endsWith('\n');
    if (this.#options.live) this.#cursor.atLineStart = text.endsWith('\n');
  }

  /** Answer text that resumes after tool calls starts on its own line, in both sinks. */
  #closeAnswerLine(): void {
    this.#settleMarkdown();
    if (!this.#answerOpen) return;
    this.#answerOpen = false;
    // On a shared terminal a status line may already have moved the cursor to a new line.
    if (this.#options.live && this.#cursor.atLineStart) return;
    this.#options.sinks.answer('\n');
    if (this.#options.live) this.#cursor.atLineStart = true;
  }

  /** Renders the open Markdown block in place of its raw text: nothing else may be drawn below it. */
  #settleMarkdown(): void {
    const rest = this.#options.markdown?.flush();
    if (rest === undefined || rest === '') return;
    this.#options.sinks.answer(rest);
    this.#answerOpen = !rest.endsWith('\n');
    if (this.#options.live) this.#cursor.atLineStart = rest.endsWith('\n');
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

  #finish(): void {
    this.#region.finish();
    this.#region.clearStatus();
    this.#endReasoning();
    this.#region.flush();
    this.#closeAnswerLine();
  }
}
