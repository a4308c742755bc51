import type { ToolHandler } from '@youyou/agent';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { launchChromium } from './support/browser.js';
import { type ChatServer, openChat, screenshot, send, startChatServer } from './support/web-chat.js';

// The composer as a person uses it: Enter sends, Shift+Enter breaks the line, Stop cancels the turn, and a
// message the server refuses goes back in the box with a sentence saying why. Headless Chromium, real server.

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

test('Enter sends the message, Shift+Enter is a new line in it', async () => {
  server = await startChatServer();
  server.provider.enqueue([{ type: 'text', text: 'Two lines received.' }]);
  const page = await openChat(browser, contexts, server);
  await page.locator('#message').click();
  await page.keyboard.type('line one');
  await page.keyboard.press('Shift+Enter');
  await page.keyboard.type('line two');
  await expect(page.locator('.user').count()).resolves.toBe(0);
  await page.keyboard.press('Enter');
  await page.locator('.assistant', { hasText: 'Two lines received.' }).waitFor();
  await expect(page.locator('.user').textContent()).resolves.toBe('line one\nline two');
  await expect(page.locator('#message').inputValue()).resolves.toBe('');
  expect(JSON.stringify(server.provider.requests[0]?.messages)).toContain('line one\\nline two');
}, 60_000);

test('Stop cancels the running turn: the running tool is aborted and the page says it stopped', async () => {
  const aborted: string[] = [];
  let started: () => void = () => undefined;
  const toolStarted = new Promise<void>((resolve) => {
    started = resolve;
  });
  const waitForever: ToolHandler = {
    name: 'wait_forever',
    description: 'waits until cancelled',
    parametersSchema: { type: 'object', properties: {} },
    isMutating: false,
    execute: (input) =>
      new Promise((resolve) => {
        started();
        input.signal.addEventListener('abort', () => {
          aborted.push(input.callId);
          resolve({ content: 'aborted', isError: true });
        });
      }),
  };
  server = await startChatServer({ tools: [waitForever] });
  server.provider.enqueue([
    { type: 'tool_call', toolName: 'wait_forever', arguments: {}, callId: 'call_wait' },
  ]);
  const page = await openChat(browser, contexts, server);
  await send(page, 'Wait');
  await toolStarted;
  const stop = page.getByRole('button', { name: 'Stop' });
  await stop.click();
  await page.locator('.notice', { hasText: 'Stopped.' }).waitFor();
  expect(aborted).toEqual(['call_wait']);
  await expect(stop.isVisible()).resolves.toBe(false);
  // The chat goes on.
  server.provider.enqueue([{ type: 'text', text: 'Back again.' }]);
  await send(page, 'Hello again');
  await page.locator('.assistant', { hasText: 'Back again.' }).waitFor();
}, 60_000);

test('a refused message leaves the transcript (also after a reload) and goes back in the box, with a plain sentence', async () => {
  server = await startChatServer({ limits: { maxBodyBytes: 400 } });
  server.provider.enqueue([{ type: 'text', text: 'Short answer.' }]);
  const page = await openChat(browser, contexts, server);
  await send(page, 'A short question');
  await page.locator('.assistant', { hasText: 'Short answer.' }).waitFor();
  await page.locator('#status', { hasText: 'turn complete' }).waitFor();
  const tooLong = `Please read this: ${'a very long line '.repeat(40)}`;
  await send(page, tooLong);
  const error = page.locator('#error');
  await error.locator('.sentence').waitFor();
  // What the person typed is back in the box, and the refused message is not in the transcript.
  await expect(page.locator('#message').inputValue()).resolves.toBe(tooLong);
  await expect(page.locator('.user').allTextContents()).resolves.toEqual(['A short question']);
  // One human sentence; the code is there only under Details, closed.
  await expect(error.locator('.sentence').textContent()).resolves.toBe(
    'That message is too long for this server. Shorten it and send again.',
  );
  await expect(error.locator('details').getAttribute('open')).resolves.toBeNull();
  await expect(error.locator('details code').isVisible()).resolves.toBe(false);
  await expect(error.locator('details code').textContent()).resolves.toContain('PAYLOAD_TOO_LARGE');
  await screenshot(page, 'refused.png');
  await page.reload();
  await page.locator('.assistant', { hasText: 'Short answer.' }).waitFor();
  await expect(page.locator('.user').allTextContents()).resolves.toEqual(['A short question']);
  expect(server.provider.requests).toHaveLength(1);
}, 60_000);

test('an answer that fails part-way says so in a sentence; the error code is only under Details', async () => {
  server = await startChatServer();
  server.provider.enqueue([
    { type: 'text', text: 'Starting… ' },
    { type: 'error', error: new Error('upstream exploded') },
  ]);
  const page = await openChat(browser, contexts, server);
  await send(page, 'Try something');
  const notice = page.locator('.notice', { hasText: 'The answer failed part-way.' });
  await notice.waitFor();
  await expect(notice.locator('details').getAttribute('open')).resolves.toBeNull();
  await expect(notice.locator('details code').isVisible()).resolves.toBe(false);
  await expect(notice.locator('details code').textContent()).resolves.toMatch(/^[A-Z_]+: /);
  // The chat goes on after it.
  server.provider.enqueue([{ type: 'text', text: 'Better now.' }]);
  await send(page, 'Again');
  await page.locator('.assistant', { hasText: 'Better now.' }).waitFor();
}, 60_000);
