import type { ToolHandler } from '@youyou/agent';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { launchChromium } from './support/browser.js';
import { type ChatServer, openChat, send, sessionIdOf, startChatServer } from './support/web-chat.js';

// The list of chats: titled, searchable, a new chat on demand, and the open chat in the address so that a
// bookmark or a second tab shows its whole history. Headless Chromium against a real server and SQLite file.

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

const weather: ToolHandler = {
  name: 'weather',
  description: 'tells the weather',
  parametersSchema: { type: 'object', properties: { city: { type: 'string' } } },
  isMutating: false,
  execute: async () => ({ content: 'sunny, 21 °C', isError: false }),
};

test('chats are listed by title, found by search, started anew with New chat', async () => {
  server = await startChatServer();
  server.provider.enqueue(
    [{ type: 'text', text: 'Paris is the capital.' }],
    [{ type: 'text', text: 'Bake it.' }],
  );
  const page = await openChat(browser, contexts, server);
  await send(page, 'What is the capital of France?');
  await page.locator('.assistant', { hasText: 'Paris is the capital.' }).waitFor();
  const firstSession = sessionIdOf(page);
  // The title follows the answer: waited for as a state, not read at once.
  await expect.poll(() => page.locator('#title').textContent()).toBe('What is the capital of France?');

  await page.getByRole('button', { name: '+ New chat' }).click();
  await expect(page.locator('#transcript > li').count()).resolves.toBe(0);
  expect(sessionIdOf(page)).toBe('');
  await send(page, 'How do I make bread?');
  await page.locator('.assistant', { hasText: 'Bake it.' }).waitFor();
  expect(sessionIdOf(page)).not.toBe(firstSession);
  const links = page.locator('#sessions a');
  await links.filter({ hasText: 'How do I make bread?' }).waitFor();
  await expect(links.allTextContents()).resolves.toEqual(
    expect.arrayContaining(['What is the capital of France?', 'How do I make bread?']),
  );
  await expect(links.filter({ hasText: 'How do I make bread?' }).getAttribute('aria-current')).resolves.toBe(
    'page',
  );

  await page.getByRole('searchbox', { name: 'Search chats' }).fill('France');
  await expect.poll(() => links.count()).toBe(1);
  await expect(links.allTextContents()).resolves.toEqual(['What is the capital of France?']);
  await page.getByRole('searchbox', { name: 'Search chats' }).fill('no such words');
  await page.locator('#no-sessions', { hasText: 'No chat matches.' }).waitFor();

  // Back to the first chat from the list: its history, and its id in the address.
  await page.getByRole('searchbox', { name: 'Search chats' }).fill('');
  await links.filter({ hasText: 'What is the capital of France?' }).click();
  await page.locator('.assistant', { hasText: 'Paris is the capital.' }).waitFor();
  expect(sessionIdOf(page)).toBe(firstSession);
  await expect(page.locator('.assistant', { hasText: 'Bake it.' }).count()).resolves.toBe(0);
}, 60_000);

test('the open chat is in the address: a second tab (or a bookmark) opens it with its whole history', async () => {
  server = await startChatServer({ tools: [weather] });
  server.provider.enqueue(
    [{ type: 'tool_call', toolName: 'weather', arguments: { city: 'Lyon' }, callId: 'call_weather' }],
    [{ type: 'text', text: 'It is **sunny** in Lyon.' }],
  );
  const page = await openChat(browser, contexts, server);
  await send(page, 'Weather in Lyon?');
  await page.locator('.assistant strong', { hasText: 'sunny' }).waitFor();
  const address = page.url();
  expect(sessionIdOf(page)).toMatch(/\S/);
  expect(address).not.toContain('token');

  // A new tab of the same browser, opened on the address alone (the token is remembered by the browser).
  const second = await page.context().newPage();
  await second.goto(address);
  await second.locator('.assistant strong', { hasText: 'sunny' }).waitFor();
  await expect(second.locator('.user').allTextContents()).resolves.toEqual(['Weather in Lyon?']);
  const tool = second.locator('.tool[data-call-id="call_weather"]');
  await expect(tool.locator('.tool-name').textContent()).resolves.toBe('weather');
  await expect(tool.locator('.tool-args').textContent()).resolves.toBe('Lyon');
  await expect(tool.locator('.tool-status').textContent()).resolves.toBe('done');
  await expect(second.locator('#title').textContent()).resolves.toBe('Weather in Lyon?');
}, 60_000);
