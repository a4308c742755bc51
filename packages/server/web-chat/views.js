// One DOM element per transcript item. Everything a model, tool or server sends goes in as text
// (textContent) after control characters are made visible; only Markdown passes the sanitiser in markdown.js.

import { unifiedDiff } from '/web-chat/diff.js';
import { neutralize, renderMarkdown } from '/web-chat/markdown.js';

// A tool's output longer than this shows its head first, with a button for the rest.
const OUTPUT_HEAD_LINES = 20;
const OUTPUT_HEAD_CHARS = 2_000;

/** An element of `tag` with `className` and, when given, `text` as its (neutralised) text. */
export function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = neutralize(text);
  // A block that may scroll sideways can be reached (and scrolled) from the keyboard.
  if (tag === 'pre') node.tabIndex = 0;
  return node;
}

function button(className, text, onClick) {
  const node = element('button', className, text);
  node.type = 'button';
  node.addEventListener('click', onClick);
  return node;
}

const oneLine = (text, limit = 90) => {
  const flat = String(text).replace(/\s+/g, ' ').trim();
  return flat.length > limit ? `${flat.slice(0, limit - 1)}…` : flat;
};

const argumentsOf = (item) => (item.args !== null && typeof item.args === 'object' ? item.args : {});

function jsonText(value, indent) {
  try {
    return JSON.stringify(value, null, indent) ?? '';
  } catch {
    return '';
  }
}

/**
 * A one-line summary of a call's arguments: the command or path when the tool has one, a lone value as it is,
 * else compact JSON.
 */
export function argumentSummary(item) {
  const args = argumentsOf(item);
  for (const key of ['command', 'path', 'pattern', 'url', 'query']) {
    if (typeof args[key] === 'string') return oneLine(args[key]);
  }
  const values = Object.values(args);
  if (values.length === 1 && ['string', 'number'].includes(typeof values[0])) return oneLine(values[0]);
  const json = jsonText(item.args);
  return json === '{}' || json === '' ? '' : oneLine(json);
}

const durationText = (ms) => {
  if (typeof ms !== 'number') return '';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
};

const STATUS_TEXT = { running: 'running', done: 'done', failed: 'failed', denied: 'denied' };

/** The output of a tool call: its head when long, with a button that shows all of it. */
function outputView(output) {
  const text = String(output);
  const lines = text.split('\n');
  const pre = element('pre', 'tool-output');
  const long = lines.length > OUTPUT_HEAD_LINES || text.length > OUTPUT_HEAD_CHARS;
  if (!long) {
    pre.textContent = neutralize(text);
    return [pre];
  }
  pre.textContent = neutralize(lines.slice(0, OUTPUT_HEAD_LINES).join('\n').slice(0, OUTPUT_HEAD_CHARS));
  const more = button('show-all', `Show all ${lines.length} lines`, () => {
    pre.textContent = neutralize(text);
    more.remove();
  });
  return [pre, more];
}

/** How many of a running call's last output lines its row shows. */
const LIVE_LINES = 5;

/** The last `count` lines of output as a terminal leaves them: a carriage return starts its line over. */
function lastLines(output, count) {
  const lines = output.split('\n').map((line) => line.replace(/\r+$/, '').replace(/^[\s\S]*\r/, ''));
  if (lines.at(-1) === '') lines.pop();
  return lines.slice(-count).join('\n');
}

/** A tool call as one compact row (name, arguments, status, duration) that opens onto its output. */
function toolView(item) {
  const row = element('li', `tool ${item.state}`);
  row.dataset.callId = item.callId;
  const details = element('details');
  const summary = element('summary');
  summary.append(
    element('span', 'tool-name', item.toolName),
    element('span', 'tool-args', argumentSummary(item)),
    element('span', 'tool-status', STATUS_TEXT[item.state] ?? item.state),
    element('span', 'tool-time', durationText(item.durationMs)),
  );
  details.append(summary);
  // A running call's last output lines show under its row without opening it; they go when it ends.
  if (item.state === 'running' && typeof item.live === 'string' && item.live !== '') {
    row.append(element('pre', 'tool-live', lastLines(item.live, LIVE_LINES)));
  }
  const json = jsonText(item.args, 2);
  if (json !== '' && json !== '{}') details.append(element('pre', 'tool-input', json));
  if (item.output !== undefined) details.append(...outputView(item.output));
  row.append(details);
  return row;
}

/** The diff lines as a `<pre>` of one `<span>` per line, marked `add`, `del`, `same` or `hunk`. */
function diffView(before, after) {
  const pre = element('pre', 'diff');
  pre.setAttribute('aria-label', 'changes');
  for (const line of unifiedDiff(before, after)) {
    const mark = { add: '+', del: '-', same: ' ', hunk: '' }[line.kind];
    pre.append(element('span', `diff-line ${line.kind}`, `${mark}${line.text}\n`));
  }
  return pre;
}

