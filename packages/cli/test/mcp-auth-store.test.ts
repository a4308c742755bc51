import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  loginFile,
  loginFolder,
  type McpLogin,
  readLogin,
  SessionAuthProvider,
  writeLogin,
} from '../src/runtime/mcp-auth.js';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'youyou-mcp-auth-'));
});
afterEach(() => rm(home, { recursive: true, force: true }));

const LOGIN: McpLogin = {
  version: 1,
  serverUrl: 'https://mcp.example.com/mcp',
  redirectUrl: 'http://127.0.0.1:4567/callback',
  client: { client_id: 'client-1', redirect_uris: ['http://127.0.0.1:4567/callback'] },
  tokens: { access_token: 'access-0123456789', token_type: 'Bearer', refresh_token: 'refresh-0123456789' },
};

describe('the login files of MCP servers', () => {
  test('a name that could leave the folder is refused', () => {
    for (const name of ['../config', '..', 'a/b', 'a\\b', '', 'x'.repeat(33), 'nul\u0000', '.hidden']) {
      expect(() => loginFile(home, name)).toThrow(/is not a name an MCP server can have/);
    }
    expect(loginFile(home, 'git-hub_2')).toBe(path.join(loginFolder(home), 'git-hub_2.json'));
  });

  test('written 0600 in a folder made 0700, through a temporary file that does not stay', async () => {
    await mkdir(loginFolder(home), { mode: 0o755 });
    await chmod(loginFolder(home), 0o755);
    const file = loginFile(home, 'web');
    writeLogin(file, LOGIN);
    writeLogin(file, { ...LOGIN, redirectUrl: 'http://127.0.0.1:9999/callback' });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(loginFolder(home))).mode & 0o777).toBe(0o700);
    expect(await readdir(loginFolder(home))).toEqual(['web.json']);
    expect(readLogin(file)?.redirectUrl).toBe('http://127.0.0.1:9999/callback');
  });

  test('a session provider gives the tokens only to the URL they were saved for', () => {
    writeLogin(loginFile(home, 'web'), LOGIN);
    const same = new SessionAuthProvider({ home, name: 'web', serverUrl: LOGIN.serverUrl });
    expect(same.tokens()?.access_token).toBe('access-0123456789');
    const moved = new SessionAuthProvider({ home, name: 'web', serverUrl: 'https://evil.example/mcp' });
    expect(moved.tokens()).toBeUndefined();
    expect(() => moved.discoveryState()).toThrow('not logged in; run `youyou mcp login web`');
  });

  test('refused tokens are not offered again, and the advice says the login was refused', () => {
    writeLogin(loginFile(home, 'web'), LOGIN);
    const provider = new SessionAuthProvider({ home, name: 'web', serverUrl: LOGIN.serverUrl });
    provider.invalidateCredentials('tokens');
    expect(provider.tokens()).toBeUndefined();
    expect(() => provider.redirectToAuthorization()).toThrow(
      'the saved login was refused; run `youyou mcp login web`',
    );
    // A new login by another process is taken at once.
    writeLogin(loginFile(home, 'web'), {
      ...LOGIN,
      tokens: { access_token: 'new-access-token', token_type: 'Bearer', refresh_token: 'new-refresh' },
    });
    expect(provider.tokens()?.access_token).toBe('new-access-token');
  });

  test('a damaged file is reported with the advice to log in again', async () => {
    await mkdir(loginFolder(home), { recursive: true });
    await writeFile(loginFile(home, 'web'), '{ not json');
    const provider = new SessionAuthProvider({ home, name: 'web', serverUrl: LOGIN.serverUrl });
    expect(() => provider.tokens()).toThrow(/its saved login cannot be read .*run `youyou mcp login web`/);
  });
});
