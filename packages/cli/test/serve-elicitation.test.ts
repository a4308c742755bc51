/**
 * An MCP server's question (elicitation) in `youyou serve`: the tool call that asks waits, the session's client
 * lists the question at GET /sessions/:id/elicitations and answers it with a POST; the answer reaches the MCP
 * server; a question nobody answers within the window is declined; other tenants cannot see or answer it. The
 * web chat, in headless Chromium, shows the question as a form and its Accept sends the answer.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import {
  type ChatServer,
  startChatServer,
  textReply,
  toolCallReply,
  toolResult,
} from '../../../test-support/cli-wire.js';
import { launchChromium } from '../../server/test/support/browser.js';
import { ensureBuilt } from './support/build.js';
import { createSandbox, type RunningCli, type Sandbox, startCli } from './support/cli.js';
import { configureFullServer, recordedEvents } from './support/mcp-fixture.js';
import { SERVE_AUTH, SERVE_TOKEN, stopServe, until, waitForServeUrl } from './support/serve.js';

const OTHER_TOKEN = 'serve-test-other-tenant-0123';
const OTHER_AUTH = { authorization: `Bearer ${OTHER_TOKEN}`, 'content-type': 'application/json' };
const ARTIFACTS = fileURLToPath(new URL('../../../artifacts/web-chat/', import.meta.url));

let wire: ChatServer;
let sandbox: Sandbox;
let events: string;
const running: RunningCli[] = [];
let browser: Browser | undefined;

beforeAll(ensureBuilt, 180_000);

afterAll(async () => {
  await browser?.close();
});

beforeEach(async () => {
  wire = await startChatServer();
  sandbox = await createSandbox();
  events = await configureFullServer(sandbox);
});

afterEach(async () => {
  for (const cli of running.splice(0)) {
    if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill('SIGKILL');
    await cli.result;
  }
  await wire.close();
  await sandbox.remove();
});

/** Starts serve (mutating calls run without approval: the question is what is held) with `server` settings. */
async function serve(server: Record<string, unknown> = {}): Promise<string> {
  const configFile = path.join(sandbox.home, 'config.json');
  const { readFile } = await import('node:fs/promises');
  const config = JSON.parse(await readFile(configFile, 'utf8')) as Record<string, unknown>;
  config.server = { tokens: { [SERVE_TOKEN]: 'team-a', [OTHER_TOKEN]: 'team-b' }, ...server };
  await writeFile(configFile, JSON.stringify(config));
  const cli = startCli({
    args: ['serve', '--port', '0', '--host', '127.0.0.1', '--base-url', wire.baseURL, '--yes'],
    sandbox,
  });
  running.push(cli);
  return waitForServeUrl(cli);
}

/** Creates a session and sends a message whose turn calls the fixture's `ask`; answers the session id. */
async function startAskingTurn(url: string): Promise<{ sessionId: string; stream: Promise<string> }> {
  const created = await fetch(`${url}/sessions`, { method: 'POST', headers: SERVE_AUTH, body: '{}' });
  const { sessionId } = (await created.json()) as { sessionId: string };
  wire.reply(toolCallReply({ id: 'call_ask', name: 'full__ask', arguments: {} }), textReply('Thanks.'));
  const stream = fetch(`${url}/sessions/${sessionId}/messages`, {
    method: 'POST',
    headers: SERVE_AUTH,
    body: JSON.stringify({ content: 'ask me' }),
  }).then((response) => response.text());
  return { sessionId, stream };
}

type Listed = { elicitations: { id: string; server: string; message: string; fields: { name: string }[] }[] };

async function listed(url: string, sessionId: string, headers = SERVE_AUTH): Promise<Response> {
  return fetch(`${url}/sessions/${sessionId}/elicitations`, { headers });
}

