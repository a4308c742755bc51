import { type OAuthClientProvider, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/**
 * A method of the embedder's auth provider threw. That is how a provider says it cannot authorize now (a
 * command-line host: "run `app login NAME`"), so its message is what the user reads.
 */
export class AuthProviderError extends Error {
  /** The provider's method (or getter) that threw. */
  readonly method: string;

  constructor(options: { method: string; cause: unknown }) {
    const { cause } = options;
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'AuthProviderError';
    this.method = options.method;
  }
}

/** Tokens and client secrets a provider handed out, per provider: removed from every message about its server. */
const secretsOf = new WeakMap<OAuthClientProvider, Set<string>>();

/** How many secrets are kept per provider (a long session refreshes many times; old tokens stop mattering). */
const MAX_SECRETS = 64;

function remember(provider: OAuthClientProvider, values: readonly unknown[]): void {
  let secrets = secretsOf.get(provider);
  if (secrets === undefined) {
    secrets = new Set();
    secretsOf.set(provider, secrets);
  }
  for (const value of values) if (typeof value === 'string' && value !== '') secrets.add(value);
  while (secrets.size > MAX_SECRETS) secrets.delete(secrets.values().next().value as string);
}

/** The secrets `provider` has handed out or received so far (tokens, client secrets). */
export function knownSecrets(provider: OAuthClientProvider | undefined): string[] {
  return provider === undefined ? [] : [...(secretsOf.get(provider) ?? [])];
}

function secretsIn(value: unknown): unknown[] {
  if (typeof value !== 'object' || value === null) return [];
  const record = value as Record<string, unknown>;
  return [record.access_token, record.refresh_token, record.id_token, record.client_secret];
}

/**
 * The provider as the MCP SDK is given it: every method runs on the embedder's object (getters and private
 * fields keep working), a throw becomes an AuthProviderError, and the tokens and client secrets that pass
 * through are remembered so that messages never show them.
 */
export function watchAuthProvider(provider: OAuthClientProvider): OAuthClientProvider {
  return new Proxy(provider, {
    get(target, key) {
      let value: unknown;
      try {
        value = Reflect.get(target, key, target); // a getter (redirectUrl, clientMetadata) may throw too
      } catch (error) {
        throw new AuthProviderError({ method: String(key), cause: error });
      }
      if (typeof value !== 'function') return value;
      const method = String(key);
      return (...args: unknown[]): unknown => {
        for (const arg of args) remember(target, secretsIn(arg));
        let result: unknown;
        try {
          result = Reflect.apply(value, target, args);
        } catch (error) {
          throw new AuthProviderError({ method, cause: error });
        }
        if (!(result instanceof Promise)) {
          remember(target, secretsIn(result));
          return result;
        }
        return result.then(
          (settled: unknown) => {
            remember(target, secretsIn(settled));
            return settled;
          },
          (error: unknown) => {
            throw new AuthProviderError({ method, cause: error });
          },
        );
      };
    },
  });
}

/**
 * Why a failed request needs the user to authorize (again), or undefined when it failed for another reason:
 * the provider could not authorize (its own message), the SDK started an authorization the user has not
 * finished, the authorization server refused, or the server refused a token it had just been given.
 */
export function authorizationProblem(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth += 1) {
    if (current instanceof AuthProviderError) return current.message;
    if (current instanceof OAuthError) {
      const description = current.message === '' ? '' : ` (${current.message})`;
      return `the authorization server refused: ${current.errorCode}${description}`;
    }
    if (current instanceof UnauthorizedError) {
      return 'the auth provider was sent to authorize (redirectToAuthorization); once the user has, call again';
    }
    if (current instanceof StreamableHTTPError && (current.code === 401 || current.code === 403)) {
      return `the server refused the credentials (HTTP ${current.code})`;
    }
    current = current.cause;
  }
  return undefined;
}

/** `authorizationProblem(error)` for a transport with an auth provider; undefined for every other transport. */
export function authorizationProblemOf(
  transport: { type: string; authProvider?: OAuthClientProvider | undefined },
  error: unknown,
): string | undefined {
  if (transport.type !== 'http' || transport.authProvider === undefined) return undefined;
  return authorizationProblem(error);
}

/** A token endpoint's answer, kept to be replayed: its body read once. */
interface KeptAnswer {
  status: number;
  statusText: string;
  headers: [string, string][];
  body: string;
}

/** Refresh answers by token URL and refresh token; a handful suffice (a refresh token is used once). */
const refreshAnswers = new Map<string, Promise<KeptAnswer>>();
const MAX_REFRESH_ANSWERS = 16;

function refreshKey(url: string | URL, init: RequestInit | undefined): string | undefined {
  if (init?.method !== 'POST' || !(init.body instanceof URLSearchParams)) return undefined;
  if (init.body.get('grant_type') !== 'refresh_token') return undefined;
  const token = init.body.get('refresh_token');
  return token === null ? undefined : `${String(url)} ${token}`;
}

/**
 * A fetch that sends each refresh of one refresh token once. Calls running side by side that all meet a 401
 * after the access token expired each start a refresh with the same refresh token; an authorization server
 * that rotates refresh tokens (OAuth 2.1 asks it to, for public clients) honours the first and refuses the
 * others with invalid_grant, which would look like a revoked login. The later ones get the first one's answer.
 */
export function shareRefreshes(fetch: FetchLike): FetchLike {
  return async (url, init) => {
    const key = refreshKey(url, init);
    if (key === undefined) return fetch(url, init);
    let answer = refreshAnswers.get(key);
    if (answer === undefined) {
      answer = fetch(url, init).then(async (response) => ({
        status: response.status,
        statusText: response.statusText,
        headers: [...response.headers],
        body: await response.text(),
      }));
      refreshAnswers.set(key, answer);
      answer.catch(() => refreshAnswers.delete(key));
      while (refreshAnswers.size > MAX_REFRESH_ANSWERS) {
        refreshAnswers.delete(refreshAnswers.keys().next().value as string);
      }
    }
    const kept = await answer;
    return new Response(kept.body, {
      status: kept.status,
      statusText: kept.statusText,
      headers: kept.headers,
    });
  };
}
