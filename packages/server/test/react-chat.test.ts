import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolHandler } from '@youyou/agent';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { deployTool } from './support/harness.js';
import {
  type AppBundle,
  ARTIFACTS,
  bundleReactChat,
  type ReactChatServer,
  startReactChatServer,
  TOKENS,
} from './support/react-chat.js';

// examples/react-chat (useChat from @ai-sdk/react over DefaultChatTransport, unchanged) bundled with vite,
// served from its own origin on 127.0.0.1 and run in Debian's headless Chromium against a real server on
// another port (so every call is a CORS call) over a real SQLite file; only the model's answers are scripted.

let browser: Browser;
let bundle: AppBundle;
let server: ReactChatServer | undefined;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  bundle = await bundleReactChat();
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await bundle?.close();
});

afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
  await server?.close();
  server = undefined;
});

/** The app in a fresh browser context, pointed at `chat`'s server with alice's token; waits for its session. */
async function openApp(chat: ReactChatServer): Promise<{ page: Page; sessionId: string }> {
  const context = await browser.newContext({ viewport: { width: 900, height: 600 } });
  contexts.push(context);
  const page = await context.newPage();
  const hash = new URLSearchParams({ api: chat.url, token: TOKENS.alice });
  // useChat's resume on load asks for a running turn first; nothing runs in a new session.
  const resumed = page.waitForResponse((response) => /\/ui\/chat\/[^/]+\/stream$/.test(response.url()));
  await page.goto(`${bundle.url}/#${hash}`);
  expect((await resumed).status()).toBe(204);
  await page.waitForFunction("window.location.hash.startsWith('#session=')");
  const sessionId = decodeURIComponent(new URL(page.url()).hash.slice('#session='.length));
  // The token left the address once the page kept it.
  expect(page.url()).not.toContain(TOKENS.alice);
  await page.locator('.chat[data-status="ready"]').waitFor();
  return { page, sessionId };
}

async function send(page: Page, text: string): Promise<void> {
  await page.fill('#message', text);
  await page.click('#send');
}

const assistantText = (page: Page) => page.locator('.message.assistant .text');

test('a message sent from the React app streams back: reasoning, a tool line and the answer in steps', async () => {
  const clock: ToolHandler = {
    name: 'clock',
    description: 'tells the time',
    parametersSchema: { type: 'object', properties: {} },
    isMutating: false,
    execute: async () => ({ content: '12:00', isError: false }),
  };
  server = await startReactChatServer({ origin: bundle.url, tools: [clock] });
  server.provider.enqueue(
    [
      { type: 'reasoning', text: 'The user wants the time.' },
      { type: 'tool_call', toolName: 'clock', arguments: {}, callId: 'call_clock' },
    ],
    [
      { type: 'text', text: 'It is ' },
      { type: 'delay', ms: 1500 },
      { type: 'text', text: 'noon.' },
    ],
  );
  const { page, sessionId } = await openApp(server);
  await send(page, 'What time is it?');
  // The first delta is on screen while the model still waits: the answer streams, it is not drawn at the end.
  await page.waitForFunction(
    "document.querySelector('.message.assistant .text')?.textContent === 'It is '",
    undefined,
    { polling: 'raf', timeout: 20_000 },
  );
  await page.locator('.message.assistant .text', { hasText: 'It is noon.' }).waitFor();
  await page.locator('.chat[data-status="ready"]').waitFor();
  await expect(page.locator('.message.user').textContent()).resolves.toBe('What time is it?');
  await expect(page.locator('.reasoning').textContent()).resolves.toBe('The user wants the time.');
  const tool = page.locator('.tool[data-call-id="call_clock"]');
  await expect(tool.getAttribute('data-state')).resolves.toBe('output-available');
  await expect(tool.locator('code').textContent()).resolves.toBe('clock({}) → 12:00');
  await expect(assistantText(page).textContent()).resolves.toBe('It is noon.');
  expect(await page.locator('#error').count()).toBe(0);
  await page.screenshot({ path: join(ARTIFACTS, 'turn.png') });

  // "New chat" opens another session (a new chat id) with an empty transcript.
  await page.getByRole('button', { name: 'New chat' }).click();
  await page.waitForFunction(`window.location.hash !== '#session=${sessionId}'`);
  await page.locator('.chat[data-status="ready"]').waitFor();
  expect(await page.locator('#transcript li').count()).toBe(0);
  const sessions = await fetch(`${server.url}/sessions`, {
    headers: { authorization: `Bearer ${TOKENS.alice}` },
  });
  expect(((await sessions.json()) as { sessions: unknown[] }).sessions).toHaveLength(2);
}, 60_000);

