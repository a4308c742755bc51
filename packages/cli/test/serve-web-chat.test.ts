import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { type ChatServer, hangingReply, startChatServer, textReply } from '../../../test-support/cli-wire.js';
import { launchChromium } from '../../server/test/support/browser.js';
import { ensureBuilt } from './support/build.js';
import { createSandbox, type RunningCli, type Sandbox, startCli } from './support/cli.js';
import { SERVE_AUTH, SERVE_TOKEN, stopServe, waitForServeUrl } from './support/serve.js';

// The web chat page as the built `youyou serve` serves it (the copy @youyou/server ships), checked over HTTP
// and driven in Debian's headless Chromium; only the model's answers are scripted.

const SHIPPED = fileURLToPath(new URL('../../server/web-chat/', import.meta.url));
const ARTIFACTS = fileURLToPath(new URL('../../../artifacts/web-chat/', import.meta.url));

let wire: ChatServer;
let sandbox: Sandbox;
let serving: RunningCli | undefined;
let browser: Browser | undefined;

beforeAll(ensureBuilt, 240_000);

afterAll(async () => {
  await browser?.close();
});

beforeEach(async () => {
  wire = await startChatServer();
  sandbox = await createSandbox();
});

afterEach(async () => {
  if (serving !== undefined) await stopServe(serving);
  serving = undefined;
  await wire.close();
  await sandbox.remove();
});

async function serve(args: string[] = []): Promise<string> {
  serving = startCli({
    args: ['serve', '--port', '0', '--base-url', wire.baseURL, ...args],
    sandbox,
    env: { YOUYOU_SERVER_TOKENS: `${SERVE_TOKEN}=team-a` },
  });
  return waitForServeUrl(serving);
}

test('youyou serve answers / with the web chat page and its files, under a CSP; --no-web-chat and server.webChat: false leave it out', async () => {
  const url = await serve();
  expect(serving?.stdout()).toContain(`web chat at ${url}/`);
  const index = await fetch(`${url}/`);
  expect(index.status).toBe(200);
  expect(index.headers.get('content-type')).toContain('text/html');
  expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
  expect(await index.text()).toBe(await readFile(path.join(SHIPPED, 'index.html'), 'utf8'));
  const script = await fetch(`${url}/web-chat/chat.js`);
  expect(script.headers.get('content-type')).toContain('text/javascript');
  expect(await script.text()).toBe(await readFile(path.join(SHIPPED, 'chat.js'), 'utf8'));
  expect((await fetch(`${url}/web-chat/style.css`)).status).toBe(200);
  // The API still needs the token.
  expect((await fetch(`${url}/sessions`)).status).toBe(401);
  await stopServe(serving!);

  const withoutFlag = await serve(['--no-web-chat']);
  expect((await fetch(`${withoutFlag}/`)).status).toBe(401);
  expect((await fetch(`${withoutFlag}/web-chat/chat.js`)).status).toBe(401);
  await stopServe(serving!);

  await mkdir(sandbox.home, { recursive: true });
  await writeFile(path.join(sandbox.home, 'config.json'), JSON.stringify({ server: { webChat: false } }));
  const withoutConfig = await serve();
  expect((await fetch(`${withoutConfig}/`)).status).toBe(401);
  expect(serving?.stdout()).not.toContain('web chat at');
}, 90_000);

test('the page served by youyou serve takes a token, sends a message and streams the answer in', async () => {
  browser ??= await launchChromium();
  const url = await serve();
  const context = await browser.newContext({ viewport: { width: 900, height: 560 } });
  try {
    const page = await context.newPage();
    await page.goto(`${url}/`);
    await page.fill('#token', SERVE_TOKEN);
    await page.click('#token-form button[type="submit"]');

    // The model answers part of its text and keeps the stream open: the page shows it while the turn runs.
    wire.reply(hangingReply('Streamed ', 'from youyou serve.'));
    await page.fill('#message', 'Hello from the browser');
    await page.click('#send');
    await page.locator('.assistant', { hasText: 'Streamed from youyou serve.' }).waitFor();
    await expect(page.locator('.user').textContent()).resolves.toBe('Hello from the browser');
    const sessionId = new URLSearchParams(new URL(page.url()).hash.slice(1)).get('session') ?? '';
    const status = (await (await fetch(`${url}/sessions/${sessionId}`, { headers: SERVE_AUTH })).json()) as {
      turnRunning: boolean;
    };
    expect(status.turnRunning).toBe(true);
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'youyou-serve.png') });
    await fetch(`${url}/sessions/${sessionId}/cancel`, { method: 'POST', headers: SERVE_AUTH });

    // A second message gets a whole answer through the same page.
    wire.reply(textReply('Second ', 'answer.'));
    await page.fill('#message', 'And again');
    await page.click('#send');
    await page.locator('.assistant', { hasText: 'Second answer.' }).waitFor();
    // The model was sent what the page typed.
    expect(JSON.stringify(wire.turnRequests().at(-1)?.body)).toContain('And again');
    // The session is the tenant's, listed in the page.
    await page.locator('#sessions a', { hasText: 'Hello from the browser' }).waitFor();
  } finally {
    await context.close();
  }
}, 90_000);
