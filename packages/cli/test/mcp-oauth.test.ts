import { once } from 'node:events';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { textReply, toolCallReply, toolResult } from '../../../test-support/cli-wire.js';
import { type OAuthFixture, startOAuthFixture } from '../../../test-support/oauth-mcp.js';
import { runCli, startCli } from './support/cli.js';
import { useCliHarness } from './support/harness.js';

const harness = useCliHarness();
let fixture: OAuthFixture;

beforeEach(async () => {
  fixture = await startOAuthFixture();
});
afterEach(() => fixture.stop());

function cli(...args: string[]) {
  return runCli({ args, sandbox: harness.sandbox });
}

async function writeConfig(config: unknown): Promise<void> {
  await mkdir(harness.sandbox.home, { recursive: true });
  await writeFile(path.join(harness.sandbox.home, 'config.json'), JSON.stringify(config));
}

function loginPath(name: string): string {
  return path.join(harness.sandbox.home, 'mcp-auth', `${name}.json`);
}

interface SavedLogin {
  serverUrl: string;
  tokens: { access_token: string; refresh_token: string };
}

async function savedLogin(name: string): Promise<SavedLogin> {
  return JSON.parse(await readFile(loginPath(name), 'utf8')) as SavedLogin;
}

/** Runs `youyou mcp login NAME`, plays the browser with the URL it prints, and waits for it to end. */
async function logIn(name: string) {
  const login = startCli({ args: ['mcp', 'login', name], sandbox: harness.sandbox });
  let url: string | undefined;
  while (url === undefined) {
    url = /^ {2}(http\S+)$/m.exec(login.stdout())?.[1];
    if (url === undefined) await once(login.child.stdout!, 'data');
  }
  // The authorization server approves at once and redirects to the callback, as a browser would follow.
  const approval = await fetch(url, { redirect: 'manual' });
  const callback = approval.headers.get('location');
  expect(callback).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/);
  const landing = await fetch(callback!);
  expect(landing.status).toBe(200);
  return { url: new URL(url), result: await login.result };
}

/** Every file of the home whose bytes contain one of `secrets`. */
async function filesHolding(secrets: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(harness.sandbox.home, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const bytes = await readFile(file);
    if (secrets.some((secret) => bytes.includes(secret)))
      found.push(path.relative(harness.sandbox.home, file));
  }
  return found;
}