test('a session opened in a new tab shows its stored history: the question, the tool call and the answer', async () => {
  const clock: ToolHandler = {
    name: 'clock',
    description: 'tells the time',
    parametersSchema: { type: 'object', properties: {} },
    isMutating: false,
    execute: async () => ({ content: '12:00', isError: false }),
  };
  server = await startReactChatServer({ origin: bundle.url, tools: [clock] });
  server.provider.enqueue(
    [{ type: 'tool_call', toolName: 'clock', arguments: {}, callId: 'call_clock' }],
    [{ type: 'text', text: 'It is noon.' }],
  );
  const { page, sessionId } = await openApp(server);
  await send(page, 'What time is it?');
  await page.locator('.message.assistant .text', { hasText: 'It is noon.' }).waitFor();
  await page.locator('.chat[data-status="ready"]').waitFor();

  // Another browser context: nothing kept in its storage, only the address with the session.
  const context = await browser.newContext({ viewport: { width: 900, height: 600 } });
  contexts.push(context);
  const other = await context.newPage();
  const hash = new URLSearchParams({ api: server.url, token: TOKENS.alice, session: sessionId });
  await other.goto(`${bundle.url}/#${hash}`);
  await other.locator('.message.assistant .text', { hasText: 'It is noon.' }).waitFor();
  await expect(other.locator('.message.user').allTextContents()).resolves.toEqual(['What time is it?']);
  const tool = other.locator('.tool[data-call-id="call_clock"]');
  await expect(tool.getAttribute('data-state')).resolves.toBe('output-available');
  await expect(tool.locator('code').textContent()).resolves.toBe('clock({}) → 12:00');
  expect(decodeURIComponent(new URL(other.url()).hash)).toBe(`#session=${sessionId}`);
}, 60_000);

test('Approve on a held call runs the tool only after the click, and the answer follows', async () => {
  const folder = await mkdtemp(join(tmpdir(), 'youyou-react-chat-files-'));
  const notePath = join(folder, 'note.txt');
  const writeNote: ToolHandler = {
    name: 'write_note',
    description: 'writes a note file',
    parametersSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    isMutating: true,
    needsApproval: true,
    execute: async (input) => {
      await writeFile(notePath, String((input.arguments as { text: string }).text));
      return { content: 'written', isError: false };
    },
  };
  try {
    server = await startReactChatServer({ origin: bundle.url, tools: [writeNote] });
    server.provider.enqueue(
      [{ type: 'tool_call', toolName: 'write_note', arguments: { text: 'approved note' }, callId: 'call_w' }],
      [{ type: 'text', text: 'The note is written.' }],
    );
    const { page } = await openApp(server);
    await send(page, 'Write a note');
    const held = page.locator('.tool[data-call-id="call_w"]');
    await held.locator('button.approve').waitFor();
    await expect(held.getAttribute('data-state')).resolves.toBe('approval-requested');
    await page.locator('.chat[data-status="ready"]').waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'approval.png') });
    await expect(readFile(notePath, 'utf8')).rejects.toThrow();

    await held.locator('button.approve').click();
    await page.locator('.message.assistant .text', { hasText: 'The note is written.' }).waitFor();
    await expect(readFile(notePath, 'utf8')).resolves.toBe('approved note');
    await expect(held.getAttribute('data-state')).resolves.toBe('output-available');
    expect(await held.locator('button').count()).toBe(0);
    // The continuation went on in the held call's assistant message: one question, one answer.
    expect(await page.locator('.message.user').count()).toBe(1);
    expect(await page.locator('.message.assistant').count()).toBe(1);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}, 60_000);

test('Deny keeps the tool from running and the model hears the reason typed in the app', async () => {
  const ran: unknown[] = [];
  const deploy = deployTool(ran);
  server = await startReactChatServer({ origin: bundle.url, tools: [deploy] });
  server.provider.enqueue(
    [{ type: 'tool_call', toolName: 'deploy', arguments: {}, callId: 'call_d' }],
    [{ type: 'text', text: 'Not deployed, as you wished.' }],
  );
  const { page } = await openApp(server);
  await send(page, 'Deploy');
  const held = page.locator('.tool[data-call-id="call_d"]');
  await held.locator('input.reason').fill('not on a Friday');
  await held.locator('button.deny').click();
  await page.locator('.message.assistant .text', { hasText: 'Not deployed, as you wished.' }).waitFor();
  expect(ran).toEqual([]);
  expect(await held.locator('button').count()).toBe(0);
  await expect(held.getAttribute('data-state')).resolves.toBe('output-denied');
  // The request that continued the turn carried the denial and its reason to the model.
  expect(server.provider.requests).toHaveLength(2);
  expect(JSON.stringify(server.provider.requests.at(-1)?.messages)).toContain('not on a Friday');
}, 60_000);

