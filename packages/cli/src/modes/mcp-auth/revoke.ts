import type { McpLogin } from '../../runtime/mcp-auth.js';

/** The longest logout waits for the authorization server. */
const REVOKE_TIMEOUT_MS = 10_000;

/** What `revokeLogin` achieved: revoked, nothing to revoke with (no endpoint), or why it failed. */
export type RevokeOutcome = { revoked: true } | { revoked: false; reason: string };

/**
 * Revokes the login's refresh and access tokens at its authorization server (RFC 7009), when the server's
 * metadata names a revocation endpoint. The client authenticates as it registered (its client_id, and the
 * secret with client_secret_post when it got one). Tokens are sent only to an http(s) endpoint.
 */
export async function revokeLogin(login: McpLogin): Promise<RevokeOutcome> {
  // Both metadata kinds (OAuth, OpenID) may carry it; the stored file is read as it was written.
  const metadata = login.discovery?.authorizationServerMetadata as
    | { revocation_endpoint?: unknown }
    | undefined;
  const endpoint = metadata?.revocation_endpoint;
  const client = login.client;
  if (typeof endpoint !== 'string' || client === undefined || login.tokens === undefined) {
    return { revoked: false, reason: 'the authorization server offers no revocation' };
  }
  if (!URL.canParse(endpoint) || !/^https?:$/.test(new URL(endpoint).protocol)) {
    return { revoked: false, reason: 'the revocation endpoint is not an http(s) URL' };
  }
  const tokens: [string, string][] = [];
  if (login.tokens.refresh_token !== undefined) tokens.push([login.tokens.refresh_token, 'refresh_token']);
  tokens.push([login.tokens.access_token, 'access_token']);
  for (const [token, hint] of tokens) {
    const body = new URLSearchParams({ token, token_type_hint: hint, client_id: client.client_id });
    if (client.client_secret !== undefined) body.set('client_secret', client.client_secret);
    let response: Response;
    try {
      response = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body,
        redirect: 'error',
        signal: AbortSignal.timeout(REVOKE_TIMEOUT_MS),
      });
    } catch (error) {
      return {
        revoked: false,
        reason: `the authorization server could not be reached (${messageOf(error)})`,
      };
    }
    await response.body?.cancel();
    if (!response.ok)
      return { revoked: false, reason: `the authorization server answered HTTP ${response.status}` };
  }
  return { revoked: true };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
