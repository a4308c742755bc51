import type { MarkdownStream } from './markdown.js';

/**
 * The Markdown renderer is loaded on first use, not with the CLI: marked-terminal brings highlight.js with
 * every language, which costs hundreds of milliseconds that `--help`, pipes and `--json` never need.
 */
let loading: Promise<typeof import('./markdown.js')> | undefined;

/** A MarkdownStream for a terminal `columns()` wide, or undefined (raw answers) when the renderer cannot load. */
export async function loadMarkdownStream(columns: () => number): Promise<MarkdownStream | undefined> {
  loading ??= import('./markdown.js');
  try {
    return (await loading).createMarkdownStream({ columns });
  } catch {
    // A broken install costs the styling only; the answer is still shown, as the model wrote it.
    return undefined;
  }
}
