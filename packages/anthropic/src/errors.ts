import { APIConnectionError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import { AgentError, isAgentError } from '@youyou/agent';

/** Removes secrets (the API key) from a text that may reach an error, an event or a log. */
export type Scrubber = (text: string) => string;

/** A scrubber that replaces every occurrence of each secret with `[redacted]`. */
export function makeScrubber(secrets: readonly (string | undefined)[]): Scrubber {
  const present = secrets.filter((secret): secret is string => secret !== undefined && secret.length >= 4);
  return (text) => present.reduce((result, secret) => result.split(secret).join('[redacted]'), text);
}

/** What the API says when the prompt does not fit the model's context window. */
const CONTEXT_LENGTH_PATTERN =
  /prompt is too long|exceeds? (the )?(model'?s? )?context (window|limit|length)|context (window|length) (is )?exceeded|too many (input )?tokens|input length and `?max_tokens`? exceed/i;

/** `error.type` values of an SSE `error` event that a later request may not meet again. */
const RETRYABLE_ERROR_TYPES = new Set(['overloaded_error', 'rate_limit_error', 'api_error', 'timeout_error']);

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/** The API's own message of an APIError (`error.message` of the body) or the SDK's text. */
function apiMessageOf(error: APIError): string {
  return error.apiMessage ?? error.message;
}

/** A copy of the SDK error fit to keep as `cause`: same name, scrubbed message, no headers or body. */
function scrubbedCause(error: unknown, scrub: Scrubber): Error {
  const cause = new Error(scrub(messageOf(error)));
  cause.name = error instanceof Error ? error.name : 'Error';
  return cause;
}

/** The error of a request that the caller's signal cancelled. */
export function cancelledError(): AgentError {
  return new AgentError({
    code: 'REQUEST_CANCELLED',
    message: 'the Messages request was cancelled',
    sourceComponent: 'provider',
  });
}

/** A PROVIDER_ERROR with a scrubbed message and cause. */
export function providerError(options: {
  message: string;
  retryable: boolean;
  scrub: Scrubber;
  cause?: unknown;
  contextLengthExceeded?: boolean;
}): AgentError {
  return new AgentError({
    code: 'PROVIDER_ERROR',
    message: options.scrub(options.message),
    retryable: options.retryable,
    contextLengthExceeded: options.contextLengthExceeded ?? false,
    ...(options.cause === undefined ? {} : { cause: scrubbedCause(options.cause, options.scrub) }),
  });
}

/**
 * Maps whatever the SDK threw to an AgentError: PROVIDER_ERROR, retryable for 429, 5xx (529 overloaded
 * included), a retryable `error` event and a dropped connection; `contextLengthExceeded` for a 400/413 that
 * says the prompt is too long. The SDK has already retried what it could before the stream started.
 */
export function toAgentError(options: {
  error: unknown;
  scrub: Scrubber;
  signal: AbortSignal;
  started: boolean;
}): AgentError {
  const { error, scrub } = options;
  if (options.signal.aborted || error instanceof APIUserAbortError) return cancelledError();
  if (error instanceof APIError) {
    const status = error.status;
    const detail = apiMessageOf(error);
    if (error instanceof APIConnectionError) {
      // The request never got an answer (the SDK retried it already).
      return providerError({
        message: `could not reach the Messages API: ${describeConnectionError(error)}`,
        retryable: true,
        scrub,
        cause: error,
      });
    }
    if (status === undefined) {
      // An `error` event inside the stream: no HTTP status, only the error's type.
      const type = error.type ?? 'an error';
      return providerError({
        message: `the Messages stream reported ${type}: ${detail}`,
        retryable: error.type !== null && RETRYABLE_ERROR_TYPES.has(error.type),
        scrub,
        cause: error,
        contextLengthExceeded: CONTEXT_LENGTH_PATTERN.test(detail),
      });
    }
    const retryable = status === 429 || status >= 500;
    const tooLong = (status === 400 || status === 413) && CONTEXT_LENGTH_PATTERN.test(detail);
    return providerError({
      message: `the Messages API answered ${status}${error.type === null ? '' : ` ${error.type}`}: ${detail}${hintFor(status)}`,
      retryable,
      scrub,
      cause: error,
      contextLengthExceeded: tooLong,
    });
  }
  if (error instanceof SyntaxError) {
    return providerError({
      message: `the Messages stream held an event whose data is not valid JSON (${error.message})`,
      retryable: false,
      scrub,
      cause: error,
    });
  }
  if (isAgentError(error)) return error;
  if (!options.started) {
    // Before any answer the SDK wraps network failures as APIConnectionError: this is a setup problem
    // (no credentials, a bad option), which sending the request again will not fix.
    return providerError({
      message: `the Messages request could not be made: ${messageOf(error)}${
        /authentication/i.test(messageOf(error)) ? ' (pass `apiKey` or set ANTHROPIC_API_KEY)' : ''
      }`,
      retryable: false,
      scrub,
      cause: error,
    });
  }
  // Anything else thrown while reading the body is the connection failing under the stream.
  return providerError({
    message: `the connection to the Messages API dropped mid-stream: ${describeConnectionError(error)}`,
    retryable: true,
    scrub,
    cause: error,
  });
}

/** The message of a network error with its cause (undici puts the useful part there). */
function describeConnectionError(error: unknown): string {
  const message = messageOf(error);
  const cause = error instanceof Error ? error.cause : undefined;
  return cause instanceof Error && cause.message !== message ? `${message} (${cause.message})` : message;
}

/** A hint on what to fix for the statuses a caller can do something about. */
function hintFor(status: number): string {
  if (status === 401) return ' (check the API key)';
  if (status === 403) return ' (the API key may not use this model or feature)';
  if (status === 404) return ' (check the model id and the baseURL)';
  return '';
}
