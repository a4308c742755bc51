import { once } from 'node:events';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { textReply, toolCallReply } from '../../../test-support/cli-wire.js';
import { type OAuthFixture, startOAuthFixture } from '../../../test-support/oauth-mcp.js';
import { BIN } from './support/build.js';
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
  test('not logged in, the offer declined: the chat says what to run, leaves the server out, writes nothing', async () => {
    const chat = await harness.startInTmux([process.execPath, BIN, '--base-url', harness.server.baseURL]);
    await chat.waitFor(/MCP server notes needs a login\. Log in now\? \[y\/N\] *\n*$/);
    // The line is longer than the terminal: compared with the wrapping taken out.
    const screen = (await chat.screen()).replace(/\s+/g, '');
    const said = `MCPserver"notes"(url${fixture.mcpUrl})needsauthorization:notloggedin;run\`youyoumcploginnotes\``;
    expect(screen.split(said)).toHaveLength(2);
    await chat.keys('Enter');
    await chat.waitFor(PROMPT_BACK);
    harness.server.reply(
      toolCallReply({ id: 'call_1', name: 'notes__secret_note', arguments: {} }),
      textReply('No such tool.'),
    );
    await send(chat, 'read the note');
    await chat.waitFor(/No such tool\.[\s\S]*\n› *\n*$/);
    expect((await fixture.state()).toolCalls).toBe(0);
    expect(existsSync(path.join(harness.sandbox.home, 'mcp-auth'))).toBe(false);
  });

  test('not logged in, the offer taken: the login runs in the chat and the tool serves from the next turn', async () => {
    const chat = await harness.startInTmux([process.execPath, BIN, '--base-url', harness.server.baseURL]);
    await chat.waitFor(/Log in now\? \[y\/N\] *\n*$/);
    await send(chat, 'y');
    // The test is the browser: the URL is read off the screen, its wrapping taken out.
    const shown = await chat.waitFor(/Waiting for the browser/);
    const url = /in a browser[^:]*:\s+(http[\s\S]+?)\s*\n\s*\nWaiting/.exec(shown)?.[1]?.replace(/\s+/g, '');
    expect(url).toBeDefined();
    const approval = await fetch(url!, { redirect: 'manual' });
    await fetch(approval.headers.get('location')!);
    await chat.waitFor(PROMPT_BACK);
    const file = path.join(harness.sandbox.home, 'mcp-auth', 'notes.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    harness.server.reply(
      toolCallReply({ id: 'call_1', name: 'notes__secret_note', arguments: {} }),
      textReply('Read it.'),
    );
    await send(chat, 'read the note');
    await chat.waitFor(/Read it\.[\s\S]*\n› *\n*$/);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as { tokens: { access_token: string } };
    const state = await fixture.state();
    expect(state.toolCalls).toBe(1);
    expect(state.bearerTokens.at(-1)).toBe(saved.tokens.access_token);
  });

  test('the offer taken, then Ctrl-C: the login is abandoned, its port closed, nothing written', async () => {
    const chat = await harness.startInTmux([process.execPath, BIN, '--base-url', harness.server.baseURL]);
    await chat.waitFor(/Log in now\? \[y\/N\] *\n*$/);
    await send(chat, 'y');
    const shown = await chat.waitFor(/Waiting for the browser to come back to (http\S+) /);
    const redirect = /come back to (http\S+) /.exec(shown.replace(/\n/g, ''))?.[1];
    expect(redirect).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    await chat.keys('C-c');
    await chat.waitFor(PROMPT_BACK);
    expect(existsSync(path.join(harness.sandbox.home, 'mcp-auth', 'notes.json'))).toBe(false);
    await expect(fetch(redirect!)).rejects.toThrow();
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
