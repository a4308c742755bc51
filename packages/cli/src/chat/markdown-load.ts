import type { MarkdownStream, Screen } from './markdown.js';

/**
 * The Markdown renderer is loaded on first use, not with the CLI: marked-terminal brings highlight.js with
 * every language, which costs hundreds of milliseconds that `--help`, pipes and `--json` never need.
 */
let loading: Promise<typeof import('./markdown.js')> | undefined;

/** A MarkdownStream for `screen` (a terminal's stream), or undefined (raw answers) when the renderer cannot load. */
export async function loadMarkdownStream(screen: Screen): Promise<MarkdownStream | undefined> {
  loading ??= import('./markdown.js');
  try {
    return (await loading).createMarkdownStream({ screen });
  } catch {
    // A broken install costs the styling only; the answer is still shown, as the model wrote it.
    return undefined;
  }
}
