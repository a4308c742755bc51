/** Turns whatever an AI SDK model threw or streamed as an `error` part into an AgentError PROVIDER_ERROR. */
import { APICallError } from '@ai-sdk/provider';
import { AgentError, isAgentError } from '@youyou/agent';

/** What the server says when the prompt does not fit the model's context window, across vendors. */
const CONTEXT_LENGTH_PATTERN =
  /context[ _-]?length|context[ _-]?window|too many tokens|prompt is too long|maximum context|input is too long/i;

/** Error texts of transient overloads that vendors send without an HTTP status (e.g. inside an SSE stream). */
const TRANSIENT_PATTERN =
  /overloaded|rate[ _-]?limit|too many requests|server[ _-]?error|api_error|service unavailable|internal error|temporarily unavailable/i;

/** Codes of a connection that dropped or never opened; sending again may work. */
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ENOTFOUND',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

/** Where the failure happened, for the message. */
export interface ErrorContext {
  providerId: string;
  modelId: string;
}

/** Wraps a thrown value or an `error` stream part as AgentError PROVIDER_ERROR with `retryable` and `contextLengthExceeded`. */
export function toProviderError(error: unknown, context: ErrorContext): AgentError {
  if (isAgentError(error)) return error;
  const status = statusOf(error);
  const text = errorText(error);
  const contextLengthExceeded = status === 413 || CONTEXT_LENGTH_PATTERN.test(text);
  const retryable = !contextLengthExceeded && isRetryable(error, status, text);
  const statusNote = status === undefined ? '' : ` (HTTP ${status})`;
  const hint = contextLengthExceeded ? ' — the prompt is too long for the model’s context window' : '';
  return new AgentError({
    code: 'PROVIDER_ERROR',
    message: `provider '${context.providerId}', model '${context.modelId}'${statusNote}: ${redact(describe(error))}${hint}`,
    retryable,
    contextLengthExceeded,
    cause: error,
  });
}

function isRetryable(error: unknown, status: number | undefined, text: string): boolean {
  if (APICallError.isInstance(error) && error.isRetryable) return true;
  if (status !== undefined) return status === 408 || status === 429 || status >= 500;
  if (isNetworkFailure(error)) return true;
  return TRANSIENT_PATTERN.test(text);
}

/** A dropped connection or a request that timed out, as Node's fetch (undici) reports them. */
function isNetworkFailure(error: unknown): boolean {
  let current: unknown = error;
  // The network code often sits on the `cause` of a `TypeError: fetch failed`.
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth += 1) {
    const record = current as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
    if (typeof record.code === 'string' && NETWORK_CODES.has(record.code)) return true;
    if (record.name === 'TimeoutError') return true;
    if (
      record.name === 'TypeError' &&
      typeof record.message === 'string' &&
      /fetch failed|terminated|network/i.test(record.message)
    ) {
      return true;
    }
    current = record.cause;
  }
  return false;
}

/** The HTTP status of an APICallError, or a `status`/`statusCode` field of a plain error object. */
function statusOf(error: unknown): number | undefined {
  if (APICallError.isInstance(error)) return error.statusCode;
  if (typeof error !== 'object' || error === null) return undefined;
  const record = error as { status?: unknown; statusCode?: unknown };
  const status = record.statusCode ?? record.status;
  return typeof status === 'number' ? status : undefined;
}

/** Everything the error says (message, response body, a streamed error object), to match patterns against. */
function errorText(error: unknown): string {
  const parts: string[] = [describe(error)];
  if (APICallError.isInstance(error) && error.responseBody !== undefined) parts.push(error.responseBody);
  if (error instanceof Error && error.cause !== undefined) parts.push(describe(error.cause));
  return parts.join('\n');
}

/** A readable one-line description; streamed error parts are often plain objects like `{ type, message }`. */
function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null) {
    try {
      return JSON.stringify(error);
    } catch {
      return String(error);
    }
  }
  return String(error);
}

/** Servers sometimes echo (part of) the API key in an error; it must never reach an event or a log. */
function redact(text: string): string {
  return text
    .replace(/\b(sk|pk|rk)-[A-Za-z0-9_*-]{6,}/g, '[redacted]')
    .replace(/Bearer\s+\S+/gi, 'Bearer [redacted]');
}
