import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolHandler } from '@youyou/agent';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { WEB_CHAT_FOLDER } from '../src/index.js';
import { launchChromium } from './support/browser.js';
import { deployTool } from './support/harness.js';
import {
  type ChatServer,
  openChat as openWebChat,
  screenshot,
  send,
  startChatServer,
  type TOKENS,
} from './support/web-chat.js';

// The web chat the package ships (packages/server/web-chat, served by `webChat: true`) in Debian's headless
// Chromium, against a real server on 127.0.0.1 over a real SQLite file; only the model's answers are scripted.

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

const openChat = (chat: ChatServer, as: keyof typeof TOKENS, sessionId?: string): Promise<Page> =>
  openWebChat(browser, contexts, chat, { as, ...(sessionId === undefined ? {} : { sessionId }) });

const transcript = async (page: Page): Promise<string> =>
  (await page.locator('#transcript').textContent()) ?? '';

const occurrences = (text: string, part: string): number => text.split(part).length - 1;

test('a turn streams into the page: reasoning, tool lines and the answer', async () => {
  const clock: ToolHandler = {
    name: 'clock',
    description: 'tells the time',
    parametersSchema: { type: 'object', properties: {} },
    isMutating: false,
    execute: async () => ({ content: '12:00', isError: false }),
  };
  server = await startChatServer({ tools: [clock] });
  server.provider.enqueue(
    [
      { type: 'reasoning', text: 'The user wants the time.' },
      { type: 'tool_call', toolName: 'clock', arguments: {}, callId: 'call_clock' },
    ],
    [
      { type: 'text', text: 'It is ' },
      { type: 'delay', ms: 100 },
      { type: 'text', text: 'noon.' },
    ],
  );
  const page = await openChat(server, 'alice');
  await send(page, 'What time is it?');
  await page.locator('.assistant', { hasText: 'It is noon.' }).waitFor();
  await expect(page.locator('.user').textContent()).resolves.toBe('What time is it?');
  // The reasoning is folded under "Thinking" until opened.
  await expect(page.locator('.reasoning').isVisible()).resolves.toBe(false);
  await page.getByText('Thinking').click();
  await expect(page.locator('.reasoning').textContent()).resolves.toBe('The user wants the time.');
  await expect(page.locator('.reasoning').isVisible()).resolves.toBe(true);
  // The tool call is one row; opening it shows the output.
  const tool = page.locator('.tool.done[data-call-id="call_clock"]');
  await expect(tool.locator('.tool-name').textContent()).resolves.toBe('clock');
  await tool.locator('summary').click();
  await expect(tool.locator('.tool-output').textContent()).resolves.toBe('12:00');
  // The new session is in the list, titled by its first message.
  await page.locator('#sessions a', { hasText: 'What time is it?' }).waitFor();
  await screenshot(page, 'turn.png');
}, 60_000);

