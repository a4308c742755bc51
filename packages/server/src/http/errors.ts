import { type AgentErrorCode, isAgentError } from '@youyou/agent';
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

/** What a client sees of one code: the status of a response that fails with it, and its fixed sentence, if any. */
interface ShownError {
  status: ContentfulStatusCode;
  /**
   * Set for an error whose message is written from outside text (a provider's answer, a storage, a plugin, a
   * bug): the client sees this sentence instead, since such text may hold a key, a path or an internal address.
   * Left out where the runtime wrote the message about the caller's request, so it says what to fix.
   */
  sentence?: string;
}

/**
 * The one policy for what a client sees of an error, in a response or in an event of a stream: every code of
 * an AgentError maps to a status and, where its message is not the caller's to read, a fixed sentence.
 * HttpErrors are the server's own words and keep theirs. Anything else is INTERNAL_ERROR.
 */
const SHOWN: Record<AgentErrorCode, ShownError> = {
  INVALID_INPUT: { status: 400 },
  MODEL_NOT_SUPPORTED: { status: 400 },
  SESSION_NOT_FOUND: { status: 404 },
  SKILL_NOT_FOUND: { status: 404 },
  TOOL_NOT_FOUND: { status: 404 },
  TURN_NOT_FOUND: { status: 404 },
  SESSION_BUSY: { status: 409 },
  TURN_BUSY: { status: 409 },
  SESSION_CLOSED: { status: 409 },
  REQUEST_CANCELLED: { status: 409 },
  MAX_TOOL_CALLS_EXCEEDED: { status: 422 },
  OUTPUT_INVALID: { status: 422 },
  // The budget's own message names what was spent and the limit: the tenant's to read.
  BUDGET_EXCEEDED: { status: 429 },
  // A guardrail's reason may quote what it stopped: a fixed sentence only.
  MODEL_CALL_BLOCKED: { status: 422, sentence: 'a guardrail stopped the model call' },
  TOOL_EXECUTION_ERROR: { status: 502 },
  TOOL_TIMEOUT: { status: 504 },
  PROVIDER_ERROR: { status: 502, sentence: 'the model provider failed; try again' },
  STORAGE_ERROR: { status: 503, sentence: 'the session storage failed; try again later' },
  PLUGIN_ERROR: { status: 500, sentence: 'a plugin failed' },
  MEMORY_ERROR: { status: 500, sentence: 'the memory store failed' },
  COMPACT_ERROR: { status: 500, sentence: 'compacting the conversation failed' },
  NO_MODEL_PROVIDER: { status: 500, sentence: 'the server is not set up to answer this' },
  NAME_CONFLICT: { status: 500, sentence: 'the server is not set up to answer this' },
  SKILL_DEPENDENCY_NOT_MET: { status: 500, sentence: 'the server is not set up to answer this' },
  PLUGIN_INIT_FAILED: { status: 500, sentence: 'the server is not set up to answer this' },
  STORAGE_DUPLICATE: { status: 500, sentence: 'the server is not set up to answer this' },
  INVALID_DEFAULT_MODEL: { status: 500, sentence: 'the server is not set up to answer this' },
  INVALID_CONFIG: { status: 500, sentence: 'the server is not set up to answer this' },
  INTERNAL_ERROR: { status: 500, sentence: 'an unexpected error' },
};

/** What a client sees of anything thrown: the code, the status of a response, the message and whether to retry. */
export interface PublicError {
  status: ContentfulStatusCode;
  code: string;
  message: string;
  retryable: boolean;
}

// An AgentError's own message starts with "[CODE] "; the code travels in its own field.
const MESSAGE_PREFIX = /^\[[A-Z_]+\]\s*/;

const UNEXPECTED: PublicError = {
  status: 500,
  code: 'INTERNAL_ERROR',
  message: 'an unexpected error',
  retryable: false,
};

/** What a client may see of an error, by the one table above: never a stack, a cause or outside text. */
export function publicError(error: unknown): PublicError {
  if (error instanceof HttpError) {
    return {
      status: error.status,
      code: error.code,
      message: error.message,
      retryable: error.status === 429,
    };
  }
  if (!isAgentError(error)) return UNEXPECTED;
  const shown = SHOWN[error.code] ?? SHOWN.INTERNAL_ERROR;
  const message = shown.sentence ?? error.message.replace(MESSAGE_PREFIX, '');
  return { status: shown.status, code: error.code, message, retryable: error.retryable };
}

/** Sends an error as the JSON body every client can rely on, with the headers an HttpError names. */
export function errorResponse(context: Context, error: unknown): Response {
  const { status, code, message } = publicError(error);
  const body: ErrorBody = { error: { code, message } };
  return context.json(body, status, error instanceof HttpError ? { ...error.headers } : {});
}
