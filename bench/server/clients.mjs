// The clients of the scale-out bench: an SSE reader, and one client per session that tails the session's
// log (GET /sessions/:id/log) while it sends its message, and moves to the other server when its own dies.

export const HEADERS = { authorization: 'Bearer bench-token', 'content-type': 'application/json' };

/** The SSE messages of a response body: `{ id, data }` with `data` parsed from JSON. */
export async function* sse(response) {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const id = /^id: ?(.*)$/m.exec(block)?.[1];
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
        .join('\n');
      if (data !== '') yield { id, data: JSON.parse(data) };
    }
  }
}

const TERMINAL = new Set(['turn_complete', 'turn_cancelled', 'turn_suspended']);
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether a logged payload is the scripted model's final answer (the end of a session's work). */
export function isFinalAnswer(payload) {
  return payload.type === 'assistant_message' && JSON.stringify(payload).includes('all steps done');
}

/**
 * One client: a tail on /log from the start and the turn's POST, both moving to `fallback` when the server
 * fails. `onLogged(payload)` sees every event the tail receives, `onReady()` is called once the tail streams
 * and a connection for the message is open, and the message is sent once `go` resolves. Resolves with the log positions the tail
 * received, in order, `headersMs` (the first POST's response headers: the turn has started) and
 * `firstEventMs` (its first SSE event), both from the send.
 */
export async function runClient({ server, fallback, sessionId, onLogged, onMoved, onReady, go }) {
  const received = [];
  let base = server.url;
  let finished = false;
  let firstEventMs;
  let headersMs;
  let streaming;
  const tailStreams = new Promise((resolve) => {
    streaming = resolve;
  });
  const tailing = (async () => {
    while (!finished) {
      const controller = new AbortController();
      const last = received.at(-1);
      const headers = { ...HEADERS, ...(last === undefined ? {} : { 'last-event-id': String(last) }) };
      try {
        const response = await fetch(`${base}/sessions/${sessionId}/log`, {
          headers,
          signal: controller.signal,
        });
        for await (const message of sse(response)) {
          if (received.length === 0) streaming();
          received.push(Number(message.id));
          onLogged(message.data.payload);
          if (isFinalAnswer(message.data.payload)) {
            finished = true;
            controller.abort();
          }
        }
      } catch {
        if (finished) break;
        base = fallback.url;
        await pause(100);
      }
    }
  })();
  // A browser showing the chat has its connection open already: a first request opens one, which the
  // message reuses (the server keeps it alive 5 s). The message is sent when every client's tail streams
  // and every connection is open (`go`), so that opening 2 × N connections at once does not count in the
  // turns' time to first event.
  const warm = await fetch(`${server.url}/sessions/${sessionId}`, { headers: HEADERS });
  await warm.arrayBuffer();
  await tailStreams;
  onReady();
  await go;
  let content = 'do the five steps';
  let target = server.url;
  for (let attempt = 0; !finished; attempt += 1) {
    const sentAt = performance.now();
    try {
      const response = await fetch(`${target}/sessions/${sessionId}/messages`, {
        method: 'POST',
        headers: HEADERS,
        body: JSON.stringify({ content }),
      });
      if (response.status === 409) {
        // The dead server's lease on the session has not expired yet.
        await response.body?.cancel();
        await pause(250);
        continue;
      }
      if (!response.ok) throw new Error(`POST answered ${response.status}: ${await response.text()}`);
      if (attempt === 0) headersMs = performance.now() - sentAt;
      for await (const message of sse(response)) {
        if (firstEventMs === undefined && attempt === 0) firstEventMs = performance.now() - sentAt;
        if (TERMINAL.has(message.data.payload.type)) break;
      }
      break;
    } catch (error) {
      // Only the first server dies in this bench: a failure on the fallback is a finding.
      if (target === fallback.url) throw error;
      target = fallback.url;
      content = 'go on';
      onMoved();
    }
  }
  await tailing;
  return { received, firstEventMs, headersMs };
}

/**
 * One turn on a quiet server, timed: POST to the turn's terminal event. Resolves with the wall time, the time
 * to the first event and the number of events the response streamed.
 */
export async function timedTurn(url, sessionId) {
  const sentAt = performance.now();
  const response = await fetch(`${url}/sessions/${sessionId}/messages`, {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({ content: 'do the five steps' }),
  });
  let firstEventMs;
  let streamed = 0;
  for await (const message of sse(response)) {
    firstEventMs ??= performance.now() - sentAt;
    streamed += 1;
    if (TERMINAL.has(message.data.payload.type)) break;
  }
  return { wallMs: performance.now() - sentAt, firstEventMs, streamed };
}
