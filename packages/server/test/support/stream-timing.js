// Evaluated in the web chat's page by web-chat-answers.test.ts (no DOM types in the tests' TypeScript).
// `measureStreamTiming(sessionId, marker)`: clicks Send and answers, in ms from the click, when a plain fetch
// reader of the session's event stream received `marker` (the bytes' arrival) and when the page showed it.
globalThis.measureStreamTiming = async (sessionId, marker) => {
  for (const row of document.querySelectorAll('#transcript > li')) row.setAttribute('data-before', '');
  const headers = { authorization: `Bearer ${localStorage.getItem('youyou.token')}` };
  const info = await (await fetch(`/sessions/${sessionId}`, { headers })).json();
  const stream = await fetch(`/sessions/${sessionId}/events`, {
    headers: { ...headers, 'last-event-id': String(info.lastSequence) },
  });
  const reader = stream.body.pipeThrough(new TextDecoderStream()).getReader();
  let drawn = 0;
  const shown = new Promise((resolve) => {
    const observer = new MutationObserver(() => {
      const last = [...document.querySelectorAll('#transcript .assistant')].at(-1);
      if (last?.textContent?.includes(marker)) {
        drawn = performance.now();
        observer.disconnect();
        resolve();
      }
    });
    observer.observe(document.getElementById('transcript'), {
      childList: true,
      subtree: true,
      characterData: true,
    });
  });
  const start = performance.now();
  document.getElementById('send').click();
  let tail = '';
  let arrived = 0;
  for (;;) {
    const next = await reader.read();
    if (next.done) break;
    // The marker may straddle two reads: the end of the last one is kept.
    const seen = tail + next.value;
    if (seen.includes(marker)) {
      arrived = performance.now();
      break;
    }
    tail = seen.slice(-marker.length);
  }
  await reader.cancel();
  await shown;
  return { bytes: arrived - start, page: drawn - start };
};
