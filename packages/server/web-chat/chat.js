// The YouYou web chat: plain ES modules, no build step. The transcript is data (`page.items`); each item has
// one element, and an event redraws only the item it changes — a streamed chunk only the open answer.

import { apiFetch, readSse } from '/web-chat/api.js';
import { failure, showError } from '/web-chat/failure.js';
import { historyToItems } from '/web-chat/history.js';
import { setUpLayout } from '/web-chat/layout.js';
import { setUpQuestions } from '/web-chat/questions.js';
import { loadSessions as listSessions, markCurrent as markOpenChat } from '/web-chat/sessions.js';
import {
  drawItem,
  drawAll as drawItems,
  drawNow,
  drawSoon,
  removeItem,
  setCardActions,
} from '/web-chat/transcript.js';

const $ = (id) => document.getElementById(id);
const TOKEN_KEY = 'youyou.token';
const stateKey = (sessionId) => `youyou.chat.${sessionId}`;

/** The page's state: the token, the open session, its items and the last event sequence seen. */
const page = { token: '', sessionId: '', items: [], cursor: 0, tail: undefined, running: false };
let saveTimer = 0;

function setStatus(text) {
  $('status').textContent = text;
}

function setRunning(running) {
  page.running = running;
  $('stop').hidden = !running;
  $('transcript').setAttribute('aria-busy', String(running));
}

const api = (path, init) => apiFetch(page.token, path, init);
const loadSessions = () => listSessions({ api, openSessionId: () => page.sessionId });
const markCurrent = () => markOpenChat(page.sessionId);

const sessionPath = (suffix = '') => `/sessions/${encodeURIComponent(page.sessionId)}${suffix}`;

function saveNow() {
  clearTimeout(saveTimer);
  saveTimer = 0;
  if (page.sessionId === '') return;
  sessionStorage.setItem(
    stateKey(page.sessionId),
    JSON.stringify({ items: page.items, cursor: page.cursor }),
  );
}

// Items and cursor are saved together, a little later, so a burst of chunks is written once; a reload
// between two saves replays the events after the saved cursor.
function save() {
  if (saveTimer === 0) saveTimer = setTimeout(saveNow, 300);
}

/** Takes an item out of the transcript and off the page. */
function remove(item) {
  page.items = page.items.filter((each) => each !== item);
  removeItem(item);
  $('empty').hidden = page.items.length > 0;
  save();
}

const questions = setUpQuestions({
  page,
  api,
  sessionPath,
  push: (item) => push(item),
  remove,
  redraw: drawItem,
});

const actions = {
  decide: (item, approved, reason) => decide(item, approved, reason),
  continueTurn: () => continueTurn(),
  windowPassed: (item) => windowPassed(item),
  answerQuestion: (item, answer) => questions.answer(item, answer),
};

setCardActions(actions);

/**
 * Draws a turn's answers afresh once the turn has ended, so no block kept from the stream outlives a change
 * that only later text made to it (a link reference defined further down, for one).
 */
function finishAnswers(turnId) {
  for (const item of page.items) {
    if (item.kind !== 'assistant' || item.turnId !== turnId) continue;
    drawNow(item);
  }
}

const drawAll = () => drawItems(page.items);

function push(item) {
  page.items.push(item);
  $('empty').hidden = true;
  drawItem(item);
  return item;
}

/** Appends to the open answer (same kind and turn) and redraws only it; else opens a new one. */
function appendText(kind, turnId, text) {
  const last = page.items.at(-1);
  if (last?.kind === kind && last.turnId === turnId) {
    last.text += text;
    drawSoon(last);
  } else push({ kind, turnId, text });
}

/** How much of a running call's output a row keeps to show its last lines. */
const LIVE_KEPT_CHARS = 4096;

const findTool = (callId) => page.items.find((item) => item.kind === 'tool' && item.callId === callId);

/** Output of a running call: its end is kept (enough for the last lines its row shows) and drawn by frame. */
function liveOutput(payload) {
  const tool = findTool(payload.callId);
  if (tool === undefined || tool.state !== 'running') return;
  tool.live = `${tool.live ?? ''}${String(payload.text ?? '')}`.slice(-LIVE_KEPT_CHARS);
  drawSoon(tool);
}

