import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { ToolHandler } from '@youyou/agent';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { launchChromium } from './support/browser.js';
import { type ChatServer, openChat, send, sessionIdOf, startChatServer, TOKENS } from './support/web-chat.js';

// How the web chat shows an answer: Markdown rendered and sanitised, code highlighted with a Copy button,
// streamed chunks drawn as fast as they arrive, usage one click away. Headless Chromium, a real server.

/** The in-page stopwatch of the streaming test; evaluated in the page, so it is plain JS. */
const STREAM_TIMING = fileURLToPath(new URL('./support/stream-timing.js', import.meta.url));
type MeasureStreamDrawing = (marker: string) => Promise<{ start: number; drawn: number }>;

/** Reads a response until `marker` has arrived (it may straddle two reads); the wall-clock time it did. */
async function readUntilMarker(response: Response, marker: string): Promise<number> {
  const decoder = new TextDecoder();
  let tail = '';
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    const seen = tail + decoder.decode(chunk, { stream: true });
    // Leaving the loop cancels the stream.
    if (seen.includes(marker)) return Date.now();
    tail = seen.slice(-marker.length);
  }
  throw new Error(`the stream ended without ${marker}`);
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

test('a 3,000-chunk answer is drawn within 1.5× the time its bytes take to arrive, and earlier messages stay put', async () => {
  server = await startChatServer();
  server.provider.enqueue([{ type: 'text', text: 'Ready.' }]);
  const page = await openChat(browser, contexts, server);
  await send(page, 'Warm up');
  await page.locator('.assistant', { hasText: 'Ready.' }).waitFor();
  await page.locator('#status', { hasText: 'turn complete' }).waitFor();
  const chunks = Array.from({ length: 3_000 }, (_unused, index) => ({
    type: 'text' as const,
    text: index === 2_999 ? ' THE-END' : `word${index} ${index % 40 === 39 ? '\n\n' : ''}`,
  }));
  server.provider.enqueue(chunks);
  const sessionId = sessionIdOf(page);
  // The bytes' clock: a plain fetch reader of the same event stream in this process (not the page's thread),
  // connected before the click; both clocks are this machine's, read in the same run.
  const headers = { authorization: `Bearer ${TOKENS.alice}` };
  const info = (await (await fetch(`${server.url}/sessions/${sessionId}`, { headers })).json()) as {
    lastSequence: number;
  };
  const stream = await fetch(`${server.url}/sessions/${sessionId}/events`, {
    headers: { ...headers, 'last-event-id': String(info.lastSequence) },
  });
  const arrived = readUntilMarker(stream, 'THE-END');
  await page.fill('#message', 'Write a long answer');
  await page.evaluate(await readFile(STREAM_TIMING, 'utf8'));
  const shown = await page.evaluate(
    (marker) =>
      (globalThis as unknown as { measureStreamDrawing: MeasureStreamDrawing }).measureStreamDrawing(marker),
    'THE-END',
  );
  const timing = { bytes: (await arrived) - shown.start, page: shown.drawn - shown.start };
  const ratio = timing.page / timing.bytes;
  console.info(
    `3,000 chunks: bytes in ${timing.bytes.toFixed(0)} ms, drawn in ${timing.page.toFixed(0)} ms, ratio ${ratio.toFixed(2)}`,
  );
  expect(timing.bytes).toBeGreaterThan(0);
  expect(ratio).toBeLessThanOrEqual(1.5);
  // The whole answer is there once, and the rows drawn before it are the same elements, never redrawn.
  const text = (await page.locator('.assistant').last().textContent()) ?? '';
  expect(text.split('word1234 ').length - 1).toBe(1);
  expect(text.endsWith('THE-END')).toBe(true);
  expect(await page.locator('#transcript > li[data-before]').count()).toBe(2);
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
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const wait: ToolHandler = {
    name: 'wait',
    description: 'waits until the test releases it',
    parametersSchema: { type: 'object', properties: {} },
    isMutating: false,
    execute: async () => {
      await released;
      return { content: 'released', isError: false };
    },
  };
  server = await startChatServer({ tools: [wait] });
  server.provider.enqueue(
    [
      { type: 'text', text: 'First paragraph.\n\nSecond' },
      // Slow on purpose: the test marks the first paragraph while the second still grows.
      { type: 'delay', ms: 1_000 },
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
  await answer.locator('p', { hasText: 'Second paragraph grows.' }).waitFor();
  await page.locator('.tool[data-call-id="call_wait"]').waitFor();
  await expect(answer.locator('p[data-kept]').textContent()).resolves.toBe('First paragraph.');
  await expect(answer.locator('p').allTextContents()).resolves.toEqual([
    'First paragraph.',
    'Second paragraph grows.',
  ]);
  release();
  await page.locator('.assistant', { hasText: 'Done.' }).waitFor();
}, 60_000);
