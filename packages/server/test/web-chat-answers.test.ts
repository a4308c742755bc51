import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { ChatEvent, ToolHandler } from '@youyou/agent';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { launchChromium } from './support/browser.js';
import { type ChatServer, openChat, send, startChatServer } from './support/web-chat.js';

// How the web chat shows an answer: Markdown rendered and sanitised, code highlighted with a Copy button,
// streamed chunks drawn one growing block at a time, usage one click away. Headless Chromium, a real server.

/** The in-page counter of the streaming test's DOM work; evaluated in the page, so it is plain JS. */
const STREAM_REDRAWS = fileURLToPath(new URL('./support/stream-redraws.js', import.meta.url));
/** What `redrawReport()` in stream-redraws.js answers. */
interface RedrawReport {
  redraws: number;
  mostRemovedInARedraw: number;
  removedRows: number;
  earlierRowsKept: boolean;
  markedBlocks: number;
  markedBlocksKept: number;
  answerBlocks: number;
}

/** A promise and the function that resolves it: a gate the test opens. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

let browser: Browser;
let server: ChatServer | undefined;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
  await server?.close();
  server = undefined;
});

const MARKDOWN_ANSWER = [
  '# Plan',
  '',
  'Here is **bold** text, a [safe link](https://example.com/docs) and a [bad link](javascript:alert(1)).',
  '',
  '| Tool | Purpose |',
  '| --- | --- |',
  '| shell | runs commands |',
  '| edit_file | changes files |',
  '',
  '```ts',
  'const answer: number = 42;',
  '```',
  '',
  'Raw <b>markup</b> and <img src=x onerror="window.__pwned=1"> stay text.',
].join('\n');

test('an answer is Markdown: headings, bold, a table, highlighted code with Copy, links that open safely', async () => {
  server = await startChatServer();
  // Sent in small pieces, as a model streams it: the page renders the whole once it has arrived.
  const pieces = MARKDOWN_ANSWER.match(/[\s\S]{1,7}/g) ?? [];
  server.provider.enqueue(pieces.map((text) => ({ type: 'text' as const, text })));
  const page = await openChat(browser, contexts, server);
  const requested: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  await send(page, 'Make a plan');
  const answer = page.locator('.assistant');
  await answer.locator('.code-block').waitFor();
  await expect(answer.locator('h1').textContent()).resolves.toBe('Plan');
  await expect(answer.locator('strong').textContent()).resolves.toBe('bold');
  // The table: a header row and two body rows, cell by cell.
  const rows = await answer
    .locator('table tr')
    .evaluateAll((found) => found.map((row) => [...row.children].map((cell) => cell.textContent)));
  expect(rows).toEqual([
    ['Tool', 'Purpose'],
    ['shell', 'runs commands'],
    ['edit_file', 'changes files'],
  ]);
  // A web link opens in a new tab with no handle on the page; a javascript: link is no link at all.
  const safe = answer.locator('a', { hasText: 'safe link' });
  await expect(safe.getAttribute('href')).resolves.toBe('https://example.com/docs');
  await expect(safe.getAttribute('rel')).resolves.toContain('noopener');
  await expect(safe.getAttribute('target')).resolves.toBe('_blank');
  await expect(answer.locator('a', { hasText: 'bad link' }).getAttribute('href')).resolves.toBeNull();
  expect(await page.locator('#transcript [href^="javascript"]').count()).toBe(0);
  // Raw HTML, streamed in pieces, is shown as the characters sent.
  await expect(answer.locator('p').last().textContent()).resolves.toBe(
    'Raw <b>markup</b> and <img src=x onerror="window.__pwned=1"> stay text.',
  );
  expect(await page.locator('#transcript b, #transcript img').count()).toBe(0);
  expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
  // The code: highlighted (the keyword is its own element), labelled with its language, copied whole.
  const block = answer.locator('.code-block');
  await expect(block.locator('.code-head span').textContent()).resolves.toBe('ts');
  await expect(block.locator('.hljs-keyword').first().textContent()).resolves.toBe('const');
  await expect(block.locator('code').textContent()).resolves.toBe('const answer: number = 42;');
  await block.getByRole('button', { name: 'Copy ts code' }).click();
  await block.getByRole('button', { name: 'Copy ts code' }).filter({ hasText: 'Copied' }).waitFor();
  await expect(page.evaluate('navigator.clipboard.readText()')).resolves.toBe('const answer: number = 42;');
  // Everything the page loaded or called is on its own server: no CDN, it works offline.
  expect(requested.length).toBeGreaterThan(0);
  for (const url of requested) expect(url.startsWith(`${server.url}/`)).toBe(true);
}, 60_000);

test('a 3,000-chunk answer is drawn chunk by chunk without redrawing what came before it, and earlier messages stay put', async () => {
  // The model sends the answer 100 chunks at a time: each hundred waits until the page shows the one before
  // it, so however fast or loaded the machine, the page draws the answer at 30 lengths at least, the last ones
  // 70 paragraphs long; the turn ends only once the test has read what the page did.
  const CHUNKS = 3_000;
  const PER_GATE = 100;
  const gates = Array.from({ length: CHUNKS / PER_GATE + 1 }, gate);
  let streaming = false;
  let sent = 0;
  const pace = async (event: ChatEvent): Promise<void> => {
    if (!streaming) return;
    if (event.type === 'text_delta') {
      if (sent % PER_GATE === 0) await gates[sent / PER_GATE]?.opened;
      sent += 1;
    } else if (event.type === 'done') await gates[CHUNKS / PER_GATE]?.opened;
  };
  server = await startChatServer({ pace });
  server.provider.enqueue([{ type: 'text', text: 'Ready.' }]);
  const page = await openChat(browser, contexts, server);
  await send(page, 'Warm up');
  await page.locator('.assistant', { hasText: 'Ready.' }).waitFor();
  await page.locator('#status', { hasText: 'turn complete' }).waitFor();
  // A paragraph every 40 chunks.
  const chunks = Array.from({ length: CHUNKS }, (_unused, index) => ({
    type: 'text' as const,
    text: index === CHUNKS - 1 ? ' THE-END' : `word${index} ${index % 40 === 39 ? '\n\n' : ''}`,
  }));
  server.provider.enqueue(chunks);
  streaming = true;
  await page.evaluate(await readFile(STREAM_REDRAWS, 'utf8'));
  await page.evaluate('watchRedraws()');
  await send(page, 'Write a long answer');
  const answer = page.locator('.assistant').nth(1);
  gates[0]?.open();
  for (let index = 1; index < CHUNKS / PER_GATE; index += 1) {
    // The page shows the last chunk sent before any more come (no word sent by then starts with this one).
    await answer.filter({ hasText: `word${index * PER_GATE - 1}` }).waitFor();
    await page.evaluate('markAnswerBlocks()');
    gates[index]?.open();
  }
  await answer.filter({ hasText: 'THE-END' }).waitFor();
  const report = (await page.evaluate('redrawReport()')) as RedrawReport;
  gates[CHUNKS / PER_GATE]?.open();
  console.info(`3,000 chunks in 30 gates: ${JSON.stringify(report)}`);
  // The rows drawn before the answer are the same elements, never taken off the page or redrawn.
  expect(report.earlierRowsKept).toBe(true);
  expect(report.removedRows).toBe(0);
  // Every paragraph the page had finished at a gate is still the same element at the end: only the growing
  // one is drawn again, so no redraw took more than that paragraph off the page, however long the answer.
  expect(report.answerBlocks).toBe(75);
  expect(report.markedBlocks).toBeGreaterThanOrEqual(70);
  expect(report.markedBlocksKept).toBe(report.markedBlocks);
  expect(report.mostRemovedInARedraw).toBeLessThanOrEqual(1);
  // The whole answer is there once, and the turn ends.
  await page.locator('#status', { hasText: 'turn complete' }).waitFor();
  const text = (await answer.textContent()) ?? '';
  expect(text.split('word1234 ').length - 1).toBe(1);
  expect(text.endsWith('THE-END')).toBe(true);
  await expect(page.locator('#transcript > li').first().textContent()).resolves.toBe('Warm up');
}, 60_000);

test('usage per answer is one collapsed line that opens onto the token counts and the cost', async () => {
  // $3 per million input tokens (cached reads too), $15 per million output tokens.
  server = await startChatServer({ pricing: { inputPerMillion: 3, outputPerMillion: 15 } });
  server.provider.enqueue([
    { type: 'text', text: 'Counted.' },
    { type: 'usage', usage: { inputTokens: 1_200, outputTokens: 34, cachedInputTokens: 1_000 } },
  ]);
  const page = await openChat(browser, contexts, server);
  await send(page, 'Count');
  const usage = page.locator('.usage details');
  await usage.waitFor();
  await expect(usage.locator('summary').textContent()).resolves.toBe('1,234 tokens · $0.0041');
  await expect(usage.getAttribute('open')).resolves.toBeNull();
  await expect(usage.locator('dl').isVisible()).resolves.toBe(false);
  await usage.locator('summary').click();
  const pairs = await usage
    .locator('dt')
    .evaluateAll((terms) => terms.map((term) => [term.textContent, term.nextElementSibling?.textContent]));
  expect(pairs).toEqual(
    expect.arrayContaining([
      ['Input', '1,200'],
      ['Output', '34'],
      ['Cached input', '1,000'],
      ['Cost', '$0.004110'],
    ]),
  );
}, 60_000);

test('while an answer streams, its finished blocks stay the same elements; only the growing one is redrawn', async () => {
  const released = gate();
  const wait: ToolHandler = {
    name: 'wait',
    description: 'waits until the test releases it',
    parametersSchema: { type: 'object', properties: {} },
    isMutating: false,
    execute: async () => {
      await released.opened;
      return { content: 'released', isError: false };
    },
  };
  // The rest of the second paragraph waits until the test has marked the first one while the second grows.
  const marked = gate();
  const pace = async (event: ChatEvent): Promise<void> => {
    if (event.type === 'text_delta' && event.text === ' paragraph grows.') await marked.opened;
  };
  server = await startChatServer({ tools: [wait], pace });
  server.provider.enqueue(
    [
      { type: 'text', text: 'First paragraph.\n\nSecond' },
      { type: 'text', text: ' paragraph grows.' },
      { type: 'tool_call', toolName: 'wait', arguments: {}, callId: 'call_wait' },
    ],
    [{ type: 'text', text: 'Done.' }],
  );
  const page = await openChat(browser, contexts, server);
  await send(page, 'Two paragraphs, please');
  const answer = page.locator('.assistant').first();
  await answer.locator('p', { hasText: 'Second' }).waitFor();
  await answer
    .locator('p', { hasText: 'First paragraph.' })
    .evaluate((first) => first.setAttribute('data-kept', ''));
  marked.open();
  await answer.locator('p', { hasText: 'Second paragraph grows.' }).waitFor();
  await page.locator('.tool[data-call-id="call_wait"]').waitFor();
  await expect(answer.locator('p[data-kept]').allTextContents()).resolves.toEqual(['First paragraph.']);
  await expect(answer.locator('p').allTextContents()).resolves.toEqual([
    'First paragraph.',
    'Second paragraph grows.',
  ]);
  released.open();
  await page.locator('.assistant', { hasText: 'Done.' }).waitFor();
}, 60_000);
