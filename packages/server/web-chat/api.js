// The page's wire: fetch on the sessions API with the bearer token, and a reader of server-sent events.

/** fetch on the API with `token`; `init.json` is sent as the JSON body. */
export function apiFetch(token, path, init = {}) {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${token}`);
  if (init.json !== undefined) headers.set('content-type', 'application/json');
  const body = init.json === undefined ? init.body : JSON.stringify(init.json);
  return fetch(path, { ...init, headers, body });
}

/** Reads server-sent events from a fetch response and hands each `{ id, data }` to `onMessage`, in turn. */
export async function readSse(response, onMessage) {
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