function endTool(payload) {
  const tool = findTool(payload.callId);
  const state = payload.denied ? 'denied' : payload.success ? 'done' : 'failed';
  const output = String(payload.output?.content ?? '');
  const durationMs = typeof payload.durationMs === 'number' ? payload.durationMs : undefined;
  if (tool === undefined) {
    push({
      kind: 'tool',
      callId: String(payload.callId),
      toolName: String(payload.toolName),
      args: {},
      state,
      output,
      durationMs,
    });
  } else {
    Object.assign(tool, { state, output, durationMs });
    delete tool.live;
    drawItem(tool);
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
      setRunning(true);
      appendText('assistant', turnId, String(payload.text));
      break;
    case 'reasoning_delta':
      setRunning(true);
      appendText('reasoning', turnId, String(payload.text));
      break;
    case 'tool_call_start':
      setRunning(true);
      push({
        kind: 'tool',
        callId: String(payload.callId),
        toolName: String(payload.toolName),
        args: payload.arguments ?? {},
        state: 'running',
      });
      break;
    case 'tool_output_delta':
      liveOutput(payload);
      break;
    case 'tool_call_end':
      endTool(payload);
      break;
    case 'turn_suspended':
      finishAnswers(turnId);
      for (const call of payload.pendingCalls ?? []) addPending(call);
      setRunning(false);
      setStatus('waiting for approval');
      break;
    case 'turn_complete':
      finishAnswers(turnId);
      setRunning(false);
      if (Number(payload.usage?.modelCalls ?? 0) > 0) push({ kind: 'usage', turnId, usage: payload.usage });
      setStatus('turn complete');
      break;
    case 'turn_cancelled':
      finishAnswers(turnId);
      setRunning(false);
      push({ kind: 'notice', text: 'Stopped.' });
      setStatus('turn stopped');
      break;
    case 'server.elicitation_held':
      questions.add(payload);
      setStatus('a question waits for you');
      break;
    case 'server.elicitation_settled':
      questions.drop(payload.id);
      break;
    case 'error':
      finishAnswers(turnId);
      push({
        kind: 'notice',
        text: 'The answer failed part-way. Try again, or rephrase the message.',
        detail: `${payload.error?.code ?? 'ERROR'}: ${payload.error?.message ?? ''}`,
      });
      break;
  }
  save();
}

function addPending(call) {
  const callId = String(call.callId);
  if (page.items.some((item) => item.kind === 'pending' && item.callId === callId)) return;
  const item = push({
    kind: 'pending',
    callId,
    toolName: String(call.toolName),
    args: call.arguments ?? {},
    decided: '',
    expiresAt: typeof call.expiresAt === 'string' ? call.expiresAt : '',
  });
  // Redraw when the window passes, so the buttons change while the page is open.
  const left = Date.parse(call.expiresAt) - Date.now();
  if (left > 0) setTimeout(() => drawItem(item), Math.min(left + 50, 2_147_483_647));
}

/** Whether a pending call's approval window has passed (a call without one never passes). */
function windowPassed(item) {
  return item.expiresAt !== '' && item.expiresAt !== undefined && Date.parse(item.expiresAt) <= Date.now();
}

/** Continues a turn whose approval window passed; its events come on the tail. */
async function continueTurn() {
  const response = await api(sessionPath('/continue'), { method: 'POST' }).catch((error) => error);
  if (!(response instanceof Response) || !response.ok) return showError(await failure(response));
  await response.body?.cancel();
  for (const pending of page.items) {
    if (pending.kind === 'pending' && !pending.decided) {
      pending.decided = 'denied: the approval window passed';
      drawItem(pending);
    }
  }
  saveNow();
}

