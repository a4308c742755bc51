// The YouYou web chat: a plain ES module, no build step. Everything a model, tool or server sends is put
// in the page as text (textContent), never as HTML, after control characters are made visible.

const $ = (id) => document.getElementById(id);
const TOKEN_KEY = 'youyou.token';
const stateKey = (sessionId) => `youyou.chat.${sessionId}`;

/** The page's state: the token, the open session, its rendered items and the last event sequence seen. */
const page = { token: '', sessionId: '', items: [], cursor: 0, tail: undefined };

// biome-ignore lint/suspicious/noControlCharactersInRegex: making control characters visible is its job.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Makes control characters (ESC, C1, bidi overrides) visible instead of letting them act. */
function neutralize(text) {
  return String(text).replace(CONTROL, (character) => {
    const code = character.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    if (code === 0x7f) return '\u2421';
    return `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = neutralize(text);
  return node;
}

function setStatus(text) {
  $('status').textContent = text;
}

function showError(text) {
  $('error').textContent = neutralize(text);
}

/** fetch on the API with the bearer token. */
function api(path, init = {}) {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${page.token}`);
  if (init.json !== undefined) headers.set('content-type', 'application/json');
  const body = init.json === undefined ? init.body : JSON.stringify(init.json);
  return fetch(path, { ...init, headers, body });
}

/** The `{ error: { code, message } }` of a failed answer as one line. */
async function errorText(response) {
  try {
    const body = await response.json();
    return `${body.error.code}: ${body.error.message}`;
  } catch {
    return `HTTP ${response.status}`;
  }
}

/** Reads server-sent events from a fetch response and hands each `{ id, data }` to `onMessage`, in turn. */
async function readSse(response, onMessage) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let id;
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('id:')) id = line.slice(3).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length > 0) await onMessage({ id: Number(id), data: JSON.parse(data.join('\n')) });
    }
  }
}

function save() {
  sessionStorage.setItem(
    stateKey(page.sessionId),
    JSON.stringify({ items: page.items, cursor: page.cursor }),
  );
}

function toolText(item) {
  const mark = { running: '…', done: '✓', failed: '✗' }[item.state] ?? '';
  const output = item.output === undefined ? '' : ` → ${item.output}`;
  return `${mark} ${item.toolName}(${item.args})${output}`;
}

/** Draws the transcript from `page.items`. */
function render() {
  const list = $('transcript');
  const follow = list.scrollTop + list.clientHeight >= list.scrollHeight - 20;
  list.replaceChildren();
  for (const item of page.items) {
    if (item.kind === 'tool') {
      list.append(element('li', `tool ${item.state}`, toolText(item)));
    } else if (item.kind === 'pending') {
      const row = element('li', 'pending');
      row.dataset.callId = item.callId;
      row.append(element('div', '', `${item.toolName}(${item.args}) waits for approval`));
      if (item.decided) {
        row.append(element('div', 'notice', item.decided));
      } else if (windowPassed(item)) {
        // Too late to decide: the call counts as denied, and the turn goes on without it.
        row.append(element('div', 'notice', 'the approval window passed: denied'));
        const proceed = element('button', 'continue', 'Continue');
        proceed.addEventListener('click', () => continueTurn());
        row.append(proceed);
      } else {
        const approve = element('button', 'approve', 'Approve');
        const deny = element('button', 'deny', 'Deny');
        approve.addEventListener('click', () => decide(item, true));
        deny.addEventListener('click', () => decide(item, false));
        row.append(approve, deny);
      }
      list.append(row);
    } else {
      list.append(element('li', item.kind, item.text));
    }
  }
  if (follow) list.scrollTop = list.scrollHeight;
}

/** Appends to the last item when it is of the same kind and turn, else starts a new one. */
function appendText(kind, turnId, text) {
  const last = page.items.at(-1);
  if (last?.kind === kind && last.turnId === turnId) last.text += text;
  else page.items.push({ kind, turnId, text });
}

