import {
  auth,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { isAgentError } from '@youyou/agent';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { type OAuthFixture, startOAuthFixture } from '../../../test-support/oauth-mcp.js';
import {
  authorizeMcpServer,
  connectMcpServer,
  type McpServerConnection,
  validateServerConfig,
} from '../src/index.js';
import { call, startHttpFixture, stopHttpFixtures, toolNamed } from './support.js';

const REDIRECT_URL = 'http://127.0.0.1:1/callback';

/**
 * An embedder's provider that keeps everything in memory. `authorizeWith` plays the user: given the
 * authorization URL, it follows it like a browser and returns the code of the redirect; without it the
 * provider cannot ask anyone and throws, as a command-line host would.
 */
class MemoryProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  discovery: OAuthDiscoveryState | undefined;
  authorizationUrl: URL | undefined;
  readonly redirectUrl = REDIRECT_URL;
  readonly clientMetadata: OAuthClientMetadata = {
    client_name: 'youyou test',
    redirect_uris: [REDIRECT_URL],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  interactive = true;

  clientInformation() {
    return this.client;
  }
  saveClientInformation(client: OAuthClientInformationMixed) {
    this.client = client;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    if (!this.interactive) throw new Error('log in first: run `app login files`');
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
    if (scope === 'all' || scope === 'client') this.client = undefined;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}

/** Runs the authorization code flow with the SDK's `auth`, playing the browser with one GET. */
async function logIn(provider: MemoryProvider, serverUrl: string): Promise<void> {
  expect(await auth(provider, { serverUrl })).toBe('REDIRECT');
  const response = await fetch(provider.authorizationUrl!, { redirect: 'manual' });
  const code = new URL(response.headers.get('location')!).searchParams.get('code');
  expect(await auth(provider, { serverUrl, authorizationCode: code! })).toBe('AUTHORIZED');
}

let fixture: OAuthFixture;
const connections: McpServerConnection[] = [];

beforeEach(async () => {
  fixture = await startOAuthFixture();
});
afterEach(async () => {
  await Promise.all(connections.splice(0).map((connection) => connection.close()));
  await fixture.stop();
  await stopHttpFixtures();
});

async function connect(provider: OAuthClientProvider): Promise<McpServerConnection> {
  const connection = await connectMcpServer({
    name: 'files',
    transport: { type: 'http', url: fixture.mcpUrl, authProvider: provider },
  });
  connections.push(connection);
  return connection;
}

describe('an HTTP server that demands OAuth', () => {
  test('a provider with tokens from a login: the bearer token is sent and the tool runs', async () => {
    const provider = new MemoryProvider();
    await logIn(provider, fixture.mcpUrl);
    const { tools } = await connect(provider);
    const output = await call(toolNamed(tools, 'files__secret_note'));
    expect(output).toEqual({ content: 'the secret note says 42', isError: false });
    const state = await fixture.state();
    expect(state.registrations).toBe(1);
    expect(state.toolCalls).toBe(1);
    expect(state.bearerTokens.at(-1)).toBe(provider.saved?.access_token);
  });

  test('an access token that expires between calls is refreshed and the call succeeds', async () => {
    const provider = new MemoryProvider();
    await logIn(provider, fixture.mcpUrl);
    const { tools } = await connect(provider);
    const before = provider.saved?.access_token;
    await fixture.expireAccessTokens();
    const output = await call(toolNamed(tools, 'files__secret_note'));
    expect(output).toEqual({ content: 'the secret note says 42', isError: false });
    const state = await fixture.state();
    expect(state.refreshes).toBe(1);
    expect(provider.saved?.access_token).not.toBe(before);
    expect(state.bearerTokens.at(-1)).toBe(provider.saved?.access_token);
  });

  test('calls side by side after the token expired share one refresh (refresh tokens rotate)', async () => {
    const provider = new MemoryProvider();
    await logIn(provider, fixture.mcpUrl);
    const { tools } = await connect(provider);
    await fixture.expireAccessTokens();
    const note = toolNamed(tools, 'files__secret_note');
    const outputs = await Promise.all([call(note), call(note), call(note)]);
    for (const output of outputs)
      expect(output).toEqual({ content: 'the secret note says 42', isError: false });
    expect((await fixture.state()).refreshes).toBe(1);
  });

  test('revoked tokens: the call result is the provider’s one line, without any token', async () => {
    const provider = new MemoryProvider();
    await logIn(provider, fixture.mcpUrl);
    const { tools } = await connect(provider);
    const issued = (await fixture.state()).issuedTokens;
    provider.interactive = false;
    await fixture.revokeAll();
    const output = await call(toolNamed(tools, 'files__secret_note'));
    expect(output).toEqual({
      content: 'MCP server "files" needs authorization: log in first: run `app login files`',
      isError: true,
    });
    for (const token of issued) expect(output.content).not.toContain(token);
    expect((await fixture.state()).toolCalls).toBe(0);
    // A new login (here the embedder's own flow): the next call reconnects with it.
    provider.interactive = true;
    await logIn(provider, fixture.mcpUrl);
    expect(await call(toolNamed(tools, 'files__secret_note'))).toEqual({
      content: 'the secret note says 42',
      isError: false,
    });
  });

  test('no login and a provider that cannot ask: AUTHORIZATION_REQUIRED in one line', async () => {
    const provider = new MemoryProvider();
    provider.interactive = false;
    const error = await connect(provider).catch((caught: unknown) => caught);
    expect(isAgentError(error) && error.code).toBe('AUTHORIZATION_REQUIRED');
    expect((error as Error).message).toBe(
      `[AUTHORIZATION_REQUIRED] MCP server "files" (url ${fixture.mcpUrl}) needs authorization: log in first: run \`app login files\``,
    );
    // Discovery and registration happened (the provider had no client yet); no token was issued.
    expect((await fixture.state()).issuedTokens).toEqual([]);
  });

  test('an interactive provider is sent to authorize; after the login the next connect works', async () => {
    const provider = new MemoryProvider();
    const error = await connect(provider).catch((caught: unknown) => caught);
    expect(isAgentError(error) && error.code).toBe('AUTHORIZATION_REQUIRED');
    expect(provider.authorizationUrl?.searchParams.get('code_challenge_method')).toBe('S256');
    expect(provider.authorizationUrl?.searchParams.get('resource')).toBe(fixture.mcpUrl);
    const response = await fetch(provider.authorizationUrl!, { redirect: 'manual' });
    const code = new URL(response.headers.get('location')!).searchParams.get('code');
    expect(await auth(provider, { serverUrl: fixture.mcpUrl, authorizationCode: code! })).toBe('AUTHORIZED');
    const { tools } = await connect(provider);
    expect((await call(toolNamed(tools, 'files__secret_note'))).content).toBe('the secret note says 42');
  });

  test('validateServerConfig refuses an authProvider that is not a provider', () => {
    expect(() =>
      validateServerConfig({
        name: 'x',
        transport: { type: 'http', url: 'http://127.0.0.1/mcp', authProvider: {} },
      }),
    ).toThrow(/authProvider must be an OAuthClientProvider/);
  });
});

describe('authorizeMcpServer', () => {
  test('probes, registers, sends the user to authorize with PKCE and state, and saves the tokens', async () => {
    const provider = new MemoryProvider();
    const outcome = await authorizeMcpServer({
      url: fixture.mcpUrl,
      provider,
      waitForCode: async () => {
        const response = await fetch(provider.authorizationUrl!, { redirect: 'manual' });
        return new URL(response.headers.get('location')!).searchParams.get('code')!;
      },
    });
    expect(outcome).toBe('authorized');
    expect(provider.authorizationUrl?.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    const state = await fixture.state();
    expect(state.registrations).toBe(1);
    expect(state.issuedTokens).toEqual([provider.saved?.access_token, provider.saved?.refresh_token]);
    expect(provider.discovery?.authorizationServerUrl).toBe(fixture.issuerUrl);
  });

  test('a server that answers without a token needs no login', async () => {
    const plain = await startHttpFixture();
    const provider = new MemoryProvider();
    const outcome = await authorizeMcpServer({
      url: plain.url,
      provider,
      waitForCode: () => Promise.reject(new Error('not asked')),
    });
    expect(outcome).toBe('not-required');
    expect(provider.authorizationUrl).toBeUndefined();
  });
});
