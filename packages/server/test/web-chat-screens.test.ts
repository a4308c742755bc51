import type { ToolHandler } from '@youyou/agent';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { accessibilityProblems } from './support/axe.js';
import { launchChromium } from './support/browser.js';
import {
  type ChatServer,
  LAPTOP,
  openChat,
  PHONE,
  screenshot,
  send,
  startChatServer,
  type ViewOptions,
} from './support/web-chat.js';

// The web chat as a person sees it on a laptop (1280×800) and a phone (390×844), light and dark: a conversation
// with Markdown, a tool call and an approval card with a diff; axe-core checks each for accessibility problems.
// `UPDATE_SCREENSHOTS=1` writes the screenshots into docs/ for the README.

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

const OBJECT_SCHEMA = { type: 'object', properties: {} } as const;
const ORDERS =
  '[\n  { "id": 1, "amount": 120 },\n  { "id": 2, "amount": 80 },\n  { "id": 3, "amount": 42 }\n]';

const ANSWER = [
  'The file holds **3 orders**. Here is a small script that sums them:',
  '',
  '```ts',
  "import { readFile } from 'node:fs/promises';",
  "const orders: { amount: number }[] = JSON.parse(await readFile('data/orders.json', 'utf8'));",
  'const total = orders.reduce((sum, order) => sum + order.amount, 0);',
  'console.log(total); // 242',
  '```',
  '',
  'See the [Node.js fs docs](https://nodejs.org/api/fs.html) for more.',
].join('\n');

const NEW_REPORT = [
  'export function report(orders) {',
  '  const total = orders.reduce((sum, o) => sum + o.amount, 0);',
  "  return [...orders.map(format), 'Total: ' + total].join('\\n');",
  '}',
  '',
].join('\n');

const readTool: ToolHandler = {
  name: 'read_file',
  description: 'reads a file',
  parametersSchema: OBJECT_SCHEMA,
  isMutating: false,
  execute: async () => ({ content: ORDERS, isError: false }),
};
const editTool: ToolHandler = {
  name: 'edit_file',
  description: 'edits a file',
  parametersSchema: OBJECT_SCHEMA,
  isMutating: true,
  needsApproval: true,
  execute: async () => ({ content: 'edited', isError: false }),
};

/** A conversation that shows every kind of row: an answer in Markdown, a tool call, an approval card. */
async function openConversation(view: ViewOptions): Promise<Page> {
  server = await startChatServer({
    tools: [readTool, editTool],
    pricing: { inputPerMillion: 3, outputPerMillion: 15 },
  });
  server.provider.enqueue(
    [
      {
        type: 'tool_call',
        toolName: 'read_file',
        arguments: { path: 'data/orders.json' },
        callId: 'call_read',
      },
    ],
    [
      ...(ANSWER.match(/[\s\S]{1,24}/g) ?? []).map((text) => ({ type: 'text' as const, text })),
      { type: 'usage', usage: { inputTokens: 1_840, outputTokens: 212 } },
    ],
    [
      {
        type: 'tool_call',
        toolName: 'edit_file',
        arguments: {
          path: 'src/report.ts',
          oldString: "export function report(orders) {\n  return orders.map(format).join('\\n');\n}\n",
          newString: NEW_REPORT,
        },
        callId: 'call_edit',
      },
    ],
  );
  const page = await openChat(browser, contexts, server, view);
  await send(page, 'How much do the orders in data/orders.json add up to?');
  await page.locator('.assistant .code-block').waitFor();
  await page.locator('.usage').waitFor();
  await send(page, 'Add the total to the report');
  await page.locator('.pending button.approve').waitFor();
  return page;
}

const SCENES: { name: string; view: ViewOptions }[] = [
  { name: 'laptop-light', view: { viewport: LAPTOP, colorScheme: 'light' } },
  { name: 'laptop-dark', view: { viewport: LAPTOP, colorScheme: 'dark' } },
  { name: 'phone-light', view: { viewport: PHONE, colorScheme: 'light' } },
  { name: 'phone-dark', view: { viewport: PHONE, colorScheme: 'dark' } },
];

for (const scene of SCENES) {
  test(`${scene.name}: the conversation passes the accessibility check and is captured`, async () => {
    const page = await openConversation(scene.view);
    await expect(page.locator('.pending .diff-line.add').count()).resolves.toBeGreaterThan(0);
    await expect(accessibilityProblems(page)).resolves.toEqual([]);
    await screenshot(page, `web-chat-${scene.name}.png`);
    if (scene.name === 'phone-light') {
      // The top of the conversation on a phone: the question, the tool call and the Markdown answer.
      await page.locator('#scroller').evaluate((scroller) => scroller.scrollTo(0, 0));
      await screenshot(page, `web-chat-${scene.name}-top.png`);
    }
  }, 60_000);
}

test('on a phone the chats are a drawer: closed it is out of reach, opened it lists the chats and passes axe', async () => {
  const page = await openConversation({ viewport: PHONE, colorScheme: 'light' });
  const sidebar = page.getByRole('complementary', { name: 'Chats' });
  const chatLink = page.locator('#sessions a', { hasText: 'How much do the orders' });
  await expect(chatLink.isVisible()).resolves.toBe(false);
  // Out of reach of the keyboard too: the search box inside it takes no focus.
  await expect(
    page.evaluate("document.getElementById('search').focus(); document.activeElement?.id ?? ''"),
  ).resolves.not.toBe('search');
  await page.getByRole('button', { name: 'Show chats' }).click();
  await chatLink.waitFor({ state: 'visible' });
  await expect(sidebar.getAttribute('data-open')).resolves.toBe('true');
  await expect(accessibilityProblems(page)).resolves.toEqual([]);
  await screenshot(page, 'web-chat-phone-drawer.png');
  await page.keyboard.press('Escape');
  await chatLink.waitFor({ state: 'hidden' });

  // At 360 px, the narrowest phone the page is made for, nothing makes the page itself scroll sideways (wide
  // code and diffs scroll inside their own boxes), and the message box and Send stay on screen.
  await page.setViewportSize({ width: 360, height: 740 });
  await expect(page.evaluate('document.documentElement.scrollWidth')).resolves.toBeLessThanOrEqual(360);
  for (const control of [page.locator('#message'), page.getByRole('button', { name: 'Send' })]) {
    const box = await control.boundingBox();
    expect((box?.x ?? -1) >= 0 && (box?.x ?? 0) + (box?.width ?? 0) <= 360).toBe(true);
  }
}, 60_000);
