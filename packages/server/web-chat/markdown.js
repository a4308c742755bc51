// Model text as Markdown: parsed by marked, cleaned by DOMPurify with an allow-list, code highlighted by
// highlight.js. Raw HTML in the model's text is shown as text, never parsed: the model's words are hostile.

import hljs from '/web-chat/vendor/highlight.js';
import { Marked } from '/web-chat/vendor/marked.js';
import DOMPurify from '/web-chat/vendor/purify.js';

// biome-ignore lint/suspicious/noControlCharactersInRegex: making control characters visible is its job.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Makes control characters (ESC, C1, bidi overrides) visible instead of letting them act. */
export function neutralize(text) {
  return String(text).replace(CONTROL, (character) => {
    const code = character.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    if (code === 0x7f) return '\u2421';
    return `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

const escapeHtml = (text) => String(text).replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);

const markdown = new Marked({
  gfm: true,
  renderer: {
    // Raw HTML (block or inline) is written out as the characters the model sent.
    html: ({ text }) => escapeHtml(text),
    // No images: a remote one would report the reader to its host; the link stays, as a link.
    image: ({ href, text }) => `<a href="${escapeHtml(href)}">${escapeHtml(text || href)}</a>`,
  },
});

const ALLOWED_TAGS = [
  'a',
  'blockquote',
  'br',
  'code',
  'del',
  'em',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'input',
  'li',
  'ol',
  'p',
  'pre',
  'strong',
  'table',
  'tbody',
  'td',
  'th',
  'thead',
  'tr',
  'ul',
];
const ALLOWED_ATTR = ['href', 'title', 'class', 'start', 'align', 'type', 'checked', 'disabled'];
const SAFE_LINK = /^(https?:|mailto:)/i;

// Every link opens in a new tab without a handle on this page; one that is not http(s)/mailto loses its target.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    const href = node.getAttribute('href') ?? '';
    if (SAFE_LINK.test(href)) {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer');
    } else node.removeAttribute('href');
  }
  if (node.tagName === 'INPUT' && node.getAttribute('type') !== 'checkbox') node.remove();
  const className = node.getAttribute?.('class');
  // Only marked's own `language-x` classes stay: the page's styles are not the model's to use.
  if (className && !/^language-[\w+-]+$/.test(className)) node.removeAttribute('class');
});

/** Wraps a highlighted `<pre>` with a header: its language and a Copy button. */
function decorateCode(pre) {
  const code = pre.querySelector('code');
  if (code === null) return;
  const language = /language-([\w+-]+)/.exec(code.className)?.[1] ?? '';
  const source = (code.textContent ?? '').replace(/\n$/, '');
  if (language !== '' && hljs.getLanguage(language) !== undefined) {
    // highlight.js escapes the source itself and adds only its own <span class="hljs-…"> elements.
    code.innerHTML = hljs.highlight(source, { language, ignoreIllegals: true }).value;
  } else code.textContent = source;
  const block = document.createElement('div');
  block.className = 'code-block';
  const head = document.createElement('div');
  head.className = 'code-head';
  const label = document.createElement('span');
  label.textContent = language || 'text';
  const copy = document.createElement('button');
  copy.type = 'button';
  copy.className = 'copy';
  copy.textContent = 'Copy';
  copy.setAttribute('aria-label', `Copy ${language || 'text'} code`);
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(code.textContent ?? '');
      copy.textContent = 'Copied';
    } catch {
      copy.textContent = 'Copy failed';
    }
    setTimeout(() => {
      copy.textContent = 'Copy';
    }, 1500);
  });
  head.append(label, copy);
  pre.tabIndex = 0;
  pre.replaceWith(block);
  block.append(head, pre);
}

/** Sanitised, decorated DOM for `html` (marked's output). */
function cleanFragment(html) {
  const fragment = DOMPurify.sanitize(html.trim(), {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOW_DATA_ATTR: false,
    RETURN_DOM_FRAGMENT: true,
  });
  for (const pre of fragment.querySelectorAll('pre')) decorateCode(pre);
  for (const table of fragment.querySelectorAll('table')) {
    const scroller = document.createElement('div');
    scroller.className = 'table-scroll';
    table.replaceWith(scroller);
    scroller.append(table);
  }
  return fragment;
}

/** Per container drawn by `renderMarkdown`: its top-level blocks, each with its source and its nodes. */
const blocksOf = new WeakMap();

/**
 * Renders `text` as sanitised Markdown into `container`. Called again on the same container with a longer
 * text (a streamed answer), it keeps the blocks (paragraphs, lists, code…) whose source has not changed: only
 * the last block, the one still growing, and what follows are parsed and cleaned again, so a long answer costs
 * about the same per chunk as a short one. A fresh container is drawn whole.
 */
export function renderMarkdown(container, text) {
  const tokens = markdown.lexer(neutralize(text));
  const previous = blocksOf.get(container) ?? [];
  let kept = 0;
  while (kept < previous.length - 1 && kept < tokens.length - 1 && previous[kept].raw === tokens[kept].raw)
    kept++;
  for (const block of previous.slice(kept)) for (const node of block.nodes) node.remove();
  if (previous.length === 0) container.replaceChildren();
  const blocks = previous.slice(0, kept);
  for (const token of tokens.slice(kept)) {
    const one = Object.assign([token], { links: tokens.links });
    // No options here: options given to parser() replace the instance's, its renderer included.
    const fragment = cleanFragment(markdown.parser(one));
    const nodes = [...fragment.childNodes];
    container.append(fragment);
    blocks.push({ raw: token.raw, nodes });
  }
  blocksOf.set(container, blocks);
}
