import { Marked, type Token, type Tokens } from 'marked';
import { markedTerminal } from 'marked-terminal';
import { neutralize } from '../text/terminal-text.js';
import { rowsOf } from './format.js';

/**
 * Answers rendered as Markdown for a terminal (headings, emphasis, lists, tables, code blocks with syntax
 * highlighting) by marked with marked-terminal, while they stream. A block is rendered once, when it is
 * complete: the open block (a paragraph still growing, a table whose column widths are not known yet, a code
 * block before its closing fence) is shown as raw text while it streams, and replaced by its rendering once,
 * when it closes. Rendered blocks are never redrawn and nothing is redrawn per chunk, so nothing flickers and
 * the answer can be read as it comes. The model's text is neutralized (terminal-text.ts) before the renderer
 * adds its own styling, so an ESC from the model reaches the terminal only as the visible text `\e`.
 *
 * This module loads highlight.js with every language (about a second on a busy machine): load it with
 * `import()` only when an answer will be rendered, never on the way to `--help`.
 */

/**
 * Renders one answer's Markdown as it streams; `push` and `flush` return the terminal text to write now. What
 * it wrote must be the last thing on the screen until the next call: write something else only after `flush`.
 */
export interface MarkdownStream {
  /** Takes more answer text; returns the text to write: the raw text added, or blocks rendered in place. */
  push(text: string): string;
  /** The answer (or the part before a tool call) ended: renders what is still open in place of its raw text. */
  flush(): string;
}

/** A fenced code block's opening fence: its character and length. */
const OPENING_FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** The Markdown renderer for a terminal `columns` wide (tables and rules are laid out to fit it). */
function createRenderer(columns: number): Marked {
  const marked = new Marked(
    markedTerminal({
      // `:name:` in an answer stays as written; the heading's `#` marks are left out, its style shows it.
      emoji: false,
      showSectionPrefix: false,
      width: Math.max(20, columns),
      reflowText: false,
      tab: 2,
    }),
  );
  marked.use({
    renderer: {
      // marked-terminal writes an OSC 8 hyperlink where the terminal supports it, whose target a user cannot
      // see before clicking; the target is shown as text instead.
      link(token: Tokens.Link): string {
        const text = this.parser.parseInline(token.tokens);
        return text === token.href ? text : `${text} (${token.href})`;
      },
      // marked-terminal writes the text of a tight list item as it stands; its inline Markdown (`*two*`,
      // `code`) is rendered here. Other text goes on to marked-terminal (`false`).
      text(token: Tokens.Text | Tokens.Escape): string | false {
        return 'tokens' in token && token.tokens !== undefined
          ? this.parser.parseInline(token.tokens)
          : false;
      },
    },
  });
  return marked;
}

