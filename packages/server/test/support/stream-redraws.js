// Evaluated in the web chat's page by web-chat-answers.test.ts (no DOM types in the tests' TypeScript).
// It counts the DOM work the page does while an answer streams, in elements, never in milliseconds:
// `watchRedraws()` keeps the rows already drawn and starts a MutationObserver on the transcript. A redraw is one
// task, and an observer hears a task's mutations together after it, so each callback is one redraw.
// `markAnswerBlocks()` keeps the streaming answer's finished blocks (all but the last, still growing one);
// `redrawReport()` stops watching and answers what changed.
globalThis.watchRedraws = () => {
  const transcript = document.getElementById('transcript');
  const earlierRows = [...transcript.children];
  const markedBlocks = new Set();
  let redraws = 0;
  let mostRemovedInARedraw = 0;
  let removedRows = 0;
  const elementsIn = (node) => (node instanceof Element ? 1 + node.querySelectorAll('*').length : 0);
  const observer = new MutationObserver((records) => {
    redraws += 1;
    let removed = 0;
    for (const record of records) {
      for (const node of record.removedNodes) {
        removed += elementsIn(node);
        if (record.target === transcript) removedRows += 1;
      }
    }
    mostRemovedInARedraw = Math.max(mostRemovedInARedraw, removed);
  });
  observer.observe(transcript, { childList: true, subtree: true });
  globalThis.markAnswerBlocks = () => {
    const answer = [...transcript.querySelectorAll('.assistant')].at(-1);
    const blocks = [...(answer?.querySelectorAll('p') ?? [])];
    for (const block of blocks.slice(0, -1)) markedBlocks.add(block);
  };
  globalThis.redrawReport = () => {
    observer.disconnect();
    const answer = [...transcript.querySelectorAll('.assistant')].at(-1);
    return {
      redraws,
      mostRemovedInARedraw,
      removedRows,
      earlierRowsKept: earlierRows.every((row, index) => transcript.children[index] === row),
      markedBlocks: markedBlocks.size,
      markedBlocksKept: [...markedBlocks].filter((block) => block.isConnected && answer?.contains(block))
        .length,
      answerBlocks: answer?.querySelectorAll('p').length ?? 0,
    };
  };
};