test('Stop cancels the running turn on the server: the log keeps the answer as interrupted', async () => {
  server = await startReactChatServer({ origin: bundle.url });
  server.provider.enqueue(
    [
      { type: 'text', text: 'Working on it. ' },
      { type: 'delay', ms: 60_000 },
      { type: 'text', text: 'never said' },
    ],
    [{ type: 'text', text: 'Back again.' }],
  );
  const { page, sessionId } = await openApp(server);
  await send(page, 'Do something long');
  await page.locator('.message.assistant .text', { hasText: 'Working on it.' }).waitFor();
  await page.click('#stop');
  await page.locator('.chat[data-status="ready"]').waitFor();

  const storage = server.storage.sessions;
  await expect
    .poll(
      async () => {
        const events = (await storage.loadSession(sessionId)) ?? [];
        return events.map((event) => event.payload).filter((payload) => payload.type === 'assistant_message');
      },
      { timeout: 20_000 },
    )
    .toEqual([
      {
        type: 'assistant_message',
        content: [{ type: 'text', text: 'Working on it. ' }],
        status: 'incomplete',
      },
    ]);
  const state = await fetch(`${server.url}/sessions/${sessionId}`, {
    headers: { authorization: `Bearer ${TOKENS.alice}` },
  });
  expect(((await state.json()) as { turnRunning: boolean }).turnRunning).toBe(false);
  expect(await page.locator('#error').count()).toBe(0);

  // The session goes on: the next message gets the next answer.
  await send(page, 'Try again');
  await page.locator('.message.assistant .text', { hasText: 'Back again.' }).waitFor();
  expect(await page.content()).not.toContain('never said');
}, 60_000);

test('a reload mid-turn resumes the stream (GET /ui/chat/:id/stream) and shows the rest once', async () => {
  server = await startReactChatServer({ origin: bundle.url });
  server.provider.enqueue([
    { type: 'text', text: 'Part one. ' },
    { type: 'delay', ms: 3000 },
    { type: 'text', text: 'Part two. ' },
    { type: 'delay', ms: 300 },
    { type: 'text', text: 'The end.' },
  ]);
  const { page, sessionId } = await openApp(server);
  await send(page, 'Tell a story');
  await page.locator('.message.assistant .text', { hasText: 'Part one.' }).waitFor();
  const reconnect = page.waitForResponse((response) =>
    response.url().endsWith(`/ui/chat/${sessionId}/stream`),
  );
  await page.reload();
  // The reconnect found the turn still running (204 would mean nothing to resume).
  expect((await reconnect).status()).toBe(200);
  await page.locator('.message.assistant .text', { hasText: 'The end.' }).waitFor();
  await page.locator('.chat[data-status="ready"]').waitFor();
  await expect(page.locator('.message.user').allTextContents()).resolves.toEqual(['Tell a story']);
  await expect(assistantText(page).allTextContents()).resolves.toEqual(['Part one. Part two. The end.']);
  await page.screenshot({ path: join(ARTIFACTS, 'resumed.png') });
}, 60_000);

test('a reload while an approved turn goes on shows the whole turn once, what came before the call too', async () => {
  const deploy = deployTool();
  server = await startReactChatServer({ origin: bundle.url, tools: [deploy] });
  server.provider.enqueue(
    [
      { type: 'reasoning', text: 'A deploy needs a yes.' },
      { type: 'text', text: 'Shipping it.' },
      { type: 'tool_call', toolName: 'deploy', arguments: {}, callId: 'call_d' },
    ],
    [
      { type: 'text', text: 'Deploying ' },
      { type: 'delay', ms: 3000 },
      { type: 'text', text: 'done.' },
    ],
  );
  const { page, sessionId } = await openApp(server);
  await send(page, 'Deploy');
  await page.locator('.tool[data-call-id="call_d"] button.approve').click();
  await page.locator('.message.assistant .text', { hasText: 'Deploying' }).waitFor();
  const reconnect = page.waitForResponse((response) =>
    response.url().endsWith(`/ui/chat/${sessionId}/stream`),
  );
  await page.reload();
  expect((await reconnect).status()).toBe(200);
  await page.locator('.message.assistant .text', { hasText: 'done.' }).waitFor();
  await page.locator('.chat[data-status="ready"]').waitFor();
  await expect(page.locator('.message.user').allTextContents()).resolves.toEqual(['Deploy']);
  await expect(page.locator('.reasoning').allTextContents()).resolves.toEqual(['A deploy needs a yes.']);
  await expect(assistantText(page).allTextContents()).resolves.toEqual(['Shipping it.', 'Deploying done.']);
  await expect(page.locator('.tool[data-call-id="call_d"]').getAttribute('data-state')).resolves.toBe(
    'output-available',
  );
}, 60_000);

