import type { Context } from 'hono';
import { HttpError } from './errors.js';

/** The request's JSON body as an object; an empty body is `{}`. INVALID_INPUT (400) for anything else. */
export async function readJsonObject(context: Context): Promise<Record<string, unknown>> {
  const text = await context.req.text();
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError({
      status: 400,
      code: 'INVALID_INPUT',
      message: 'the request body is not valid JSON',
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HttpError({
      status: 400,
      code: 'INVALID_INPUT',
      message: 'the request body must be a JSON object',
    });
  }
  return value as Record<string, unknown>;
}

/** Throws INVALID_INPUT when the body has a key not in `allowed`, naming it. */
export function onlyKeys(body: Record<string, unknown>, allowed: readonly string[]): void {
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) {
      throw new HttpError({
        status: 400,
        code: 'INVALID_INPUT',
        message: `unknown field '${key.slice(0, 64)}'; this route takes ${allowed.join(', ') || 'no fields'}`,
      });
    }
  }
}

/** An optional string field; INVALID_INPUT when it is there and not a string. */
export function optionalString(body: Record<string, unknown>, key: string): string | undefined {
  const value = body[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    throw new HttpError({ status: 400, code: 'INVALID_INPUT', message: `'${key}' must be a string` });
  }
  return value;
}

/** A non-negative integer cursor from a header or query value; INVALID_INPUT when it is not one. */
export function parseCursor(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^\d{1,16}$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new HttpError({
      status: 400,
      code: 'INVALID_INPUT',
      message: `${name} must be an event sequence (0 or more)`,
    });
  }
  return Number(value);
}