/** True when a block needs no more text: a later line cannot change how it renders. */
function isClosed(token: Token, followedByBlankLine: boolean): boolean {
  if (token.type === 'heading' || token.type === 'hr') return token.raw.endsWith('\n');
  if (token.type === 'code') {
    const fence = OPENING_FENCE.exec(token.raw)?.[1];
    // An indented code block goes on after a blank line; a fenced one ends at its closing fence.
    if (fence === undefined) return false;
    const lines = token.raw.trimEnd().split('\n');
    const last = lines.at(-1)?.trim() ?? '';
    return lines.length > 1 && last.startsWith(fence) && /^[`~]+$/.test(last) && token.raw.endsWith('\n');
  }
  // A list goes on after a blank line (a loose list); a paragraph, table or quote ends there.
  return followedByBlankLine && token.type !== 'list';
}

/** The complete blocks at the front of `pending` (all of them when `all`) and the text still open after them. */
function splitComplete(marked: Marked, pending: string, all: boolean): { blocks: string[]; open: string } {
  const tokens = marked.lexer(pending);
  let end = tokens.length;
  if (!all) {
    let last = tokens.length - 1;
    while (last >= 0 && tokens[last]?.type === 'space') last -= 1;
    if (last < 0) return { blocks: [], open: pending };
    end = isClosed(tokens[last] as Token, last < tokens.length - 1) ? tokens.length : last;
  }
  const complete = tokens.slice(0, end);
  const raw = complete.map((token) => token.raw).join('');
  // The tokens' raw texts are the input cut in pieces; should a lexer ever change the text, the rest stays
  // open and is rendered whole at the end.
  if (!pending.startsWith(raw)) return all ? { blocks: [pending], open: '' } : { blocks: [], open: pending };
  const blocks = complete.filter((token) => token.type !== 'space').map((token) => token.raw);
  return { blocks, open: pending.slice(raw.length) };
}

/** The size of the terminal the answer is written to, read at each use (a window can be resized). */
export interface Screen {
  readonly columns?: number | undefined;
  readonly rows?: number | undefined;
}

/** The longest start of `text` that takes at most `maxRows` rows `columns` wide, cut at a line's end. */
function fitRows(text: string, columns: number, maxRows: number): string {
  let rows = 0;
  let end = 0;
  for (const line of text.split('\n')) {
    rows += rowsOf(line, columns);
    if (rows > maxRows) return text.slice(0, Math.max(0, end - 1));
    end += line.length + 1;
  }
  return text;
}

/**
 * A MarkdownStream for `screen`. The open block is shown raw from the start of a line as it arrives; when it
 * closes, those rows are erased (as many as `rowsOf` counts) and the rendering written there. A cursor cannot
 * move up past the top of the screen, so raw text stops growing at a screen's height less two rows: a long
 * code block shows its first lines raw and appears whole, highlighted, at its closing fence.
 */
export function createMarkdownStream(options: { screen: Screen }): MarkdownStream {
  const columns = (): number => Math.max(1, options.screen.columns ?? 80);
  const maxRows = (): number => Math.max(1, (options.screen.rows ?? 24) - 2);
  const marked = createRenderer(columns());
  const raw = new RawBlock(columns, maxRows);
  let pending = '';
  let blocksWritten = 0;

  /** Blocks are separated by one blank line; the last one leaves its line open for the view to end. */
  const separator = (): string => (blocksWritten > 0 ? '\n\n' : '');

  const update = (all: boolean): string => {
    const { blocks, open } = splitComplete(marked, pending, all);
    pending = open;
    let output = '';
    if (blocks.length === 0) {
      if (raw.capped) return '';
      const display = raw.visible(open.replace(/^\n+/, ''));
      if (display === raw.shown) return '';
      if (raw.shown !== '' && display.startsWith(raw.shown)) {
        output = display.slice(raw.shown.length);
      } else {
        // An erase leaves the cursor where the open block began, after its separator.
        output = raw.shown === '' ? separator() : raw.erase();
        output += display;
      }
      raw.shown = display;
      return output;
    }
    for (const block of blocks) {
      const rendered = (marked.parse(block) as string).replace(/\n+$/, '');
      if (rendered === '') continue;
      output += raw.shown === '' ? separator() : raw.erase();
      output += rendered;
      blocksWritten += 1;
    }
    output += raw.erase();
    const display = raw.visible(open.replace(/^\n+/, ''));
    if (display !== '') {
      output += separator() + display;
      raw.shown = display;
    }
    return output;
  };

  return {
    push(text) {
      const added = neutralize(text.replace(/\r\n/g, '\n'));
      pending += added;
      // A block can only close at the end of a line: text without one goes on the open block's raw text.
      if (raw.capped && !added.includes('\n')) return '';
      if (!added.includes('\n') && raw.shown !== '' && rowsOf(raw.shown + added, columns()) <= maxRows()) {
        raw.shown += added;
        return added;
      }
      return update(false);
    },
    flush() {
      const output = update(true);
      pending = '';
      raw.shown = '';
      blocksWritten = 0;
      return output;
    },
  };
}

/** The open block's raw text on the screen, written from column 0 after the blank line before it. */
class RawBlock {
  shown = '';
  /** The open block is taller than the screen: what is shown of it stays as it is until it closes. */
  capped = false;
  readonly #columns: () => number;
  readonly #maxRows: () => number;

  constructor(columns: () => number, maxRows: () => number) {
    this.#columns = columns;
    this.#maxRows = maxRows;
  }

  /** The sequence that erases the shown rows (as many as `rowsOf` counts), leaving the cursor where they began. */
  erase(): string {
    this.capped = false;
    if (this.shown === '') return '';
    const rows = rowsOf(this.shown, this.#columns());
    this.shown = '';
    return `\r${rows > 1 ? `\x1b[${rows - 1}A` : ''}\x1b[J`;
  }

  /** What of the open block's raw text may be on the screen. */
  visible(display: string): string {
    const fitted = fitRows(display, this.#columns(), this.#maxRows());
    this.capped = fitted.length < display.length;
    return fitted;
  }
}