/** What a call asking for approval would do: a shell command in full, a file change as a diff, else its JSON. */
function plannedView(item) {
  const args = argumentsOf(item);
  const parts = [];
  if (typeof args.command === 'string') {
    parts.push(element('pre', 'command', `$ ${args.command}`));
    if (typeof args.cwd === 'string') parts.push(element('p', 'card-path', `in ${args.cwd}`));
    return parts;
  }
  if (typeof args.path === 'string') parts.push(element('p', 'card-path', args.path));
  if (typeof args.oldString === 'string' && typeof args.newString === 'string') {
    parts.push(diffView(args.oldString, args.newString));
  } else if (typeof args.content === 'string') {
    parts.push(diffView('', args.content));
  } else {
    const json = jsonText(item.args, 2);
    if (json !== '' && json !== '{}') parts.push(element('pre', 'tool-input', json));
  }
  return parts;
}

/** The Approve / Deny / Deny-with-a-reason controls of a card. */
function decisionControls(item, actions) {
  const controls = element('div', 'card-actions');
  const reasonForm = element('form', 'deny-form');
  reasonForm.hidden = true;
  const reasonId = `reason-${item.callId.replace(/[^\w-]/g, '_')}`;
  const label = element('label', '', 'Why not? The model reads this.');
  label.htmlFor = reasonId;
  const reason = element('textarea', 'reason');
  reason.id = reasonId;
  reason.rows = 2;
  const sendDenial = element('button', 'send-denial', 'Deny');
  sendDenial.type = 'submit';
  reasonForm.append(label, reason, sendDenial);
  reasonForm.addEventListener('submit', (event) => {
    event.preventDefault();
    actions.decide(item, false, reason.value.trim() || undefined);
  });
  reason.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault();
      reasonForm.requestSubmit();
    }
  });
  const approve = button('approve', 'Approve', () => actions.decide(item, true));
  const deny = button('deny', 'Deny', () => actions.decide(item, false));
  const withReason = button('deny-reason', 'Deny with reason…', () => {
    reasonForm.hidden = false;
    reason.focus();
  });
  controls.append(approve, deny, withReason);
  return [controls, reasonForm];
}

/** An approval card: what will run and the buttons that decide it (or how it was decided). */
function pendingView(item, actions) {
  const card = element('li', 'pending');
  card.dataset.callId = item.callId;
  const headingId = `card-${item.callId.replace(/[^\w-]/g, '_')}`;
  card.setAttribute('aria-labelledby', headingId);
  const heading = element('p', 'card-title');
  heading.id = headingId;
  heading.append('Allow ', element('code', '', item.toolName), ' to run?');
  card.append(heading, ...plannedView(item));
  if (item.decided) {
    card.append(
      element('p', `notice decided ${item.decided.startsWith('approved') ? 'yes' : 'no'}`, item.decided),
    );
  } else if (actions.windowPassed(item)) {
    // Too late to decide: the call counts as denied, and the turn goes on without it.
    card.append(element('p', 'notice', 'The approval window passed, so this call is denied.'));
    card.append(button('continue', 'Continue', () => actions.continueTurn()));
  } else {
    card.append(...decisionControls(item, actions));
  }
  return card;
}

const count = (value) => Number(value ?? 0).toLocaleString('en-US');

/** What an answer used, collapsed to one line: tokens, and the cost when the model's price is known. */
function usageView(item) {
  const usage = item.usage ?? {};
  const row = element('li', 'usage');
  const details = element('details');
  const total = Number(usage.inputTokens ?? 0) + Number(usage.outputTokens ?? 0);
  const cost = typeof usage.costUsd === 'number' ? ` · $${usage.costUsd.toFixed(4)}` : '';
  details.append(element('summary', '', `${count(total)} tokens${cost}`));
  const list = element('dl');
  const rows = [
    ['Input', count(usage.inputTokens)],
    ['Output', count(usage.outputTokens)],
    ['Cached input', count(usage.cachedInputTokens)],
    ['Reasoning', count(usage.reasoningTokens)],
    ['Model calls', count(usage.modelCalls)],
  ];
  if (typeof usage.costUsd === 'number') rows.push(['Cost', `$${usage.costUsd.toFixed(6)}`]);
  for (const [name, value] of rows) list.append(element('dt', '', name), element('dd', '', value));
  details.append(list);
  row.append(details);
  return row;
}

/** The element of one transcript item; `actions` handles the buttons of approval cards. */
export function itemView(item, actions) {
  switch (item.kind) {
    case 'assistant': {
      const row = element('li', 'assistant');
      renderMarkdown(row, item.text);
      return row;
    }
    case 'tool':
      return toolView(item);
    case 'pending':
      return pendingView(item, actions);
    case 'usage':
      return usageView(item);
    case 'reasoning': {
      // The model's thinking, one click away: the answer is what the person came for.
      const row = element('li', 'reasoning-row');
      const details = element('details');
      details.append(element('summary', '', 'Thinking'), element('div', 'reasoning', item.text));
      row.append(details);
      return row;
    }
    case 'notice': {
      const row = element('li', 'notice', item.text);
      if (item.detail) {
        // The error's code and message for whoever needs them, one click away.
        const details = element('details');
        details.append(element('summary', '', 'Details'), element('code', '', item.detail));
        row.append(' ', details);
      }
      return row;
    }
    default:
      return element('li', item.kind, item.text);
  }
}
