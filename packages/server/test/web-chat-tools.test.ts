import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolHandler } from '@youyou/agent';
import type { Browser, BrowserContext, Locator } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { launchChromium } from './support/browser.js';
import { type ChatServer, openChat, send, startChatServer } from './support/web-chat.js';

// Tool calls as compact rows and approvals as cards (a diff, a command in full, Approve / Deny / Deny with a
// reason from the keyboard), in headless Chromium against a real server; only the model's answers are scripted.

let browser: Browser;
let server: ChatServer | undefined;
let folder: string;
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
  if (folder !== undefined) await rm(folder, { recursive: true, force: true });
});

const OBJECT_SCHEMA = { type: 'object', properties: {} } as const;

/** The lines of a card's diff as they read: `+added`, `-removed`, ` kept`, and the `@@` headers. */
const diffLines = (card: Locator): Promise<string[]> =>
  card
    .locator('.diff-line')
    .evaluateAll((lines) => lines.map((line) => (line.textContent ?? '').replace(/\n$/, '')));

test('a tool call is one row (name, arguments, status, duration) that opens onto its output; long output is collapsed', async () => {
  const listFiles: ToolHandler = {
    name: 'list_files',
    description: 'lists files',
    parametersSchema: OBJECT_SCHEMA,
    isMutating: false,
    execute: async () => ({
      content: Array.from({ length: 50 }, (_unused, index) => `file-${index}.ts`).join('\n'),
      isError: false,
    }),
  };
  const readSecret: ToolHandler = {
    name: 'read_secret',
    description: 'fails',
    parametersSchema: OBJECT_SCHEMA,
    isMutating: false,
    execute: async () => ({ content: 'permission denied', isError: true }),
  };
  server = await startChatServer({ tools: [listFiles, readSecret] });
  server.provider.enqueue(
    [
      {
        type: 'tool_call',
        toolName: 'list_files',
        arguments: { path: 'src', pattern: '*.ts' },
        callId: 'call_ls',
      },
      {
        type: 'tool_call',
        toolName: 'read_secret',
        arguments: { path: '/etc/shadow' },
        callId: 'call_secret',
      },
    ],
    [{ type: 'text', text: 'There are 50 files.' }],
  );
  const page = await openChat(browser, contexts, server);
  await send(page, 'List the files');
  await page.locator('.assistant', { hasText: 'There are 50 files.' }).waitFor();
  const row = page.locator('.tool[data-call-id="call_ls"]');
  await expect(row.locator('.tool-name').textContent()).resolves.toBe('list_files');
  await expect(row.locator('.tool-args').textContent()).resolves.toBe('src');
  await expect(row.locator('.tool-status').textContent()).resolves.toBe('done');
  await expect(row.locator('.tool-time').textContent()).resolves.toMatch(/^\d+(\.\d)? m?s$/);
  const failed = page.locator('.tool[data-call-id="call_secret"]');
  await expect(failed.locator('.tool-status').textContent()).resolves.toBe('failed');
  // Closed until asked: the output is not shown.
  await expect(row.locator('.tool-output').isVisible()).resolves.toBe(false);
  await row.locator('summary').click();
  const output = row.locator('.tool-output');
  await expect(output.textContent()).resolves.toBe(
    Array.from({ length: 20 }, (_unused, index) => `file-${index}.ts`).join('\n'),
  );
  await row.getByRole('button', { name: 'Show all 50 lines' }).click();
  expect(((await output.textContent()) ?? '').split('\n')).toHaveLength(50);
  await expect(row.getByRole('button', { name: 'Show all 50 lines' }).count()).resolves.toBe(0);
}, 60_000);

test('approval cards show a file edit as a diff and a command in full; Approve and Deny with a reason work from the keyboard', async () => {
  folder = await mkdtemp(join(tmpdir(), 'youyou-web-chat-cards-'));
  const notePath = join(folder, 'notes.md');
  await writeFile(notePath, '# Notes\nfirst\nsecond\nthird\n');
  const ranCommands: string[] = [];
  const editFile: ToolHandler = {
    name: 'edit_file',
    description: 'replaces text in a file',
    parametersSchema: OBJECT_SCHEMA,
    isMutating: true,
    needsApproval: true,
    execute: async (input) => {
      const { oldString, newString } = input.arguments as { oldString: string; newString: string };
      await writeFile(notePath, (await readFile(notePath, 'utf8')).replace(oldString, newString));
      return { content: 'edited', isError: false };
    },
  };
  const shell: ToolHandler = {
    name: 'shell',
    description: 'runs a command',
    parametersSchema: OBJECT_SCHEMA,
    isMutating: true,
    needsApproval: true,
    execute: async (input) => {
      ranCommands.push(String((input.arguments as { command: string }).command));
      return { content: '', isError: false };
    },
  };
  const longCommand = `rm -rf ./build && ${Array.from({ length: 12 }, (_unused, index) => `echo step-${index}`).join(' && ')}`;
  server = await startChatServer({ tools: [editFile, shell] });
  server.provider.enqueue(
    [
      {
        type: 'tool_call',
        toolName: 'edit_file',
        arguments: {
          path: 'notes.md',
          oldString: 'first\nsecond\nthird\n',
          newString: 'first\nSECOND\nthird\n',
        },
        callId: 'call_edit',
      },
      { type: 'tool_call', toolName: 'shell', arguments: { command: longCommand }, callId: 'call_shell' },
    ],
    [{ type: 'text', text: 'Edited, and left the build alone.' }],
  );
  const page = await openChat(browser, contexts, server);
  await send(page, 'Fix the notes and clean the build');
  const editCard = page.locator('.pending[data-call-id="call_edit"]');
  const shellCard = page.locator('.pending[data-call-id="call_shell"]');
  await shellCard.locator('button.approve').waitFor();
  await expect(editCard.locator('.card-path').textContent()).resolves.toBe('notes.md');
  await expect(diffLines(editCard)).resolves.toEqual([
    '@@ -1,3 +1,3 @@',
    ' first',
    '-second',
    '+SECOND',
    ' third',
  ]);
  // The whole command, not a summary of it.
  await expect(shellCard.locator('.command').textContent()).resolves.toBe(`$ ${longCommand}`);
  await expect(shellCard.getByRole('button', { name: 'Deny with reason…' }).count()).resolves.toBe(1);

  // The keyboard alone: Enter on the focused Approve, then Deny with a reason typed and sent with Enter.
  await editCard.locator('button.approve').focus();
  await page.keyboard.press('Enter');
  await editCard.locator('.decided', { hasText: 'approved' }).waitFor();
  await shellCard.locator('button.deny-reason').focus();
  await page.keyboard.press('Enter');
  await page.keyboard.type('do not touch the build folder');
  await page.keyboard.press('Enter');
  await page.locator('.assistant', { hasText: 'Edited, and left the build alone.' }).waitFor();
  await expect(shellCard.locator('.decided').textContent()).resolves.toBe(
    'denied: do not touch the build folder',
  );
  await expect(readFile(notePath, 'utf8')).resolves.toBe('# Notes\nfirst\nSECOND\nthird\n');
  expect(ranCommands).toEqual([]);
  expect(JSON.stringify(server.provider.requests.at(-1)?.messages)).toContain(
    'do not touch the build folder',
  );
  await expect(page.locator('.tool[data-call-id="call_shell"] .tool-status').textContent()).resolves.toBe(
    'denied',
  );
}, 60_000);