function argumentsText(value) {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

/**
 * Applies one event of the session; one already seen (sequence not above the cursor) is dropped. A `resync`
 * (this server cannot continue the cursor: another process or a restart) reloads the committed history first.
 */
async function apply({ id, data }) {
  if (data.type === 'resync' && Number.isInteger(id)) {
    page.cursor = id;
    return reloadHistory();
  }
  if (!Number.isInteger(id) || id <= page.cursor) return;
  page.cursor = id;
  const payload = data.payload ?? {};
  const turnId = String(data.turnId ?? '');
  switch (payload.type) {
    case 'text_delta':
      appendText('assistant', turnId, String(payload.text));
      break;
    case 'reasoning_delta':
      appendText('reasoning', turnId, String(payload.text));
      break;
    case 'tool_call_start':
      page.items.push({
        kind: 'tool',
        callId: String(payload.callId),
        toolName: String(payload.toolName),
        args: argumentsText(payload.arguments),
        state: 'running',
      });
      break;
    case 'tool_call_end': {
      const tool = page.items.find((item) => item.kind === 'tool' && item.callId === payload.callId);
      const output = String(payload.output?.content ?? '');
      if (tool) {
        tool.state = payload.success ? 'done' : 'failed';
        tool.output = output;
      } else {
        page.items.push({
          kind: 'tool',
          callId: String(payload.callId),
          toolName: String(payload.toolName),
          args: '',
          state: payload.success ? 'done' : 'failed',
          output,
        });
      }
      break;
    }
    case 'turn_suspended':
      for (const call of payload.pendingCalls ?? []) addPending(call);
      setStatus('waiting for approval');
      break;
    case 'turn_complete':
      setStatus('turn complete');
      break;
    case 'turn_cancelled':
      page.items.push({ kind: 'notice', text: 'turn cancelled' });
      break;
    case 'error':
      page.items.push({
        kind: 'notice',
        text: `error ${payload.error?.code ?? ''}: ${payload.error?.message ?? ''}`,
      });
      break;
    default:
      return save();
  }
  save();
  render();
}

function addPending(call) {
  const callId = String(call.callId);
  if (page.items.some((item) => item.kind === 'pending' && item.callId === callId)) return;
  page.items.push({
    kind: 'pending',
    callId,
    toolName: String(call.toolName),
    args: argumentsText(call.arguments),
    decided: '',
    expiresAt: typeof call.expiresAt === 'string' ? call.expiresAt : '',
  });
  // Redraw when the window passes, so the buttons change while the page is open.
  const left = Date.parse(call.expiresAt) - Date.now();
  if (left > 0) setTimeout(render, Math.min(left + 50, 2_147_483_647));
}

/** Whether a pending call's approval window has passed (a call without one never passes). */
function windowPassed(item) {
  return item.expiresAt !== '' && item.expiresAt !== undefined && Date.parse(item.expiresAt) <= Date.now();
}

/** Continues a turn whose approval window passed; its events come on the tail. */
async function continueTurn() {
  const response = await api(`/sessions/${encodeURIComponent(page.sessionId)}/continue`, {
    method: 'POST',
  });
  if (!response.ok) return showError(await errorText(response));
  await response.body?.cancel();
  for (const pending of page.items) {
    if (pending.kind === 'pending' && !pending.decided)
      pending.decided = 'denied: the approval window passed';
  }
  save();
  render();
}

/** Sends an approval or a denial; the continued turn's events come on the tail. */
async function decide(item, approved) {
  const response = await api(
    `/sessions/${encodeURIComponent(page.sessionId)}/approvals/${encodeURIComponent(item.callId)}`,
    {
      method: 'POST',
      json: approved ? { approved: true } : { approved: false, reason: 'denied in the web chat' },
    },
  );
  if (!response.ok) return showError(await errorText(response));
  await response.body?.cancel();
  item.decided = approved ? 'approved' : 'denied';
  save();
  render();
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Follows the session's events from the cursor (`Last-Event-ID`), reconnecting after a dropped stream
 * with a growing wait, until another session is opened.
 */
async function follow(sessionId, signal) {
  let wait = 250;
  while (!signal.aborted) {
    try {
      const response = await api(`/sessions/${encodeURIComponent(sessionId)}/events`, {
        headers: { 'last-event-id': String(page.cursor) },
        signal,
      });
      if (response.status === 401 || response.status === 404) return showError(await errorText(response));
      if (response.ok) {
        setStatus('live');
        wait = 250;
        await readSse(response, apply);
      }
    } catch {
      if (signal.aborted) return;
    }
    setStatus('reconnecting');
    await sleep(wait);
    wait = Math.min(wait * 2, 5000);
  }
}

/** The committed history as items, for a session this tab has not followed before. */
function historyItems(messages, pending) {
  const items = [];
  const text = (content) =>
    content
      .filter((block) => block.type === 'text')
      .map((block) => block.text)
      .join('');
  for (const message of messages) {
    if (message.type === 'user') items.push({ kind: 'user', text: text(message.content) });
    else if (message.type === 'assistant')
      items.push({ kind: 'assistant', turnId: '', text: text(message.content) });
    else if (message.type === 'tool_call') {
      items.push({
        kind: 'tool',
        callId: message.callId,
        toolName: message.toolName,
        args: argumentsText(message.arguments),
        state: 'running',
      });
    } else if (message.type === 'tool_result') {
      const tool = items.find((item) => item.kind === 'tool' && item.callId === message.callId);
      if (tool) {
        tool.state = message.isError ? 'failed' : 'done';
        tool.output = message.content;
      }
    }
  }
  page.items = items;
  for (const call of pending) addPending(call);
  return items;
}

/** Replaces the drawn transcript with the session's committed history (the cursor stays). */
async function reloadHistory() {
  const answer = await api(`/sessions/${encodeURIComponent(page.sessionId)}/messages`);
  if (!answer.ok) return showError(await errorText(answer));
  const { messages, pendingApprovals } = await answer.json();
  historyItems(messages, pendingApprovals);
  save();
  render();
}

/** Opens a session: checks it is this tenant's, restores or loads its transcript, follows its events. */
async function openSession(sessionId) {
  page.tail?.abort();
  page.sessionId = sessionId;
  page.items = [];
  page.cursor = 0;
  showError('');
  render();
  history.replaceState(null, '', `#session=${encodeURIComponent(sessionId)}`);
  const path = `/sessions/${encodeURIComponent(sessionId)}`;
  const info = await api(path);
  if (!info.ok) return showError(await errorText(info));
  const { lastSequence } = await info.json();
  const saved = JSON.parse(sessionStorage.getItem(stateKey(sessionId)) ?? 'null');
  if (saved && saved.cursor <= lastSequence) {
    page.items = saved.items;
    page.cursor = saved.cursor;
  } else {
    const answer = await api(`${path}/messages`);
    if (!answer.ok) return showError(await errorText(answer));
    const { messages, pendingApprovals } = await answer.json();
    historyItems(messages, pendingApprovals);
    page.cursor = lastSequence;
    save();
  }
  render();
  markCurrent();
  const controller = new AbortController();
  page.tail = controller;
  follow(sessionId, controller.signal);
}

function markCurrent() {
  for (const button of document.querySelectorAll('#sessions button')) {
    button.setAttribute('aria-current', String(button.dataset.sessionId === page.sessionId));
  }
}

async function loadSessions() {
  const response = await api('/sessions');
  if (!response.ok) return showError(await errorText(response));
  const { sessions } = await response.json();
  const list = $('sessions');
  list.replaceChildren();
  for (const summary of sessions) {
    const button = element('button', '', summary.title || summary.sessionId);
    button.dataset.sessionId = summary.sessionId;
    button.addEventListener('click', () => openSession(summary.sessionId));
    const row = element('li');
    row.append(button);
    list.append(row);
  }
  markCurrent();
}

async function newSession() {
  const response = await api('/sessions', { method: 'POST', json: {} });
  if (!response.ok) return showError(await errorText(response));
  const { sessionId } = await response.json();
  await openSession(sessionId);
  await loadSessions();
}

async function send(event) {
  event.preventDefault();
  const text = $('message').value;
  if (text.trim() === '') return;
  if (page.sessionId === '') await newSession();
  if (page.sessionId === '') return;
  showError('');
  page.items.push({ kind: 'user', text });
  save();
  render();
  $('message').value = '';
  const response = await api(`/sessions/${encodeURIComponent(page.sessionId)}/messages`, {
    method: 'POST',
    json: { content: text },
  });
  if (!response.ok) return showError(await errorText(response));
  setStatus('turn running');
  // The turn's events arrive on the session's tail; leaving this stream does not cancel the turn.
  await response.body?.cancel();
  loadSessions();
}

function useToken(token) {
  page.token = token;
  sessionStorage.setItem(TOKEN_KEY, token);
  loadSessions();
}

function start() {
  const hash = new URLSearchParams(location.hash.slice(1));
  const token = hash.get('token') ?? sessionStorage.getItem(TOKEN_KEY) ?? '';
  const sessionId = hash.get('session') ?? '';
  // The token leaves the address bar (and the history) once read.
  if (hash.has('token'))
    history.replaceState(null, '', sessionId ? `#session=${encodeURIComponent(sessionId)}` : '#');
  $('token-form').addEventListener('submit', (event) => {
    event.preventDefault();
    useToken($('token').value.trim());
  });
  $('new-session').addEventListener('click', newSession);
  $('composer').addEventListener('submit', send);
  if (token === '') return setStatus('enter a token');
  useToken(token);
  if (sessionId !== '') openSession(sessionId);
}

start();
