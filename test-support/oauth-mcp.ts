/**
 * Starts oauth-mcp-server.mjs (an MCP server that demands OAuth, and its authorization server) in a child
 * process, and drives its test controls: expire or revoke every token issued so far, read what it saw.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const SERVER = fileURLToPath(new URL('./oauth-mcp-server.mjs', import.meta.url));

/** What the fixture counted and saw. */
export interface OAuthFixtureState {
  registrations: number;
  authorizations: number;
  refreshes: number;
  toolCalls: number;
  /** Tokens revoked through the revocation endpoint, in order. */
  revoked: string[];
  /** Every bearer token the MCP endpoint accepted, in order. */
  bearerTokens: string[];
  /** Every access and refresh token the authorization server issued. */
  issuedTokens: string[];
}

/** A running fixture. */
export interface OAuthFixture {
  /** The MCP endpoint, `http://127.0.0.1:PORT/mcp`. */
  readonly mcpUrl: string;
  /** The authorization server's root. */
  readonly issuerUrl: string;
  /** Every access token issued so far is expired from now on; a refresh gives a working one. */
  expireAccessTokens(): Promise<void>;
  /** Every token issued so far is revoked; only a new login gives working ones. */
  revokeAll(): Promise<void>;
  state(): Promise<OAuthFixtureState>;
  /** Kills the process and waits until it has exited. */
  stop(): Promise<void>;
}

/** Starts the fixture and resolves once both of its servers listen. */
export async function startOAuthFixture(): Promise<OAuthFixture> {
  const child: ChildProcess = spawn(process.execPath, [SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  const ports = await new Promise<[number, number]>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the OAuth fixture exited with ${code} before listening`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /^listening (\d+) (\d+)$/.exec(line);
      if (match) resolve([Number(match[1]), Number(match[2])]);
    });
  });
  const issuerUrl = `http://127.0.0.1:${ports[0]}/`;
  const control = async (path: string, method: 'GET' | 'POST'): Promise<unknown> => {
    const response = await fetch(new URL(path, issuerUrl), { method });
    if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status}`);
    return response.json();
  };
  return {
    mcpUrl: `http://127.0.0.1:${ports[1]}/mcp`,
    issuerUrl,
    expireAccessTokens: async () => void (await control('/test/expire', 'POST')),
    revokeAll: async () => void (await control('/test/revoke', 'POST')),
    state: async () => (await control('/test/state', 'GET')) as OAuthFixtureState,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}
