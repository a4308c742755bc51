import { lastChars } from '../../text/tail.js';
import { neutralize, neutralizeLine } from '../../text/terminal-text.js';

/** The most characters of streamed text one progress message carries: the newest, when more came. */
const MAX_PROGRESS_TEXT_CHARS = 4096;

/** The shortest time between two messages of streamed text: a chatty command costs a few a second. */
const PROGRESS_TEXT_INTERVAL_MS = 250;

/** One stream of text (a call's output, the answer): what is not reported yet, and when it last was. */
interface TextStream {
  label: string;
  text: string;
  cut: boolean;
  sentAt: number;
  timer: NodeJS.Timeout | undefined;
}

/**
 * A turn told to an MCP client as `notifications/progress` messages: its steps (a call starts, a call ends)
 * as they happen, and its streamed text (each call's live output, the answer) as the text that came since
 * the last message of that stream. A stream's text is sent at once when the stream sent nothing within the
 * interval, else gathered and sent when the interval has passed, at most the newest 4 KiB per message. The
 * answer's text waits for the interval from its start: the call's result carries it, and a short answer
 * sends no message just before the result (see `close`). A step
 * sends the text gathered before it first, so the messages keep the turn's order. Text is escaped like the
 * terminal's (ESC sequences, CR, bidi overrides shown as `\e`, `\r`, `\u202e`): clients show progress
 * messages in terminals.
 */
export class TurnProgress {
  readonly #report: (message: string) => void;
  readonly #streams = new Map<string, TextStream>();
  #closed = false;

  /** `report`: sends one progress message. */
  constructor(report: (message: string) => void) {
    this.#report = report;
  }

  /** A step of the turn, after the text gathered before it. */
  step(message: string): void {
    if (this.#closed) return;
    for (const stream of this.#streams.values()) this.#flush(stream);
    // A step ends the stretch of every stream: what comes after it starts a new one.
    this.#streams.clear();
    this.#report(message);
  }

  /**
   * Streamed text of the stream `key`, reported as `label: text`. `atOnce: false` holds a new stream's first
   * text for the interval too: text that may end the turn at once (the answer) is best not sent at all then.
   */
  text(key: string, label: string, text: string, atOnce = true): void {
    if (this.#closed || text === '') return;
    let stream = this.#streams.get(key);
    if (stream === undefined) {
      const sentAt = atOnce ? Number.NEGATIVE_INFINITY : Date.now();
      stream = { label, text: '', cut: false, sentAt, timer: undefined };
      this.#streams.set(key, stream);
    }
    const joined = stream.text + text;
    stream.text = lastChars(joined, MAX_PROGRESS_TEXT_CHARS);
    stream.cut ||= stream.text.length < joined.length;
    if (stream.timer !== undefined) return;
    const wait = stream.sentAt + PROGRESS_TEXT_INTERVAL_MS - Date.now();
    if (wait <= 0) this.#flush(stream);
    else {
      const waiting = stream;
      waiting.timer = setTimeout(() => this.#flush(waiting), wait);
    }
  }

  /** Sends the stream's gathered text. */
  #flush(stream: TextStream): void {
    if (stream.timer !== undefined) clearTimeout(stream.timer);
    stream.timer = undefined;
    if (this.#closed || stream.text === '') return;
    const { label, text, cut } = stream;
    stream.text = '';
    stream.cut = false;
    stream.sentAt = Date.now();
    this.#report(`${neutralizeLine(label)}: ${cut ? '…' : ''}${neutralize(text.replace(/\r\n/g, '\n'))}`);
  }

  /**
   * The turn has ended: nothing more is sent, not even text still gathered (the call's answer carries the
   * whole answer). A message written just before the answer may reach the MCP SDK's client after it, which
   * then reports the message as a protocol error (modelcontextprotocol/typescript-sdk#2580).
   */
  close(): void {
    for (const stream of this.#streams.values()) {
      if (stream.timer !== undefined) clearTimeout(stream.timer);
    }
    this.#streams.clear();
    this.#closed = true;
  }
}
