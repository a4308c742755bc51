import { isAgentError } from '@youyou/agent';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** The body of every error response: a stable code and a message that says what to fix. */
export interface ErrorBody {
  error: { code: string; message: string };
}

/** A request the server refuses with an HTTP-level code (UNAUTHORIZED, NOT_FOUND, PAYLOAD_TOO_LARGE, …). */
export class HttpError extends Error {
  readonly status: ContentfulStatusCode;
  readonly code: string;
  /** Headers the error response carries (`Retry-After` of a 429). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(options: {
    status: ContentfulStatusCode;
    code: string;
    message: string;
    headers?: Record<string, string>;
  }) {
    super(options.message);
    this.status = options.status;
    this.code = options.code;
    this.headers = options.headers ?? {};
  }
}

// AgentError codes a client caused or can act on keep their message; every other failure is an internal
// error whose message is not shown, so no provider detail, path or key reaches a response.
const CLIENT_STATUS: Record<string, ContentfulStatusCode> = {
  INVALID_INPUT: 400,
  SESSION_NOT_FOUND: 404,
  SESSION_BUSY: 409,
  TURN_BUSY: 409,
  SESSION_CLOSED: 409,
  MODEL_NOT_SUPPORTED: 400,
};

/** Maps anything thrown while answering a request to a status and an error body without stack or cause. */
export function toErrorResponse(error: unknown): { status: ContentfulStatusCode; body: ErrorBody } {
  if (error instanceof HttpError) {
    return { status: error.status, body: { error: { code: error.code, message: error.message } } };
  }
  if (isAgentError(error)) {
    const status = CLIENT_STATUS[error.code];
    if (status !== undefined)
      return { status, body: { error: { code: error.code, message: error.message } } };
    if (error.code === 'STORAGE_ERROR') {
      return {
        status: 503,
        body: { error: { code: error.code, message: 'the session storage failed; retry later' } },
      };
    }
  }
  return { status: 500, body: { error: { code: 'INTERNAL_ERROR', message: 'the server failed to answer' } } };
}

/** Sends an error as the JSON body every client can rely on, with the headers an HttpError names. */
export function errorResponse(context: Context, error: unknown): Response {
  const { status, body } = toErrorResponse(error);
  return context.json(body, status, error instanceof HttpError ? { ...error.headers } : {});
}
