import { displayWidth } from './format.js';

/** The prompt's text as the editor shows it: its lines (already neutralised) and the cursor's line and column. */
export interface PromptView {
  readonly lines: readonly string[];
  readonly cursorLine: number;
  readonly cursorColumn: number;
}

/**
 * Draws a prompt whose text may span lines and wrap: each draw goes back to the prompt's first row, erases
 * down to the end of the screen and writes it again, then puts the cursor where the editor has it. The first
 * line follows the prompt; the next ones are indented by the prompt's width.
 */
export class PromptDrawing {
  readonly #output: NodeJS.WriteStream;
  readonly #prompt: string;
  readonly #indent: string;
  /** Rows between the prompt's first row and the cursor's. */
  #cursorRow = 0;

  constructor(output: NodeJS.WriteStream, prompt: string) {
    this.#output = output;
    this.#prompt = prompt;
    this.#indent = ' '.repeat(displayWidth(prompt));
  }

  /** Forgets where the prompt was drawn: the next draw starts on the cursor's row. */
  reset(): void {
    this.#cursorRow = 0;
  }

  /** Draws `view` with the cursor where it says. */
  draw(view: PromptView, columns: number): void {
    const layout = this.#write(view, columns);
    const target = this.#cursorPlace(view, columns, layout.lineRows);
    let text = layout.text;
    if (layout.endRow > target.row) text += `\x1b[${layout.endRow - target.row}A`;
    text += '\r';
    if (target.column > 0) text += `\x1b[${target.column}C`;
    this.#cursorRow = target.row;
    this.#output.write(text);
  }

  /** Draws `view` one last time, `suffix` after it, and leaves the cursor on the line below. */
  finish(view: PromptView, columns: number, suffix: string): void {
    const layout = this.#write(view, columns);
    this.#cursorRow = 0;
    this.#output.write(`${layout.text}${suffix}${layout.endsOnFreshRow && suffix === '' ? '' : '\r\n'}`);
  }

  /** The text that redraws the prompt from its first row, and the rows each line takes. */
  #write(
    view: PromptView,
    columns: number,
  ): { text: string; lineRows: number[]; endRow: number; endsOnFreshRow: boolean } {
    const width = Math.max(1, columns);
    const promptWidth = displayWidth(this.#indent);
    let text = this.#cursorRow > 0 ? `\x1b[${this.#cursorRow}A\r\x1b[J` : '\r\x1b[J';
    const lineRows: number[] = [];
    let endsOnFreshRow = false;
    view.lines.forEach((line, index) => {
      const last = index === view.lines.length - 1;
      const used = promptWidth + displayWidth(line);
      text += `${index === 0 ? this.#prompt : this.#indent}${line}`;
      let rows = Math.max(1, Math.ceil(used / width));
      // A line that fills its last row leaves the cursor waiting to wrap; the next row is made explicit.
      if (last && used > 0 && used % width === 0) {
        text += '\r\n';
        rows += 1;
        endsOnFreshRow = true;
      }
      if (!last) text += '\r\n';
      lineRows.push(rows);
    });
    const endRow = lineRows.reduce((sum, rows) => sum + rows, 0) - 1;
    return { text, lineRows, endRow, endsOnFreshRow };
  }

  #cursorPlace(
    view: PromptView,
    columns: number,
    lineRows: readonly number[],
  ): { row: number; column: number } {
    const width = Math.max(1, columns);
    const offset = displayWidth(this.#indent) + view.cursorColumn;
    let row = lineRows.slice(0, view.cursorLine).reduce((sum, rows) => sum + rows, 0);
    let inLine = Math.floor(offset / width);
    let column = offset % width;
    const rows = lineRows[view.cursorLine] ?? 1;
    if (inLine >= rows) {
      inLine = rows - 1;
      column = width - 1;
    }
    row += inLine;
    return { row, column };
  }
}
