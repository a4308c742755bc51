// Starts the React chat: reads where the YouYou server is and the token from the address, opens (or creates)
// the session whose id is the chat id, and renders App. The token is kept in sessionStorage, not the address.
import { createRoot } from 'react-dom/client';
import { App, hasSavedMessages, visible } from './App.jsx';
import { loadHistory } from './history.js';
import './style.css';

const TOKEN_KEY = 'youyou.react-chat.token';
const API_KEY = 'youyou.react-chat.api';
/** Where `npm run dev -w @youyou/example-react-chat` starts the server. */
const DEFAULT_API = 'http://127.0.0.1:8787';

/** `#api=…&token=…&session=…`: api and token go to sessionStorage, the session id stays in the address. */
function readSettings() {
  const hash = new URLSearchParams(window.location.hash.slice(1));
  const token = hash.get('token');
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  const api = hash.get('api');
  if (api) sessionStorage.setItem(API_KEY, api);
  return {
    token: sessionStorage.getItem(TOKEN_KEY) ?? '',
    api: (sessionStorage.getItem(API_KEY) ?? DEFAULT_API).replace(/\/+$/, ''),
    sessionId: hash.get('session') ?? '',
  };
}

/** Shows the session in the address (so a reload reopens it) without the token. */
function rememberSession(sessionId) {
  window.history.replaceState(null, '', `#session=${encodeURIComponent(sessionId)}`);
}

/** A new session on the server: the chat id `useChat` is given. */
async function createSession({ api, token }) {
  const response = await fetch(`${api}/sessions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: '{}',
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok || typeof body.sessionId !== 'string') {
    const error = body.error ?? {};
    throw new Error(
      `[${error.code ?? response.status}] ${error.message ?? 'the session could not be created'}`,
    );
  }
  return body.sessionId;
}

const root = createRoot(document.getElementById('root'));
const settings = readSettings();

/**
 * Renders the chat of `sessionId` (with `history`, the stored messages, when this tab kept none of its own);
 * "New chat" creates another session and renders that one.
 */
function show(sessionId, history = []) {
  rememberSession(sessionId);
  root.render(
    <App
      key={sessionId}
      api={settings.api}
      token={settings.token}
      sessionId={sessionId}
      history={history}
      onNewChat={() => start('')}
    />,
  );
}

async function start(sessionId) {
  try {
    if (sessionId === '') show(await createSession(settings));
    else if (hasSavedMessages(sessionId)) show(sessionId);
    // Opened in a new tab, from a bookmark: the conversation comes from the server's stored history.
    else show(sessionId, await loadHistory({ ...settings, sessionId }));
  } catch (error) {
    root.render(
      <p id="error" role="alert">
        {visible(error instanceof Error ? error.message : String(error))}
      </p>,
    );
  }
}

if (settings.token === '') {
  root.render(
    <p id="error" role="alert">
      {`Open this page with #token=<your token> (and &api=<server URL> when it is not ${DEFAULT_API}).`}
    </p>,
  );
} else {
  void start(settings.sessionId);
}
