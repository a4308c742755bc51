import { beforeAll, describe, expect, it } from 'vitest';
import type { MarkdownStream } from '../src/chat/markdown.js';

let createMarkdownStream: (options: { screen: { columns: number; rows: number } }) => MarkdownStream;

beforeAll(async () => {
  // chalk decides on colour when it is first loaded; a test's stdout is no terminal.
  process.env.FORCE_COLOR = '1';
  ({ createMarkdownStream } = await import('../src/chat/markdown.js'));
});

const ESC = '\x1b';
// biome-ignore lint/suspicious/noControlCharactersInRegex: the styling sequences are what is removed.
const SGR = /\x1b\[[0-9;]*m/g;

const COLUMNS = 80;

/** Streams `text` in pieces of `size` characters; returns what was written after each piece and at the end. */
function stream(text: string, size: number, rows = 1000): { pieces: string[]; total: string } {
  const markdown = createMarkdownStream({ screen: { columns: COLUMNS, rows } });
  const pieces: string[] = [];
  for (let index = 0; index < text.length; index += size)
    pieces.push(markdown.push(text.slice(index, index + size)));
  pieces.push(markdown.flush());
  return { pieces, total: pieces.join('') };
}

/**
 * The rows a terminal shows after `output`: text wraps at COLUMNS, and the stream's one cursor movement, `\r`
 * then up N rows then erase to the end of the screen, removes the current row and the N above it.
 */
function screenOf(output: string): string[] {
  const rows: string[] = [''];
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the erase sequence is what is parsed.
  const parts = output.split(/(\r(?:\x1b\[\d+A)?\x1b\[J|\x1b\[[0-9;]*m|\n)/);
  for (const part of parts) {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the erase sequence is what is parsed.
    const erase = /^\r(?:\x1b\[(\d+)A)?\x1b\[J$/.exec(part);
    if (erase !== null) {
      rows.splice(rows.length - 1 - Number(erase[1] ?? 0));
      rows.push('');
    } else if (part === '\n') {
      rows.push('');
    } else {
      for (const character of part) {
        if (character === '\x1b' || part.startsWith('\x1b[')) {
          rows[rows.length - 1] += part;
          break;
        }
        if ((rows.at(-1) as string).replace(SGR, '').length === COLUMNS) rows.push('');
        rows[rows.length - 1] += character;
      }
    }
  }
  return rows;
}

describe('Markdown answers', () => {
  it('styles headings, emphasis and lists, and draws tables with borders', () => {
    const { total } = stream(
      '# Title\n\nSome *em* and **bold** text.\n\n- one\n- *two*\n\n| name | value |\n|---|---|\n| a | 1 |\n',
      1000,
    );
    const plain = total.replace(SGR, '');
    expect(total).toContain(`${ESC}[1mTitle`);
    expect(total).toContain(`${ESC}[1mbold`);
    expect(total).toContain(`${ESC}[3mem`);
    expect(plain).not.toContain('**');
    expect(plain).not.toContain('# Title');
    expect(plain).toMatch(/\* one/);
    // Inline Markdown inside a tight list item is rendered too.
    expect(plain).toMatch(/\* two/);
    expect(total).toContain(`${ESC}[3mtwo`);
    expect(plain).toMatch(/┌─+┬─+┐/);
    expect(plain).toMatch(/│ name +│ value +│/);
  });

  it('highlights a fenced code block by its language', () => {
    const { total } = stream('```js\nconst answer = 42;\n```\n', 1000);
    expect(total.replace(SGR, '')).toContain('const answer = 42;');
    // highlight.js marks `const` as a keyword, which cli-highlight colours.
    expect(total).toContain(`${ESC}[34mconst`);
  });

  it('shows the open block raw and replaces it by its rendering once it closes, whatever the pieces', () => {
    const text = `First paragraph\n${'still first, and long enough to wrap. '.repeat(3)}\n\n## Next\n\n\`\`\`\ncode\n\`\`\`\n\nlast *words*`;
    const whole = screenOf(stream(text, text.length).total);
    expect(whole.join('\n').replace(SGR, '')).toContain('Next');
    for (const size of [1, 3, 7, 40]) {
      const { pieces, total } = stream(text, size);
      expect(screenOf(total), `pieces of ${size}`).toEqual(whole);
      // The first piece is on the screen at once, as the model sent it.
      expect(pieces[0]).toBe(text.slice(0, size));
      // Only whole blocks are rendered: no piece but those holding a rendering has styling.
      const styled = pieces.filter((piece) => SGR.test(piece));
      expect(styled.length).toBeLessThanOrEqual(4);
    }
  });

  it('never moves the cursor above the top of the screen: raw text of a tall block stops at its height', async () => {
    const code = Array.from({ length: 30 }, (_, index) => `const line${index} = ${index};`).join('\n');
    const text = `Intro.\n\n\`\`\`js\n${code}\n\`\`\`\n\nAfter.`;
    const whole = screenOf(stream(text, text.length).total);
    for (const size of [1, 9, 50]) {
      const { total } = stream(text, size, 12);
      expect(screenOf(total), `pieces of ${size}`).toEqual(whole);
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the erase sequence is what is looked for.
      for (const match of total.matchAll(/\r(?:\x1b\[(\d+)A)?\x1b\[J/g)) {
        expect(Number(match[1] ?? 0) + 1).toBeLessThanOrEqual(10);
      }
    }
  });

  it('shows the escape sequences of the model escaped, so only its own styling reaches the terminal', () => {
    const hostile = '# \x1b]0;owned\x07Title\n\nclear \x1b[2K\r line \x9b31m and \u202egnp.exe\n';
    const { total } = stream(hostile, 5);
    expect(total).not.toContain('\x07');
    expect(total).not.toContain('\x9b');
    expect(total).not.toContain('\u202e');
    expect(total).not.toContain('\x1b]');
    expect(total).not.toContain('\x1b[2K');
    // What is left of ESC is the styling and the stream's own erase of the raw text it replaces.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the erase sequence is what is removed.
    expect(total.replace(SGR, '').replace(/\r(\x1b\[\d+A)?\x1b\[J/g, '')).not.toContain('\x1b');
    expect(total).toContain('\\e]0;owned\\aTitle');
    expect(total).toContain('\\e[2K\\r line \\x9b31m');
  });

  it('shows a link’s target instead of hiding it in a hyperlink', () => {
    const { total } = stream('See [the docs](https://example.test/x).\n\n', 1000);
    expect(total.replace(SGR, '')).toContain('the docs (https://example.test/x)');
    expect(total).not.toContain('\x1b]8');
  });
});
