import {
  auth,
  extractWWWAuthenticateParams,
  type OAuthClientProvider,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { AgentError } from '@youyou/agent';
import { authorizationProblem, knownSecrets, watchAuthProvider } from './auth.js';
import { describeFailure } from './failure.js';

/** What `authorizeMcpServer` takes. */
export interface AuthorizeOptions {
  /** The server's MCP endpoint. */
  url: string;
  /**
   * The provider whose `redirectToAuthorization(url)` sends the user to authorize (opens a browser, prints the
   * URL), and whose `saveClientInformation` and `saveTokens` store what the flow yields.
   */
  provider: OAuthClientProvider;
  /** Resolves with the `code` of the redirect back to the provider's `redirectUrl` (its `state` checked). */
  waitForCode: () => Promise<string>;
}

/** How `authorizeMcpServer` ended. */
export type AuthorizeOutcome = 'authorized' | 'not-required';

/** The `initialize` request the server is probed with: its 401 names the protected-resource metadata. */
const PROBE = {
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: {
    protocolVersion: LATEST_PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: { name: 'youyou-agent', version: '0.1.0' },
  },
};

/**
 * Runs the MCP authorization flow for one HTTP server with the MCP SDK: an unauthenticated `initialize`
 * whose 401 names the protected-resource metadata and scope (`not-required` when the server answers without
 * one), discovery of the authorization server, dynamic client registration when the provider has no client,
 * the authorization request with PKCE (`redirectToAuthorization`), then the code exchanged for tokens, which
 * the provider saves. Rejects with AUTHORIZATION_REQUIRED saying what failed; tokens never appear in it.
 */
export async function authorizeMcpServer(options: AuthorizeOptions): Promise<AuthorizeOutcome> {
  const { url, provider } = options;
  const watched = watchAuthProvider(provider);
  const failed = (error: unknown): AgentError => {
    const detail = authorizationProblem(error) ?? describeFailure(error);
    const target = new URL(url);
    let message = `MCP server at ${target.origin}${target.pathname} could not be authorized: ${detail}`;
    for (const secret of knownSecrets(provider)) {
      if (secret.length >= 8) message = message.split(secret).join('[redacted]');
    }
    return new AgentError({ code: 'AUTHORIZATION_REQUIRED', sourceComponent: 'tool', message, cause: error });
  };
  let challenge: Awaited<ReturnType<typeof probe>>;
  try {
    challenge = await probe(url);
    if (challenge === undefined) return 'not-required';
    if ((await auth(watched, { serverUrl: url, ...challenge })) === 'AUTHORIZED') return 'authorized';
  } catch (error) {
    throw failed(error);
  }
  // The caller's own failure (no answer from the browser) is passed on as it is.
  const authorizationCode = await options.waitForCode();
  try {
    await auth(watched, { serverUrl: url, authorizationCode, ...challenge });
  } catch (error) {
    throw failed(error);
  }
  return 'authorized';
}

/** The WWW-Authenticate hints of the server's 401, or undefined when it answers without asking for a token. */
async function probe(url: string): Promise<{ resourceMetadataUrl?: URL; scope?: string } | undefined> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
    },
    body: JSON.stringify(PROBE),
    redirect: 'manual',
  });
  await response.body?.cancel();
  if (response.status !== 401) {
    const session = response.headers.get('mcp-session-id');
    // The server opened a session for the probe: end it rather than leave it to time out.
    if (response.ok && session !== null) {
      await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': session } })
        .then((ended) => ended.body?.cancel())
        .catch(() => undefined);
    }
    if (response.ok) return undefined;
    throw new Error(`the server answered the first request with HTTP ${response.status}`);
  }
  const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
  return {
    ...(resourceMetadataUrl === undefined ? {} : { resourceMetadataUrl }),
    ...(scope === undefined ? {} : { scope }),
  };
}
