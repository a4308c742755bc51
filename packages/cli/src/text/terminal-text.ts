/**
 * Text from a model, a tool, an MCP server, a file name or an error is hostile: written to a terminal as it
 * is, an ESC or a C1 control starts a sequence that moves the cursor, erases the line, sets the window title
 * or writes the clipboard, and a bidi override reorders what the user reads. Every such character is shown
 * visibly escaped instead, so what the terminal draws is exactly what the text holds.
 */

/** How a piece of text will be laid out: inside a block that may span lines, or on one line. */
export interface NeutralizeOptions {
  /** Keep line feeds and tabs as they are (true, the default) or show them as `\n` and `\t` too. */
  readonly multiline?: boolean;
}

/** The visible names of the controls people recognise; every other control is shown by its code point. */
const NAMED: Readonly<Record<string, string>> = {
  '\x1b': '\\e',
  '\r': '\\r',
  '\b': '\\b',
  '\f': '\\f',
  '\v': '\\v',
  '\0': '\\0',
  '\x07': '\\a',
};

/**
 * C0 controls, DEL, C1 controls, the bidi embeddings/overrides/isolates (U+202A–202E, U+2066–2069), the
 * line and paragraph separators and the byte-order mark. Line feed and tab are handled by the option.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this module's job.
const UNSAFE = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]|\t/g;

function escapeOne(character: string, multiline: boolean): string {
  if (character === '\n') return multiline ? '\n' : '\\n';
  if (character === '\t') return multiline ? '\t' : '\\t';
  const named = NAMED[character];
  if (named !== undefined) return named;
  const code = character.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * The text with every control character that a terminal would interpret shown escaped (`\e`, `\r`, `\x9b`,
 * `\u202e`, …). Printable text, including wide and combining characters, passes through unchanged.
 */
export function neutralize(text: string, options: NeutralizeOptions = {}): string {
  const multiline = options.multiline ?? true;
  UNSAFE.lastIndex = 0;
  if (!UNSAFE.test(text)) return text;
  UNSAFE.lastIndex = 0;
  return text.replace(UNSAFE, (character) => escapeOne(character, multiline));
}

/** The text on one line: like `neutralize`, with line feeds and tabs escaped too. */
export function neutralizeLine(text: string): string {
  return neutralize(text, { multiline: false });
}

/**
 * JSON.stringify escapes C0 controls but leaves DEL, the C1 controls (U+0080–009F, which some terminals take
 * as CSI and OSC), the bidi controls and the line separators raw. This writes them as `\uXXXX` escapes too:
 * the same JSON value, parsed, and nothing a terminal interprets when the lines are shown.
 */
export function terminalSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}