test('an approval clicked in the page runs the tool', async () => {
  const folder = await mkdtemp(join(tmpdir(), 'youyou-web-chat-files-'));
  const writeNote: ToolHandler = {
    name: 'write_note',
    description: 'writes a note file',
    parametersSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    isMutating: true,
    needsApproval: true,
    execute: async (input) => {
      await writeFile(join(folder, 'note.txt'), String((input.arguments as { text: string }).text));
      return { content: 'written', isError: false };
    },
  };
  try {
    server = await startChatServer({ tools: [writeNote] });
    server.provider.enqueue(
      [{ type: 'tool_call', toolName: 'write_note', arguments: { text: 'approved note' }, callId: 'call_w' }],
      [{ type: 'text', text: 'The note is written.' }],
    );
    const page = await openChat(server, 'alice');
    await send(page, 'Write a note');
    const pending = page.locator('.pending[data-call-id="call_w"]');
    await pending.locator('button.approve').waitFor();
    await screenshot(page, 'approval.png');
    await expect(readFile(join(folder, 'note.txt'), 'utf8')).rejects.toThrow();
    await pending.locator('button.approve').click();
    await page.locator('.assistant', { hasText: 'The note is written.' }).waitFor();
    await expect(readFile(join(folder, 'note.txt'), 'utf8')).resolves.toBe('approved note');
    await expect(pending.textContent()).resolves.toContain('approved');
    await expect(page.locator('.tool.done').textContent()).resolves.toContain('write_note');
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}, 60_000);

test('a denial clicked in the page keeps the tool from running and the turn goes on', async () => {
  const ran: unknown[] = [];
  const deploy = deployTool(ran);
  server = await startChatServer({ tools: [deploy] });
  server.provider.enqueue(
    [{ type: 'tool_call', toolName: 'deploy', arguments: {}, callId: 'call_d' }],
    [{ type: 'text', text: 'Not deployed, as you wished.' }],
  );
  const page = await openChat(server, 'alice');
  await send(page, 'Deploy');
  const pending = page.locator('.pending[data-call-id="call_d"]');
  await pending.locator('button.deny').click();
  await page.locator('.assistant', { hasText: 'Not deployed, as you wished.' }).waitFor();
  await expect(pending.textContent()).resolves.toContain('denied');
  expect(await pending.locator('button').count()).toBe(0);
  expect(ran).toEqual([]);
  // The model was told the call was denied.
  const lastRequest = server.provider.requests.at(-1);
  expect(JSON.stringify(lastRequest?.messages)).toContain('denied in the web chat');
}, 60_000);

test('once the approval window passes, the page offers Continue instead of Approve, and the call is denied', async () => {
  const ran: unknown[] = [];
  const deploy = deployTool(ran);
  server = await startChatServer({ tools: [deploy], approvalWindowMs: 1_500 });
  server.provider.enqueue(
    [{ type: 'tool_call', toolName: 'deploy', arguments: {}, callId: 'call_w' }],
    [{ type: 'text', text: 'The deploy was not approved in time.' }],
  );
  const page = await openChat(server, 'alice');
  await send(page, 'Deploy');
  const pending = page.locator('.pending[data-call-id="call_w"]');
  await pending.locator('button.approve').waitFor();
  // The page redraws itself when the window passes: Approve/Deny give way to Continue.
  await pending.locator('button.continue').waitFor({ timeout: 20_000 });
  expect(await pending.locator('button.approve').count()).toBe(0);
  await pending.locator('button.continue').click();
  await page.locator('.assistant', { hasText: 'The deploy was not approved in time.' }).waitFor();
  expect(ran).toEqual([]);
  expect(JSON.stringify(server.provider.requests.at(-1)?.messages)).toContain('approval window');
}, 60_000);

test('a page reload mid-turn resumes the stream without loss or repeats', async () => {
  server = await startChatServer();
  server.provider.enqueue([
    { type: 'text', text: 'Part one. ' },
    { type: 'delay', ms: 1500 },
    { type: 'text', text: 'Part two. ' },
    { type: 'delay', ms: 300 },
    { type: 'text', text: 'The end.' },
  ]);
  const page = await openChat(server, 'alice');
  await send(page, 'Tell a story');
  await page.locator('.assistant', { hasText: 'Part one.' }).waitFor();
  await page.reload();
  await page.locator('.assistant', { hasText: 'The end.' }).waitFor();
  const text = await transcript(page);
  expect(occurrences(text, 'Tell a story')).toBe(1);
  expect(occurrences(text, 'Part one. ')).toBe(1);
  expect(occurrences(text, 'Part two. ')).toBe(1);
  expect(occurrences(text, 'The end.')).toBe(1);
  await expect(page.locator('.assistant').textContent()).resolves.toBe('Part one. Part two. The end.');
}, 60_000);

test('after a server restart the page resyncs: the history stays and the next turn shows once', async () => {
  server = await startChatServer();
  server.provider.enqueue([{ type: 'text', text: 'Answer before the restart.' }]);
  const page = await openChat(server, 'alice');
  await send(page, 'First question');
  await page.locator('.assistant', { hasText: 'Answer before the restart.' }).waitFor();
  const port = Number(new URL(server.url).port);
  const folder = server.folder;
  await server.close(true);
  server = await startChatServer({ restart: { folder, port } });
  // The page reconnects on its own with its old cursor; the new process has no such event and says resync.
  await page.locator('#status', { hasText: 'live' }).waitFor({ timeout: 20_000 });
  server.provider.enqueue([{ type: 'text', text: 'Answer after the restart.' }]);
  await send(page, 'Second question');
  await page.locator('.assistant', { hasText: 'Answer after the restart.' }).waitFor();
  const text = await transcript(page);
  expect(occurrences(text, 'First question')).toBe(1);
  expect(occurrences(text, 'Answer before the restart.')).toBe(1);
  expect(occurrences(text, 'Second question')).toBe(1);
  expect(occurrences(text, 'Answer after the restart.')).toBe(1);
}, 60_000);

test("a second tenant's token cannot open the first tenant's session", async () => {
  server = await startChatServer();
  server.provider.enqueue([{ type: 'text', text: 'alice secret answer' }]);
  const alice = await openChat(server, 'alice');
  await send(alice, 'alice secret question');
  await alice.locator('.assistant', { hasText: 'alice secret answer' }).waitFor();
  const sessionId = new URLSearchParams(new URL(alice.url()).hash.slice(1)).get('session');
  expect(sessionId).toMatch(/\S/);

  // The same tenant in a fresh browser finds the session in its list and reads it from the log.
  const aliceAgain = await openChat(server, 'alice');
  await aliceAgain.locator('#sessions a', { hasText: 'alice secret question' }).click();
  await aliceAgain.locator('.assistant', { hasText: 'alice secret answer' }).waitFor();

  const bob = await openChat(server, 'bob', sessionId ?? '');
  // A sentence for the person; the code only under Details.
  await bob.locator('#error .sentence', { hasText: 'does not exist' }).waitFor();
  await expect(bob.locator('#error details code').textContent()).resolves.toContain('SESSION_NOT_FOUND');
  expect(await transcript(bob)).toBe('');
  expect(await bob.locator('#sessions li').count()).toBe(0);
  expect(await bob.content()).not.toContain('alice secret');
}, 60_000);

test('hostile model text shows as text: no markup runs, ESC is made visible', async () => {
  server = await startChatServer();
  server.provider.enqueue([
    { type: 'reasoning', text: '<b>bold</b>\u001b]0;title\u0007' },
    { type: 'text', text: '<img src=x onerror="window.__pwned=1">\u001b[31mred' },
  ]);
  const page = await openChat(server, 'alice');
  await send(page, 'Say something nasty');
  const answer = page.locator('.assistant', { hasText: 'red' });
  await answer.waitFor();
  await expect(answer.textContent()).resolves.toBe('<img src=x onerror="window.__pwned=1">\u241b[31mred');
  await expect(page.locator('.reasoning').textContent()).resolves.toBe('<b>bold</b>\u241b]0;title\u2407');
  expect(await page.locator('#transcript img, #transcript b').count()).toBe(0);
  expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
}, 60_000);

test('the page is served without a token; other files only from its folder', async () => {
  server = await startChatServer();
  const index = await fetch(`${server.url}/`);
  expect(index.status).toBe(200);
  expect(index.headers.get('content-type')).toContain('text/html');
  expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
  const script = await fetch(`${server.url}/web-chat/chat.js`);
  expect(script.headers.get('content-type')).toContain('text/javascript');
  // The libraries come from the package's own dependencies at fixed names, under the same CSP.
  for (const name of ['marked.js', 'purify.js', 'highlight.js']) {
    const library = await fetch(`${server.url}/web-chat/vendor/${name}`);
    expect(library.status).toBe(200);
    expect(library.headers.get('content-type')).toContain('text/javascript');
    expect(library.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await library.text()).toMatch(/export\s*\{/);
  }
  for (const path of [
    '/web-chat/..%2Fpackage.json',
    '/web-chat/missing.js',
    '/web-chat/README.md',
    '/web-chat/vendor/toString',
    '/web-chat/vendor/..%2F..%2Fpackage.json',
    '/web-chat/vendor/react.js',
  ]) {
    const response = await fetch(`${server.url}${path}`);
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
  }
  // The API still needs a token.
  expect((await fetch(`${server.url}/sessions`)).status).toBe(401);
});

test("webChat: true serves the package's own copy; { folder } a copy of yours; without it / needs a token", async () => {
  server = await startChatServer();
  const shipped = await readFile(join(WEB_CHAT_FOLDER, 'chat.js'), 'utf8');
  expect(await (await fetch(`${server.url}/web-chat/chat.js`)).text()).toBe(shipped);
  await server.close();
  server = undefined;

  const custom = await mkdtemp(join(tmpdir(), 'youyou-web-chat-copy-'));
  try {
    await writeFile(join(custom, 'index.html'), '<!doctype html><title>my copy</title>');
    server = await startChatServer({ webChat: { folder: custom } });
    const index = await fetch(`${server.url}/`);
    expect(await index.text()).toBe('<!doctype html><title>my copy</title>');
    expect(index.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect((await fetch(`${server.url}/web-chat/chat.js`)).status).toBe(404);
    await server.close();
    server = undefined;

    server = await startChatServer({ webChat: false });
    expect((await fetch(`${server.url}/`)).status).toBe(401);
  } finally {
    await rm(custom, { recursive: true, force: true });
  }
});
