// An MCP server that demands OAuth, with its own authorization server, for the OAuth tests of @youyou/mcp
// and the CLI. Both are built from the MCP SDK's server-side auth pieces (`mcpAuthRouter` with dynamic client
// registration, PKCE and refresh; `requireBearerAuth` in front of the MCP endpoint), on two loopback ports
// so that the resource and the authorization server are different origins, as in real deployments.
//
//   node oauth-mcp-server.mjs      prints `listening <authPort> <mcpPort>` once both accept connections
//
// The authorization server approves every authorization request at once (the test plays the browser: a GET
// of the authorization URL is answered with the redirect to the client's callback). Refresh tokens rotate.
// Test controls on the authorization server's port:
//   POST /test/expire   every access token issued so far counts as expired from now on (a refresh fixes it)
//   POST /test/revoke   every token issued so far is revoked (only a new login fixes it)
//   GET  /test/state    { registrations, authorizations, refreshes, toolCalls, revoked, bearerTokens, issuedTokens }
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { InvalidGrantError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthMetadataRouter,
  mcpAuthRouter,
} from '@modelcontextprotocol/sdk/server/auth/router.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import express from 'express';

const LIFETIME_SECONDS = 3600;
const secret = (prefix) => `${prefix}_${randomBytes(18).toString('base64url')}`;

const state = {
  registrations: 0,
  authorizations: 0,
  refreshes: 0,
  toolCalls: 0,
  /** Tokens revoked through the revocation endpoint (RFC 7009), in order. */
  revoked: [],
  /** Every bearer token the MCP endpoint accepted, in order. */
  bearerTokens: [],
  /** Every access and refresh token issued, so a test can look for them where they must not be. */
  issuedTokens: [],
};

const clients = new Map();
/** code → { clientId, challenge, redirectUri } */
const codes = new Map();
/** access token → { clientId, expired, revoked } */
const accessTokens = new Map();
/** refresh token → { clientId, used, revoked } */
const refreshTokens = new Map();

function issueTokens(clientId) {
  const access = secret('at');
  const refresh = secret('rt');
  accessTokens.set(access, { clientId, expired: false, revoked: false });
  refreshTokens.set(refresh, { clientId, used: false, revoked: false });
  state.issuedTokens.push(access, refresh);
  return { access_token: access, token_type: 'Bearer', expires_in: LIFETIME_SECONDS, refresh_token: refresh };
}

/** An OAuthServerProvider that approves every request: the browser step of a test is one GET. */
const provider = {
  clientsStore: {
    getClient: (clientId) => clients.get(clientId),
    registerClient: (client) => {
      state.registrations += 1;
      const registered = {
        ...client,
        client_id: secret('client'),
        client_id_issued_at: Math.floor(Date.now() / 1000),
      };
      clients.set(registered.client_id, registered);
      return registered;
    },
  },
  async authorize(client, params, response) {
    state.authorizations += 1;
    const code = secret('code');
    codes.set(code, {
      clientId: client.client_id,
      challenge: params.codeChallenge,
      redirectUri: params.redirectUri,
    });
    const target = new URL(params.redirectUri);
    target.searchParams.set('code', code);
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    response.redirect(302, target.href);
  },
  async challengeForAuthorizationCode(_client, code) {
    const entry = codes.get(code);
    if (entry === undefined) throw new InvalidGrantError('unknown authorization code');
    return entry.challenge;
  },
  async exchangeAuthorizationCode(client, code) {
    const entry = codes.get(code);
    if (entry === undefined || entry.clientId !== client.client_id) {
      throw new InvalidGrantError('unknown authorization code');
    }
    codes.delete(code);
    return issueTokens(client.client_id);
  },
  async exchangeRefreshToken(client, refreshToken) {
    const entry = refreshTokens.get(refreshToken);
    if (entry === undefined || entry.revoked || entry.used || entry.clientId !== client.client_id) {
      throw new InvalidGrantError('the refresh token is not valid');
    }
    entry.used = true; // rotated: each refresh token works once
    state.refreshes += 1;
    return issueTokens(client.client_id);
  },
  async revokeToken(client, request) {
    const entry = accessTokens.get(request.token) ?? refreshTokens.get(request.token);
    if (entry === undefined || entry.clientId !== client.client_id) return; // RFC 7009: unknown tokens are fine
    entry.revoked = true;
    state.revoked.push(request.token);
  },
  async verifyAccessToken(token) {
    const entry = accessTokens.get(token);
    if (entry === undefined || entry.revoked) throw new InvalidTokenError('the access token is not valid');
    const now = Math.floor(Date.now() / 1000);
    return {
      token,
      clientId: entry.clientId,
      scopes: [],
      expiresAt: entry.expired ? now - 1 : now + LIFETIME_SECONDS,
    };
  },
};

function listen(app) {
  return new Promise((resolve) => {
    const server = createServer(app);
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });
}

const authApp = express();
const mcpApp = express();
const [authPort, mcpPort] = await Promise.all([listen(authApp), listen(mcpApp)]);
const issuerUrl = new URL(`http://127.0.0.1:${authPort}/`);
const mcpUrl = new URL(`http://127.0.0.1:${mcpPort}/mcp`);
const noLimit = { rateLimit: false };

authApp.post('/test/expire', (_request, response) => {
  for (const entry of accessTokens.values()) entry.expired = true;
  response.json({ ok: true });
});
authApp.post('/test/revoke', (_request, response) => {
  for (const entry of accessTokens.values()) entry.revoked = true;
  for (const entry of refreshTokens.values()) entry.revoked = true;
  response.json({ ok: true });
});
authApp.get('/test/state', (_request, response) => response.json(state));
authApp.use(
  mcpAuthRouter({
    provider,
    issuerUrl,
    resourceServerUrl: mcpUrl,
    authorizationOptions: noLimit,
    tokenOptions: noLimit,
    clientRegistrationOptions: noLimit,
    revocationOptions: noLimit,
  }),
);

const oauthMetadata = {
  issuer: issuerUrl.href,
  authorization_endpoint: new URL('/authorize', issuerUrl).href,
  token_endpoint: new URL('/token', issuerUrl).href,
  registration_endpoint: new URL('/register', issuerUrl).href,
  response_types_supported: ['code'],
  code_challenge_methods_supported: ['S256'],
  grant_types_supported: ['authorization_code', 'refresh_token'],
  token_endpoint_auth_methods_supported: ['client_secret_post', 'none'],
};
mcpApp.use(mcpAuthMetadataRouter({ oauthMetadata, resourceServerUrl: mcpUrl }));
mcpApp.use(
  '/mcp',
  requireBearerAuth({
    verifier: provider,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
  }),
);
mcpApp.post('/mcp', express.json(), async (request, response) => {
  state.bearerTokens.push(request.auth.token);
  const server = new McpServer({ name: 'oauth-fixture', version: '1.0.0' });
  server.registerTool(
    'secret_note',
    { description: 'Reads the note only a logged-in user may read.', annotations: { readOnlyHint: true } },
    async () => {
      state.toolCalls += 1;
      return { content: [{ type: 'text', text: 'the secret note says 42' }] };
    },
  );
  // Stateless: each POST is answered by a server of its own, so no session outlives a token.
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  response.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(request, response, request.body);
});
mcpApp.all('/mcp', (_request, response) => response.status(405).end());

process.stdout.write(`listening ${authPort} ${mcpPort}\n`);
