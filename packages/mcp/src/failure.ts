import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

/**
 * The message of a thrown value with its causes (`fetch failed (connect ECONNREFUSED 127.0.0.1:4000)`):
 * Node's fetch hides the useful part in `cause`.
 */
export function describeFailure(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current !== undefined && current !== null; depth += 1) {
    const text = current instanceof Error ? current.message : typeof current === 'string' ? current : '';
    if (text !== '' && !parts.some((part) => part.includes(text))) parts.push(text);
    current = current instanceof Error ? current.cause : undefined;
  }
  if (error instanceof StreamableHTTPError && error.code !== undefined && error.code > 0) {
    parts.push(`HTTP ${error.code}`);
  }
  if (parts.length === 0) return String(error);
  const [first, ...rest] = parts;
  return rest.length === 0 ? `${first}` : `${first} (${rest.join(': ')})`;
}

/** The server answered 404 to a request of our session: it restarted (or forgot us), and a new session is needed. */
export function isSessionExpired(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.code === 404;
}

/** The SDK gave up waiting for the answer (its own request timeout). */
export function isRequestTimeout(error: unknown): boolean {
  return error instanceof McpError && error.code === ErrorCode.RequestTimeout;
}
