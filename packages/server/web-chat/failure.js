// What went wrong, in one sentence a person can act on; the server's code and message only when expanded.

import { element } from '/web-chat/views.js';

const SENTENCES = {
  UNAUTHORIZED: 'That access token was not accepted. Enter a valid token.',
  SESSION_NOT_FOUND: 'This chat does not exist, or it belongs to someone else.',
  NOT_FOUND: 'This chat does not exist, or it belongs to someone else.',
  PAYLOAD_TOO_LARGE: 'That message is too long for this server. Shorten it and send again.',
  SERVER_BUSY: 'The server is busy right now. Try again in a moment.',
  SESSION_BUSY: 'An answer is still being written. Wait for it, or stop it first.',
  TURN_BUSY: 'An answer is still being written. Wait for it, or stop it first.',
  SESSION_CLOSED: 'This chat was closed. Open it again from the list.',
  INVALID_INPUT: 'The server could not take that message as it is.',
  ELICITATION_NOT_FOUND: 'That question no longer waits for an answer.',
};

const BY_STATUS = { 401: 'UNAUTHORIZED', 404: 'NOT_FOUND', 413: 'PAYLOAD_TOO_LARGE', 429: 'SERVER_BUSY' };

/**
 * `{ sentence, detail }` for a failed answer or a failed fetch (a thrown error: the server was not reached).
 */
export async function failure(responseOrError) {
  if (!(responseOrError instanceof Response)) {
    return {
      sentence: 'Could not reach the server. Check the connection and try again.',
      detail: String(responseOrError?.message ?? responseOrError ?? ''),
    };
  }
  let code = BY_STATUS[responseOrError.status] ?? '';
  let message = '';
  try {
    const body = await responseOrError.json();
    code = String(body.error.code);
    message = String(body.error.message);
  } catch {
    // Not our error body (a proxy's page): the status says enough.
  }
  const sentence = SENTENCES[code] ?? 'Something went wrong on the server. Try again.';
  return { sentence, detail: `${code || 'HTTP'} ${responseOrError.status}${message ? `: ${message}` : ''}` };
}

/** Shows a failure under the transcript (none: clears it). */
export function showError(failed) {
  const box = document.getElementById('error');
  if (failed === undefined) {
    box.replaceChildren();
    box.hidden = true;
    return;
  }
  const details = element('details');
  details.append(element('summary', '', 'Details'), element('code', '', failed.detail));
  box.replaceChildren(element('span', 'sentence', failed.sentence), details);
  box.hidden = false;
}