test('hostile model text shows as text: no markup runs, ESC is made visible', async () => {
  server = await startReactChatServer({ origin: bundle.url });
  server.provider.enqueue([
    { type: 'reasoning', text: '<b>bold</b>\u001b]0;title\u0007' },
    { type: 'text', text: '<img src=x onerror="window.__pwned=1">\u001b[31mred' },
  ]);
  const { page, sessionId } = await openApp(server);
  await send(page, 'Say something nasty');
  await page.locator('.message.assistant .text', { hasText: 'red' }).waitFor();
  await expect(assistantText(page).textContent()).resolves.toBe(
    '<img src=x onerror="window.__pwned=1">\u241b[31mred',
  );
  await expect(page.locator('.reasoning').textContent()).resolves.toBe('<b>bold</b>\u241b]0;title\u2407');
  expect(await page.locator('#transcript img, #transcript b').count()).toBe(0);
  expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();

  // A tampered slot of kept messages is left out on reload, not drawn and not a crash: the stored history
  // is drawn instead, still as text.
  const slot = `youyou.react-chat.messages.${sessionId}`;
  await page.evaluate(
    `sessionStorage.setItem(${JSON.stringify(slot)}, JSON.stringify([{ id: 1 }, { id: 'x', role: 'user', parts: [null] }, 'text']))`,
  );
  await page.reload();
  await page.locator('.chat[data-status="ready"]').waitFor();
  await expect(page.locator('.message.user').allTextContents()).resolves.toEqual(['Say something nasty']);
  await expect(assistantText(page).textContent()).resolves.toBe(
    '<img src=x onerror="window.__pwned=1">\u241b[31mred',
  );
  expect(await page.locator('#transcript img, #transcript b').count()).toBe(0);
  expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
}, 60_000);

test("the app cannot open another tenant's session, and a server without its origin in CORS refuses it", async () => {
  server = await startReactChatServer({ origin: bundle.url });
  const created = await fetch(`${server.url}/sessions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKENS.bob}`, 'content-type': 'application/json' },
    body: '{}',
  });
  const bobSession = ((await created.json()) as { sessionId: string }).sessionId;
  server.provider.enqueue([{ type: 'text', text: 'should not run' }]);
  const context = await browser.newContext();
  contexts.push(context);
  const page = await context.newPage();
  const hash = new URLSearchParams({ api: server.url, token: TOKENS.alice, session: bobSession });
  await page.goto(`${bundle.url}/#${hash}`);
  // The resume on load is refused like any route with another tenant's session id, and so is a message.
  await page.locator('#error', { hasText: 'SESSION_NOT_FOUND' }).waitFor();
  await send(page, 'Let me in');
  await page.locator('.message.user', { hasText: 'Let me in' }).waitFor();
  await page.locator('.chat[data-status="error"]').waitFor();
  await expect(page.locator('#error').textContent()).resolves.toContain('SESSION_NOT_FOUND');
  expect(server.provider.requests).toHaveLength(0);
  expect(await page.locator('.message.assistant').count()).toBe(0);

  // The same app against a server that does not list its origin: the browser blocks the call.
  await server.close();
  server = await startReactChatServer({ origin: 'http://127.0.0.1:1' });
  const blocked = await openBlocked(server.url);
  await blocked.locator('#error').waitFor();
  expect(await blocked.locator('.chat').count()).toBe(0);
}, 60_000);

/** The app pointed at a server that does not allow its origin: creating the session fails in the browser. */
async function openBlocked(api: string): Promise<Page> {
  const context = await browser.newContext();
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(`${bundle.url}/#${new URLSearchParams({ api, token: TOKENS.alice })}`);
  return page;
}