test("the session's client lists the held question and its answer goes back to the MCP server", async () => {
  const url = await serve();
  const { sessionId, stream } = await startAskingTurn(url);
  let question: Listed['elicitations'][number] | undefined;
  await until(
    async () => {
      question = ((await (await listed(url, sessionId)).json()) as Listed).elicitations[0];
      return question !== undefined;
    },
    () => 'the held question',
  );
  expect(question?.server).toBe('full');
  expect(question?.fields.map((field) => field.name)).toEqual(['colour', 'count', 'urgent', 'note']);

  // Another tenant neither sees nor answers the session's question.
  expect((await listed(url, sessionId, OTHER_AUTH)).status).toBe(404);
  const answerUrl = `${url}/sessions/${sessionId}/elicitations/${question?.id}`;
  const foreign = await fetch(answerUrl, {
    method: 'POST',
    headers: OTHER_AUTH,
    body: JSON.stringify({ action: 'decline' }),
  });
  expect(foreign.status).toBe(404);

  // Values that do not fit the form are refused and the question stays held.
  const misfit = await fetch(answerUrl, {
    method: 'POST',
    headers: SERVE_AUTH,
    body: JSON.stringify({ action: 'accept', content: { colour: 'purple', count: 2 } }),
  });
  expect(misfit.status).toBe(400);

  const answer = { action: 'accept', content: { colour: 'blue', count: 2 } };
  const answered = await fetch(answerUrl, {
    method: 'POST',
    headers: SERVE_AUTH,
    body: JSON.stringify(answer),
  });
  expect(answered.status).toBe(200);
  expect(await stream).toContain('turn_complete');
  expect(toolResult(wire.turnRequests()[1]!, 'call_ask')).toBe(`answer: ${JSON.stringify(answer)}`);
  expect(recordedEvents(events)).toContainEqual({ event: 'elicited', result: answer });
  expect(((await (await listed(url, sessionId)).json()) as Listed).elicitations).toEqual([]);
  const again = await fetch(answerUrl, { method: 'POST', headers: SERVE_AUTH, body: JSON.stringify(answer) });
  expect(again.status).toBe(404);
  expect(await stopServe(running[0]!)).toBe(0);
}, 90_000);

test('a question nobody answers within the approval window is declined', async () => {
  const url = await serve({ approvalWindowMs: 1000 });
  const { stream } = await startAskingTurn(url);
  expect(await stream).toContain('turn_complete');
  expect(toolResult(wire.turnRequests()[1]!, 'call_ask')).toBe('answer: {"action":"decline"}');
  expect(recordedEvents(events)).toContainEqual({ event: 'elicited', result: { action: 'decline' } });
}, 90_000);

test('the web chat shows the held question as a form, and its Accept sends the answer to the MCP server', async () => {
  const url = await serve();
  browser ??= await launchChromium();
  const context = await browser.newContext({ viewport: { width: 900, height: 700 } });
  try {
    const page = await context.newPage();
    await page.goto(`${url}/#token=${SERVE_TOKEN}`);
    wire.reply(toolCallReply({ id: 'call_ask', name: 'full__ask', arguments: {} }), textReply('Thanks.'));
    await page.fill('#message', 'ask me');
    await page.click('#send');

    const card = page.locator('.question');
    await card.waitFor();
    await expect(card.locator('.card-title code').textContent()).resolves.toBe('full');
    // The server's text is shown as text: its escape sequence made visible, no markup made of it.
    const message = card.locator('.question-message');
    await expect(message.textContent()).resolves.toBe(
      'Which colour should the \u241b[31mbanner\u241b[0m be?',
    );
    await expect(message.locator('*').count()).resolves.toBe(0);
    expect(recordedEvents(events).filter((event) => event.event === 'elicited')).toEqual([]);

    await card.getByLabel('Colour').selectOption('green');
    await card.getByLabel('How many').fill('3');
    await card.getByLabel('Urgent').check();
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'youyou-serve-question.png') });
    await card.getByRole('button', { name: 'Accept' }).click();

    const answer = { action: 'accept', content: { colour: 'green', count: 3, urgent: true } };
    await until(
      () => recordedEvents(events).some((event) => event.event === 'elicited'),
      () => "the MCP server's answer",
    );
    expect(recordedEvents(events)).toContainEqual({ event: 'elicited', result: answer });
    await page.locator('.assistant', { hasText: 'Thanks.' }).waitFor();
    await card.waitFor({ state: 'detached' });
    const result = toolResult(wire.turnRequests()[1]!, 'call_ask') ?? '';
    expect(JSON.parse(result.replace(/^answer: /, ''))).toEqual(answer);
  } finally {
    await context.close();
  }
  expect(await stopServe(running[0]!)).toBe(0);
}, 120_000);