test('a write_file card shows the new content as added lines', async () => {
  const writeTool: ToolHandler = {
    name: 'write_file',
    description: 'writes a file',
    parametersSchema: OBJECT_SCHEMA,
    isMutating: true,
    needsApproval: true,
    execute: async () => ({ content: 'written', isError: false }),
  };
  server = await startChatServer({ tools: [writeTool] });
  server.provider.enqueue([
    {
      type: 'tool_call',
      toolName: 'write_file',
      arguments: { path: 'hello.py', content: 'print("hi")\nprint("bye")\n' },
      callId: 'call_write',
    },
  ]);
  const page = await openChat(browser, contexts, server);
  await send(page, 'Write hello.py');
  const card = page.locator('.pending[data-call-id="call_write"]');
  await card.locator('button.approve').waitFor();
  await expect(card.locator('.card-path').textContent()).resolves.toBe('hello.py');
  await expect(diffLines(card)).resolves.toEqual(['@@ -0,0 +1,2 @@', '+print("hi")', '+print("bye")']);
}, 60_000);

test('a tool row opened while the tool runs stays open when its output arrives', async () => {
  let finish: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const slowTool: ToolHandler = {
    name: 'slow_build',
    description: 'builds until released',
    parametersSchema: OBJECT_SCHEMA,
    isMutating: false,
    execute: async () => {
      await released;
      return { content: 'build ok', isError: false };
    },
  };
  server = await startChatServer({ tools: [slowTool] });
  server.provider.enqueue(
    [{ type: 'tool_call', toolName: 'slow_build', arguments: { target: 'web' }, callId: 'call_build' }],
    [{ type: 'text', text: 'Built.' }],
  );
  const page = await openChat(browser, contexts, server);
  await send(page, 'Build it');
  const row = page.locator('.tool[data-call-id="call_build"]');
  await row.locator('.tool-status', { hasText: 'running' }).waitFor();
  await row.locator('summary').click();
  finish();
  await row.locator('.tool-status', { hasText: 'done' }).waitFor();
  await expect(row.locator('.tool-output').textContent()).resolves.toBe('build ok');
  await expect(row.locator('.tool-output').isVisible()).resolves.toBe(true);
}, 60_000);

test('a running tool’s last output lines show under its row, neutralised, and go when it ends', async () => {
  let finish: () => void = () => undefined;
  const released = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const build: ToolHandler = {
    name: 'build',
    description: 'builds until released, reporting its steps',
    parametersSchema: OBJECT_SCHEMA,
    isMutating: false,
    execute: async (input) => {
      for (let step = 1; step <= 6; step += 1) input.onOutput?.(`step ${step}\n`);
      input.onOutput?.('\x1b]0;owned\x07\x1b[2Jlast\n');
      await released;
      return { content: 'build ok', isError: false };
    },
  };
  server = await startChatServer({ tools: [build] });
  server.provider.enqueue(
    [{ type: 'tool_call', toolName: 'build', arguments: {}, callId: 'call_build' }],
    [{ type: 'text', text: 'Built.' }],
  );
  const page = await openChat(browser, contexts, server);
  await send(page, 'Build it');
  const row = page.locator('.tool[data-call-id="call_build"]');
  const live = row.locator('.tool-live');
  await live.filter({ hasText: 'last' }).waitFor();
  await expect(row.locator('.tool-status').textContent()).resolves.toBe('running');
  // The last five lines, the control characters made visible (␛, ␇): nothing of the sequences acts.
  await expect(live.textContent()).resolves.toBe('step 3\nstep 4\nstep 5\nstep 6\n␛]0;owned␇␛[2Jlast');
  await expect(live.isVisible()).resolves.toBe(true);
  finish();
  await row.locator('.tool-status', { hasText: 'done' }).waitFor();
  await expect(live.count()).resolves.toBe(0);
}, 60_000);