describe('youyou mcp login with an OAuth MCP server', () => {
  test('login, a tool call with the token, a refresh mid-session, a revoked login in one line, logout', async () => {
    await writeConfig({ mcpServers: { notes: { url: fixture.mcpUrl } } });

    const { url, result: login } = await logIn('notes');
    expect(login.code).toBe(0);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('resource')).toBe(fixture.mcpUrl);
    expect((await stat(loginPath('notes'))).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(loginPath('notes')))).mode & 0o777).toBe(0o700);
    const first = await savedLogin('notes');
    expect(first.serverUrl).toBe(fixture.mcpUrl);
    expect((await fixture.state()).registrations).toBe(1);

    // One session: the tool runs with the saved token; the token expires; the next call refreshes and runs.
    harness.server.reply(
      toolCallReply({ id: 'call_1', name: 'notes__secret_note', arguments: {} }),
      async () => {
        await fixture.expireAccessTokens();
        return toolCallReply({ id: 'call_2', name: 'notes__secret_note', arguments: {} });
      },
      textReply('the note says 42'),
    );
    const run = await cli('-p', 'read the note', '--base-url', harness.server.baseURL);
    expect(run.code).toBe(0);
    const requests = harness.server.turnRequests();
    expect(toolResult(requests[1]!, 'call_1')).toBe('the secret note says 42');
    expect(toolResult(requests[2]!, 'call_2')).toBe('the secret note says 42');
    let state = await fixture.state();
    expect(state.toolCalls).toBe(2);
    expect(state.refreshes).toBe(1);
    expect(state.bearerTokens).toContain(first.tokens.access_token);
    const refreshed = await savedLogin('notes');
    expect(refreshed.tokens.access_token).not.toBe(first.tokens.access_token);
    expect(state.bearerTokens.at(-1)).toBe(refreshed.tokens.access_token);
    expect((await stat(loginPath('notes'))).mode & 0o777).toBe(0o600);

    // Tokens are in the login file only: not in config.json, youyou.db (and its WAL), nor any model request.
    expect(await filesHolding(state.issuedTokens)).toEqual([path.join('mcp-auth', 'notes.json')]);
    for (const request of harness.server.wire.requests) {
      for (const token of state.issuedTokens) expect(request.rawBody).not.toContain(token);
    }

    // Revoked mid-session: the call's result says, in one line, what to run.
    harness.server.reply(async () => {
      await fixture.revokeAll();
      return toolCallReply({ id: 'call_3', name: 'notes__secret_note', arguments: {} });
    }, textReply('you need to log in again'));
    await cli('-p', 'read it again', '--base-url', harness.server.baseURL);
    expect(toolResult(harness.server.turnRequests().at(-1)!, 'call_3')).toBe(
      'MCP server "notes" needs authorization: the saved login was refused; run `youyou mcp login notes`',
    );
    state = await fixture.state();
    expect(state.toolCalls).toBe(2);

    // The next run cannot connect: one warning line says what to run; the turn still runs.
    harness.server.reply(textReply('fine'));
    const later = await cli('-p', 'hi', '--base-url', harness.server.baseURL);
    expect(later.code).toBe(0);
    // (A "connecting…" notice may come first when the machine is slow: it is not a warning.)
    const lines = later.stderr.split('\n').filter((line) => line.startsWith('youyou: warning:'));
    expect(lines).toEqual([
      `youyou: warning: MCP server "notes" (url ${fixture.mcpUrl}) needs authorization: the saved login was refused; run \`youyou mcp login notes\``,
    ]);

    const saved = await savedLogin('notes');
    const logout = await cli('mcp', 'logout', 'notes');
    expect(logout.code).toBe(0);
    await expect(stat(loginPath('notes'))).rejects.toThrow(/ENOENT/);
    // The revocation endpoint of the authorization server got both tokens of the login.
    expect((await fixture.state()).revoked).toEqual([saved.tokens.refresh_token, saved.tokens.access_token]);
    expect((await cli('mcp', 'logout', 'notes')).stdout).toBe('MCP server "notes" has no saved login.\n');
  });

  test('a server never logged in to: the warning says to log in; a new login works again', async () => {
    await writeConfig({ mcpServers: { notes: { url: fixture.mcpUrl } } });
    harness.server.reply(textReply('fine'));
    const before = await cli('-p', 'hi', '--base-url', harness.server.baseURL);
    expect(before.stderr).toContain(
      `youyou: warning: MCP server "notes" (url ${fixture.mcpUrl}) needs authorization: not logged in; run \`youyou mcp login notes\``,
    );
    expect((await fixture.state()).registrations).toBe(0);
    expect((await logIn('notes')).result.code).toBe(0);
    harness.server.reply(
      toolCallReply({ id: 'call_1', name: 'notes__secret_note', arguments: {} }),
      textReply('42'),
    );
    await cli('-p', 'read the note', '--base-url', harness.server.baseURL);
    expect(toolResult(harness.server.turnRequests().at(-1)!, 'call_1')).toBe('the secret note says 42');

    // Logging in again listens on the same port, so the client registered the first time serves again.
    const firstRedirect = JSON.parse(await readFile(loginPath('notes'), 'utf8')).redirectUrl as string;
    expect((await logIn('notes')).result.code).toBe(0);
    expect(JSON.parse(await readFile(loginPath('notes'), 'utf8')).redirectUrl).toBe(firstRedirect);
    const state = await fixture.state();
    expect(state.registrations).toBe(1);
    expect(state.authorizations).toBe(2);
  });

  test('hostile or unknown names are refused and nothing is written outside mcp-auth', async () => {
    await writeConfig({ mcpServers: { notes: { url: fixture.mcpUrl }, local: { command: 'true' } } });
    for (const name of ['../config', '../../escape', 'a/b', '']) {
      const login = await cli('mcp', 'login', name);
      expect(login.code).not.toBe(0);
      const logout = await cli('mcp', 'logout', name);
      expect(logout.code).not.toBe(0);
    }
    const unknown = await cli('mcp', 'login', 'missing');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no MCP server "missing"/);
    const stdio = await cli('mcp', 'login', 'local');
    expect(stdio.code).toBe(1);
    expect(stdio.stderr).toMatch(/only HTTP servers log in/);
    expect(JSON.parse(await readFile(path.join(harness.sandbox.home, 'config.json'), 'utf8'))).toEqual({
      mcpServers: { notes: { url: fixture.mcpUrl }, local: { command: 'true' } },
    });
    await expect(stat(path.join(harness.sandbox.home, 'mcp-auth'))).rejects.toThrow(/ENOENT/);
    expect((await fixture.state()).registrations).toBe(0);
  });
});