/** Sends an approval or a denial (with the person's reason when given); the turn's events come on the tail. */
async function decide(item, approved, reason) {
  const json = approved
    ? { approved: true }
    : { approved: false, reason: reason ?? 'denied in the web chat' };
  const response = await api(sessionPath(`/approvals/${encodeURIComponent(item.callId)}`), {
    method: 'POST',
    json,
  }).catch((error) => error);
  if (!(response instanceof Response) || !response.ok) return showError(await failure(response));
  await response.body?.cancel();
  item.decided = approved ? 'approved' : reason ? `denied: ${reason}` : 'denied';
  drawItem(item);
  saveNow();
  $('message').focus();
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
      if (response.status === 401 || response.status === 404) return showError(await failure(response));
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

/** Draws the committed history, for a session this tab has not followed before, and its held calls. */
function historyItems(messages, pending) {
  page.items = historyToItems(messages);
  drawAll();
  for (const call of pending) addPending(call);
}

/** Replaces the drawn transcript with the session's committed history (the cursor stays). */
async function reloadHistory() {
  const answer = await api(sessionPath('/messages'));
  if (!answer.ok) return showError(await failure(answer));
  const { messages, pendingApprovals } = await answer.json();
  historyItems(messages, pendingApprovals);
  saveNow();
  await questions.sync();
}

/** Shows an empty chat; the session is created by the first message. */
function newChat() {
  page.tail?.abort();
  Object.assign(page, { sessionId: '', items: [], cursor: 0, tail: undefined });
  setRunning(false);
  showError(undefined);
  drawAll();
  history.replaceState(null, '', '#');
  $('title').textContent = 'New chat';
  markCurrent();
  $('message').focus();
}

/** Opens a session: checks it is this tenant's, restores or loads its transcript, follows its events. */
async function openSession(sessionId) {
  newChat();
  page.sessionId = sessionId;
  history.replaceState(null, '', `#session=${encodeURIComponent(sessionId)}`);
  markCurrent();
  const info = await api(sessionPath()).catch((error) => error);
  if (!(info instanceof Response) || !info.ok) return showError(await failure(info));
  const { lastSequence, turnRunning } = await info.json();
  const saved = JSON.parse(sessionStorage.getItem(stateKey(sessionId)) ?? 'null');
  if (saved && saved.cursor <= lastSequence) {
    page.items = saved.items;
    page.cursor = saved.cursor;
    drawAll();
    await questions.sync();
  } else {
    await reloadHistory();
    page.cursor = lastSequence;
    saveNow();
  }
  setRunning(Boolean(turnRunning));
  const controller = new AbortController();
  page.tail = controller;
  follow(sessionId, controller.signal);
}

/** Puts `text` in the message box, which fits its height to it. */
function setComposerText(text) {
  $('message').value = text;
  $('message').dispatchEvent(new Event('input'));
}

/** Sends the composer's text; a message the server refuses leaves the transcript and goes back in the box. */
async function send(event) {
  event?.preventDefault();
  const input = $('message');
  const text = input.value;
  if (text.trim() === '') return;
  showError(undefined);
  setComposerText('');
  const item = push({ kind: 'user', text });
  const refused = async (response) => {
    page.items = page.items.filter((each) => each !== item);
    removeItem(item);
    $('empty').hidden = page.items.length > 0;
    saveNow();
    if (input.value === '') setComposerText(text);
    showError(await failure(response));
    input.focus();
  };
  if (page.sessionId === '') {
    const created = await api('/sessions', { method: 'POST', json: {} }).catch((error) => error);
    if (!(created instanceof Response) || !created.ok) return refused(created);
    const { sessionId } = await created.json();
    await openSession(sessionId);
    push(item);
  }
  setRunning(true);
  setStatus('turn running');
  const response = await api(sessionPath('/messages'), { method: 'POST', json: { content: text } }).catch(
    (error) => error,
  );
  if (!(response instanceof Response) || !response.ok) {
    setRunning(false);
    setStatus('');
    return refused(response);
  }
  saveNow();
  // The turn's events arrive on the session's tail; leaving this stream does not cancel the turn.
  await response.body?.cancel();
  loadSessions();
}

async function stop() {
  const response = await api(sessionPath('/cancel'), { method: 'POST', json: {} }).catch((error) => error);
  if (!(response instanceof Response) || !response.ok) return showError(await failure(response));
  $('message').focus();
}

function useToken(token) {
  page.token = token;
  localStorage.setItem(TOKEN_KEY, token);
  $('token-form').hidden = token !== '';
  loadSessions();
}

/** Opens the session the address names (a bookmark, a link from the list, Back/Forward). */
function openFromAddress() {
  const sessionId = new URLSearchParams(location.hash.slice(1)).get('session') ?? '';
  if (sessionId !== '' && sessionId !== page.sessionId) openSession(sessionId);
}

function start() {
  const hash = new URLSearchParams(location.hash.slice(1));
  const token = hash.get('token') ?? localStorage.getItem(TOKEN_KEY) ?? '';
  const sessionId = hash.get('session') ?? '';
  // The token leaves the address bar (and the history) once read.
  if (hash.has('token'))
    history.replaceState(null, '', sessionId ? `#session=${encodeURIComponent(sessionId)}` : '#');
  setUpLayout({ onNewChat: newChat, onSearch: loadSessions, onSend: () => send() });
  $('token-form').addEventListener('submit', (event) => {
    event.preventDefault();
    useToken($('token').value.trim());
  });
  $('change-token').addEventListener('click', () => {
    $('token-form').hidden = false;
    $('token').focus();
  });
  $('composer').addEventListener('submit', send);
  $('stop').addEventListener('click', stop);
  window.addEventListener('hashchange', openFromAddress);
  window.addEventListener('pagehide', saveNow);
  if (token === '') {
    $('token-form').hidden = false;
    return setStatus('enter a token');
  }
  useToken(token);
  if (sessionId !== '') openSession(sessionId);
}

start();
