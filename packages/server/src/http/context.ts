import type { Context, Hono } from 'hono';

/** What the auth middleware leaves on every request behind it: the tenant the token belongs to. */
export interface TenantEnv {
  Variables: { tenant: string };
}

/** The hono app of the server, whose routes behind the auth middleware read `context.get('tenant')`. */
export type TenantApp = Hono<TenantEnv>;

/** The context of a request behind the auth middleware. */
export type TenantContext = Context<TenantEnv>;
