import type { ToolHandler } from '@youyou/agent';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { type HeldElicitationAnswer, HeldElicitations } from '../src/index.js';
import { accessibilityProblems } from './support/axe.js';
import { launchChromium } from './support/browser.js';
import { type ChatServer, openChat, screenshot, send, startChatServer, TOKENS } from './support/web-chat.js';

// MCP servers' questions in the web chat, in headless Chromium against a real server: the card shows the
// server's hostile text as text, Decline answers, a question held before the page opened is listed, and a
// withdrawn one leaves the page. (packages/cli/test/serve-elicitation.test.ts answers one with Accept through
// `youyou serve` and the MCP fixture server.)

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

const HOSTILE = 'Pick <img src=x onerror="window.pwned=1"><b>one</b>\u001b[2J';

/** An `ask` tool holding one hostile question; `withdraw` takes it back as an MCP server's cancel would. */
function askingTool(
  held: HeldElicitations,
  answers: HeldElicitationAnswer[],
  withdraw = new AbortController(),
) {
  const tool: ToolHandler = {
    name: 'ask',
    description: 'asks the user',
    parametersSchema: { type: 'object', properties: {} },
    isMutating: false,
    execute: async (input) => {
      const answer = await held.hold({
        sessionId: input.sessionId,
        server: 'docs<script>',
        message: HOSTILE,
        fields: [
          {
            name: 'size',
            title: 'Size <i>',
            type: 'enum',
            required: true,
            options: [
              { value: 's', label: '<b>Small</b>' },
              { value: 'l', label: 'Large' },
            ],
          },
        ],
        signal: AbortSignal.any([input.signal, withdraw.signal]),
      });
      answers.push(answer);
      return { content: JSON.stringify(answer), isError: false };
    },
  };
  return tool;
}

const ASK_THEN_OK = [
  [{ type: 'tool_call' as const, toolName: 'ask', arguments: {}, callId: 'call_ask' }],
  [{ type: 'text' as const, text: 'Noted.' }],
];

test("a question's card shows the server's text as text, and Decline answers it and takes the card away", async () => {
  const held = new HeldElicitations({ windowMs: 60_000 });
  const answers: HeldElicitationAnswer[] = [];
  server = await startChatServer({ elicitations: held, tools: [askingTool(held, answers)] });
  server.provider.enqueue(...ASK_THEN_OK);
  const page = await openChat(browser, contexts, server);
  await send(page, 'ask me');

  const card = page.locator('.question');
  await card.waitFor();
  await expect(card.locator('.card-title').textContent()).resolves.toBe('docs<script> asks');
  await expect(card.locator('.question-message').textContent()).resolves.toBe(
    'Pick <img src=x onerror="window.pwned=1"><b>one</b>\u241b[2J',
  );
  await expect(card.locator('img, b, i, script').count()).resolves.toBe(0);
  await expect(card.getByLabel('Size <i>').locator('option').allTextContents()).resolves.toEqual([
    'Choose…',
    '<b>Small</b>',
    'Large',
  ]);
  expect(await page.evaluate(() => (globalThis as { pwned?: number }).pwned)).toBeUndefined();
  expect(answers).toEqual([]);
  // Every control has its label, and the card passes axe-core, light and dark.
  await expect(accessibilityProblems(page)).resolves.toEqual([]);
  await page.emulateMedia({ colorScheme: 'dark' });
  await expect(accessibilityProblems(page)).resolves.toEqual([]);
  await screenshot(page, 'web-chat-question-dark.png');

  await card.getByRole('button', { name: 'Decline' }).click();
  await page.locator('.assistant', { hasText: 'Noted.' }).waitFor();
  await card.waitFor({ state: 'detached' });
  expect(answers).toEqual([{ action: 'decline' }]);
});

test('a question held before the page opened is listed on opening, and leaves the page when it is withdrawn', async () => {
  const held = new HeldElicitations({ windowMs: 60_000 });
  const answers: HeldElicitationAnswer[] = [];
  const withdraw = new AbortController();
  server = await startChatServer({ elicitations: held, tools: [askingTool(held, answers, withdraw)] });
  server.provider.enqueue(...ASK_THEN_OK);
  const auth = { authorization: `Bearer ${TOKENS.alice}`, 'content-type': 'application/json' };
  const created = await fetch(`${server.url}/sessions`, { method: 'POST', headers: auth, body: '{}' });
  const { sessionId } = (await created.json()) as { sessionId: string };
  const turn = fetch(`${server.url}/sessions/${sessionId}/messages`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ content: 'ask me' }),
  }).then((response) => response.text());
  while (held.pending(sessionId).length === 0) await new Promise((resolve) => setImmediate(resolve));

  const page = await openChat(browser, contexts, server, { sessionId });
  const card = page.locator('.question');
  await card.waitFor();
  await expect(card.locator('.question-message').textContent()).resolves.toContain('Pick <img');
  withdraw.abort();
  await card.waitFor({ state: 'detached' });
  expect(await turn).toContain('turn_complete');
  expect(answers).toEqual([{ action: 'cancel' }]);
});
