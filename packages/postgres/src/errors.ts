import { AgentError, isAgentError } from '@youyou/agent';

/** Socket-level error codes that mean the server could not be reached or the connection dropped. */
const CONNECTION_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
  'ENOTFOUND',
]);

/**
 * SQLSTATEs worth sending again: server shutting down or starting (57P01-57P03), too many connections
 * (53300), out of resources (53xxx), serialization failure and deadlock (40001, 40P01), lock timeout
 * (55P03). Class 08 (connection exception) is matched by its prefix.
 */
const RETRYABLE_SQLSTATES: ReadonlySet<string> = new Set([
  '57P01',
  '57P02',
  '57P03',
  '53000',
  '53100',
  '53200',
  '53300',
  '40001',
  '40P01',
  '55P03',
]);

/** node-postgres reports a dropped or timed-out connection with these messages and no code. */
const CONNECTION_MESSAGES = [
  /connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /not queryable/i,
  /socket hang up/i,
];

function codeOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** True when the failure is a connection problem or a transient server state, so a retry may succeed. */
export function isRetryableDatabaseError(error: unknown): boolean {
  const code = codeOf(error);
  if (code !== undefined) {
    if (CONNECTION_ERROR_CODES.has(code) || RETRYABLE_SQLSTATES.has(code) || code.startsWith('08'))
      return true;
  }
  // Node reports a refused dual-stack connection as an AggregateError of one error per address.
  if (error instanceof AggregateError && error.errors.some(isRetryableDatabaseError)) return true;
  const message = error instanceof Error ? error.message : '';
  return CONNECTION_MESSAGES.some((pattern) => pattern.test(message));
}

/** The text of an error without anything that could be a credential (a URL's password part). */
function safeDetail(error: unknown): string {
  let detail: string;
  if (error instanceof AggregateError && error.errors.length > 0) {
    detail = error.errors.map((item) => (item instanceof Error ? item.message : String(item))).join('; ');
  } else if (error instanceof Error) {
    detail = error.message || error.name;
  } else {
    detail = String(error);
  }
  const code = codeOf(error);
  if (code !== undefined && !detail.includes(code)) detail = `${detail} (${code})`;
  return detail.replace(/(\w+:\/\/[^:/@\s]*:)[^@\s]*@/g, '$1***@');
}

/**
 * Wraps a failure as AgentError STORAGE_ERROR (an AgentError passes through unchanged); `retryable` is
 * true for connection failures and transient server states.
 */
export function storageError(error: unknown, context: string): AgentError {
  if (isAgentError(error)) return error;
  const retryable = isRetryableDatabaseError(error);
  const hint = retryable ? ' (PostgreSQL could not be reached or dropped the connection; try again)' : '';
  return new AgentError({
    code: 'STORAGE_ERROR',
    message: `${context}: ${safeDetail(error)}${hint}`,
    retryable,
    sourceComponent: 'storage',
    cause: error,
  });
}

/** AgentError INVALID_INPUT from the storage. */
export function invalidInput(message: string): AgentError {
  return new AgentError({ code: 'INVALID_INPUT', message, sourceComponent: 'storage' });
}

/** AgentError INVALID_CONFIG for a bad option of `openPostgresStorage`. */
export function invalidConfig(message: string): AgentError {
  return new AgentError({ code: 'INVALID_CONFIG', message, sourceComponent: 'storage' });
}
