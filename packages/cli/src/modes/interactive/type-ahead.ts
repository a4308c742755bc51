import type { Session } from '@youyou/agent';
import { plainMessage, type Styles } from '../../chat/format.js';
import type { TurnView } from '../../chat/render.js';
import type { Key } from '../../chat/terminal.js';
import { neutralizeLine } from '../../text/terminal-text.js';
import { COMMAND } from './slash-commands.js';

/**
 * What the user types while a turn runs. Enter steers the turn with it: the model reads it at the turn's
 * next step (after the running tool calls, or right after its answer). A /command or !command is kept and run when the
 * turn ends; text without Enter is put back at the next prompt.
 */
export class TypeAhead {
  /** Commands typed and sent with Enter while a turn ran: each runs after it, in order. */
  readonly queued: string[] = [];
  /** Text typed while a turn ran without Enter. */
  #typed = '';
  readonly #styles: Styles;

  constructor(styles: Styles) {
    this.#styles = styles;
  }

  /** The text typed without Enter, which the next prompt starts with; it is kept no longer. */
  takeTyped(): string {
    const typed = this.#typed;
    this.#typed = '';
    return typed;
  }

  /** Takes one key typed while the turn that `view` shows runs in `session`. */
  key(key: Key, view: TurnView, session: Session | undefined): void {
    if (key.pasted === true) {
      // Pasted text is kept as it is: its CR adds a line and sends nothing.
      if (key.name !== 'paste-start' && key.name !== 'paste-end') {
        this.#typed += (key.sequence ?? '').replace(/\r\n?/g, '\n');
      }
      return;
    }
    if (key.name === 'return' || key.name === 'enter') {
      this.#send(view, session);
      return;
    }
    if (key.name === 'backspace') {
      this.#typed = Array.from(this.#typed).slice(0, -1).join('');
      return;
    }
    const text = key.sequence;
    if (text === undefined || key.ctrl === true || key.meta === true) return;
    // Only printable text is kept: arrows and function keys are not part of a message.
    if (neutralizeLine(text) === text) this.#typed += text;
  }

  #send(view: TurnView, session: Session | undefined): void {
    const text = this.takeTyped();
    if (text.trim() === '') return;
    // A /command, and a !command (it runs in the sandbox, not in the model's turn), wait for the turn's end.
    if (COMMAND.test(text.trim()) || /^\s*!\S/.test(text) || session === undefined) {
      this.queued.push(text);
      view.line(this.#styles.dim(`› ${neutralizeLine(text)}  (queued: runs when this turn ends)`));
      return;
    }
    view.line(this.#styles.dim(`› ${neutralizeLine(text)}  (sent: the model reads it at its next step)`));
    session.steer(text).catch((error: unknown) => {
      view.line(this.#styles.red(plainMessage(error instanceof Error ? error.message : String(error))));
    });
  }
}
