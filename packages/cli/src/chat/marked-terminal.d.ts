/** The part of marked-terminal's API this package uses (the package ships no types of its own). */
declare module 'marked-terminal' {
  import type { MarkedExtension } from 'marked';

  /** Options of marked-terminal's renderer; styles are left at the package's defaults. */
  export interface TerminalRendererOptions {
    /** Replace `:name:` with an emoji. */
    emoji?: boolean;
    /** Print a heading's `#` marks before it. */
    showSectionPrefix?: boolean;
    /** The width text is reflowed to, and rules drawn at. */
    width?: number;
    /** Reflow paragraphs to `width`. */
    reflowText?: boolean;
    /** Spaces per indentation level of lists and code. */
    tab?: number;
  }

  /** The marked extension that renders Markdown as styled terminal text. */
  export function markedTerminal(
    options?: TerminalRendererOptions,
    highlightOptions?: Record<string, unknown>,
  ): MarkedExtension;
}
