import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import { HttpError } from './errors.js';

/** How bearer tokens map to tenants: a static map, or a hook that answers the tenant (or null to refuse). */
export type ServerAuth =
  | { tokens: Readonly<Record<string, string>> }
  | { verify: (token: string) => string | null | undefined | Promise<string | null | undefined> };

const TENANT_PATTERN = /^[A-Za-z0-9._:@-]{1,128}$/;

/** Answers the tenant of a token, or undefined. */
export type TokenResolver = (token: string) => Promise<string | null | undefined>;

function digest(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * The resolver of an auth option. Static tokens are looked up by their SHA-256, so the time a lookup takes
 * tells nothing about how much of a real token a guess got right.
 */
export function tokenResolver(auth: ServerAuth): TokenResolver {
  if ('verify' in auth) {
    return async (token) => {
      try {
        return await auth.verify(token);
      } catch {
        return undefined;
      }
    };
  }
  const byDigest = new Map(Object.entries(auth.tokens).map(([token, tenant]) => [digest(token), tenant]));
  return async (token) => byDigest.get(digest(token));
}

/** The tenant of the request's bearer token; UNAUTHORIZED (401) when there is none or it is not known. */
export async function authenticate(resolve: TokenResolver, context: Context): Promise<string> {
  const header = context.req.header('authorization');
  const match = header === undefined ? null : /^Bearer +([^\s]+)\s*$/i.exec(header);
  const token = match?.[1];
  if (token === undefined) {
    throw new HttpError({
      status: 401,
      code: 'UNAUTHORIZED',
      message: 'send an Authorization: Bearer <token> header',
    });
  }
  const tenant = await resolve(token);
  if (typeof tenant !== 'string' || !TENANT_PATTERN.test(tenant)) {
    throw new HttpError({ status: 401, code: 'UNAUTHORIZED', message: 'the bearer token is not valid' });
  }
  return tenant;
}

/** Checks the shape of an auth option at createServer, so a typo fails at start-up, not per request. */
export function checkAuth(auth: unknown): ServerAuth {
  if (typeof auth === 'object' && auth !== null) {
    if ('verify' in auth && typeof auth.verify === 'function') return auth as ServerAuth;
    if ('tokens' in auth && typeof auth.tokens === 'object' && auth.tokens !== null) {
      const entries = Object.entries(auth.tokens);
      if (entries.length === 0) throw new TypeError('auth.tokens maps no token to a tenant');
      for (const [token, tenant] of entries) {
        if (token === '' || /\s/.test(token))
          throw new TypeError('auth.tokens has an empty token or one with spaces');
        if (typeof tenant !== 'string' || !TENANT_PATTERN.test(tenant)) {
          throw new TypeError('auth.tokens maps a token to a tenant that is not 1-128 of [A-Za-z0-9._:@-]');
        }
      }
      return auth as ServerAuth;
    }
  }
  throw new TypeError('auth must be { tokens: { "<token>": "<tenant>" } } or { verify(token) }');
}
