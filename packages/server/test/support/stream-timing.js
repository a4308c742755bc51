// Evaluated in the web chat's page by web-chat-answers.test.ts (no DOM types in the tests' TypeScript).
// `measureStreamDrawing(marker)`: clicks Send and answers `{ start, drawn }`, the wall-clock times (ms) of the
// click and of the moment the page's last answer first shows `marker`. The bytes' arrival is measured in
// the test process, off the page's thread, so a page that blocks its own thread cannot slow that clock too.
globalThis.measureStreamDrawing = (marker) =>
  new Promise((resolve) => {
    // The rows drawn before are marked: the test checks they are the same elements afterwards.
    for (const row of document.querySelectorAll('#transcript > li')) row.setAttribute('data-before', '');
    let start = 0;
    const observer = new MutationObserver(() => {
      const last = [...document.querySelectorAll('#transcript .assistant')].at(-1);
      if (last?.textContent?.includes(marker)) {
        observer.disconnect();
        resolve({ start, drawn: Date.now() });
      }
    });
    observer.observe(document.getElementById('transcript'), {
      childList: true,
      subtree: true,
      characterData: true,
    });
    start = Date.now();
    document.getElementById('send').click();
  });
