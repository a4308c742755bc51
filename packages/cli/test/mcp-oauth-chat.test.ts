import { once } from 'node:events';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { textReply, toolCallReply } from '../../../test-support/cli-wire.js';
import { type OAuthFixture, startOAuthFixture } from '../../../test-support/oauth-mcp.js';
import { startCli } from './support/cli.js';
import { PROMPT_BACK, send, useTmuxHarness } from './support/harness.js';

const harness = useTmuxHarness();
let fixture: OAuthFixture;

beforeEach(async () => {
  fixture = await startOAuthFixture();
  await mkdir(harness.sandbox.home, { recursive: true });
  await writeFile(
    path.join(harness.sandbox.home, 'config.json'),
    JSON.stringify({ mcpServers: { notes: { url: fixture.mcpUrl } } }),
  );
});
afterEach(() => fixture.stop());

/** `youyou mcp login notes`, with the test as the browser. */
async function logIn(): Promise<void> {
  const login = startCli({ args: ['mcp', 'login', 'notes'], sandbox: harness.sandbox });
  let url: string | undefined;
  while (url === undefined) {
    url = /^ {2}(http\S+)$/m.exec(login.stdout())?.[1];
    if (url === undefined) await once(login.child.stdout!, 'data');
  }
  const approval = await fetch(url, { redirect: 'manual' });
  await fetch(approval.headers.get('location')!);
  expect((await login.result).code).toBe(0);
}

describe('an OAuth MCP server in the interactive chat', () => {
  test('not logged in: the chat says once, before the prompt, what to run', async () => {
    const chat = await harness.startChat();
    // The line is longer than the terminal: compared with the wrapping taken out.
    const screen = (await chat.screen()).replace(/\s+/g, '');
    const said = `MCPserver"notes"(url${fixture.mcpUrl})needsauthorization:notloggedin;run\`youyoumcploginnotes\``;
    expect(screen.split(said)).toHaveLength(2);
  });

  test('a login revoked mid-session: the tool line shows what to run, and the chat goes on', async () => {
    await logIn();
    const chat = await harness.startChat();
    harness.server.reply(async () => {
      await fixture.revokeAll();
      return toolCallReply({ id: 'call_1', name: 'notes__secret_note', arguments: {} });
    }, textReply('Please log in again.'));
    await send(chat, 'read the note');
    const screen = await chat.waitFor(/Please log in again\.[\s\S]*\n› *\n*$/);
    expect(screen).toMatch(/needs authorization: the saved login was refused/);
    await chat.waitFor(PROMPT_BACK);
  });
});
