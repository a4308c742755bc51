// The list of chats in the sidebar: this tenant's sessions by title, the search box's matches while it has text.

import { failure, showError } from '/web-chat/failure.js';
import { element } from '/web-chat/views.js';

const $ = (id) => document.getElementById(id);

/** Marks the open chat in the list and shows its title above the transcript. */
export function markCurrent(sessionId) {
  let title = 'New chat';
  for (const link of document.querySelectorAll('#sessions a')) {
    if (link.dataset.sessionId === sessionId) {
      link.setAttribute('aria-current', 'page');
      title = link.textContent;
    } else link.removeAttribute('aria-current');
  }
  if (sessionId !== '') $('title').textContent = title === 'New chat' ? 'Chat' : title;
}

/**
 * Lists this tenant's sessions through `api`, the ones matching the search box when it holds text, and marks
 * the one open when the list arrives (`openSessionId`).
 */
export async function loadSessions({ api, openSessionId }) {
  const query = $('search').value.trim();
  const response = await api(query === '' ? '/sessions' : `/sessions?q=${encodeURIComponent(query)}`).catch(
    (error) => error,
  );
  if (!(response instanceof Response) || !response.ok) return showError(await failure(response));
  const { sessions } = await response.json();
  const rows = sessions.map((summary) => {
    const link = element('a', '', summary.title || 'Untitled chat');
    link.href = `#session=${encodeURIComponent(summary.sessionId)}`;
    link.dataset.sessionId = summary.sessionId;
    const row = element('li');
    row.append(link);
    return row;
  });
  $('sessions').replaceChildren(...rows);
  $('no-sessions').hidden = rows.length > 0;
  $('no-sessions').textContent = query === '' ? 'No chats yet.' : 'No chat matches.';
  markCurrent(openSessionId());
}
