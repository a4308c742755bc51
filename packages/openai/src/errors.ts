import { AgentError, isAgentError } from '@youyou/agent';
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';

/** Who failed and which secret must never show in the error. */
export interface ErrorContext {
  providerId: string;
  baseURL: string;
  /** The key the requests carry; scrubbed from every message. */
  apiKey: string;
}

const REDACTED = '[redacted]';

/** Matches what OpenAI, vLLM, llama.cpp and proxies say when a prompt does not fit the model. */
const CONTEXT_LENGTH_PATTERN =
  /context[ _-]?(length|window|size)|maximum context|too many tokens|prompt is too long|input is too long|exceed_context_size/i;

/** Matches servers that say they are busy, whatever the status. */
const OVERLOADED_PATTERN = /overloaded|server_error|temporarily unavailable|rate[ _]limit/i;

/** Removes the API key from a text; a key under 8 characters is no real secret and is left, not to garble text. */
export function scrub(text: string, apiKey: string | undefined): string {
  if (apiKey === undefined || apiKey.length < 8) return text;
  return text.split(apiKey).join(REDACTED);
}

/** Every text an error carries (message, body, causes), to check that none holds the key. */
function errorTexts(error: unknown, depth = 0): string[] {
  if (depth > 5 || error === null || error === undefined) return [];
  if (typeof error === 'string') return [error];
  if (!(error instanceof Error)) {
    try {
      return [JSON.stringify(error) ?? ''];
    } catch {
      return [];
    }
  }
  const texts = [error.message, error.stack ?? ''];
  if (error instanceof APIError && error.error !== undefined)
    texts.push(...errorTexts(error.error, depth + 1));
  return [...texts, ...errorTexts(error.cause, depth + 1)];
}

/** The error to keep as `cause`: the original, unless any of its texts holds the key. */
function safeCause(error: unknown, apiKey: string | undefined): unknown {
  if (apiKey === undefined || apiKey.length < 8) return error;
  return errorTexts(error).some((text) => text.includes(apiKey)) ? undefined : error;
}

function causeMessage(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  if (cause instanceof Error && cause.message !== '') {
    const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : '';
    return `${cause.message}${inner}`;
  }
  return error instanceof Error ? error.message : String(error);
}

function build(options: {
  context: ErrorContext;
  message: string;
  retryable: boolean;
  cause: unknown;
  contextLengthExceeded?: boolean;
}): AgentError {
  const cause = safeCause(options.cause, options.context.apiKey);
  return new AgentError({
    code: 'PROVIDER_ERROR',
    message: scrub(`provider '${options.context.providerId}': ${options.message}`, options.context.apiKey),
    retryable: options.retryable,
    contextLengthExceeded: options.contextLengthExceeded ?? false,
    ...(cause === undefined ? {} : { cause }),
  });
}

/** True when an HTTP error says the request does not fit the model's context window. */
function isContextLengthError(error: APIError): boolean {
  if (error.status !== 400 && error.status !== 413) return false;
  if (error.status === 413) return true;
  if (error.code === 'context_length_exceeded') return true;
  return CONTEXT_LENGTH_PATTERN.test(`${error.message} ${error.type ?? ''} ${error.code ?? ''}`);
}

function fromApiError(error: APIError, context: ErrorContext): AgentError {
  const status = error.status;
  const detail = `${error.message}${error.code ? ` (code ${error.code})` : ''}`;
  if (status === undefined) {
    // An error event inside an SSE stream: the server failed after it had started answering.
    return streamFailure({ context, message: error.message, code: error.code ?? error.type, cause: error });
  }
  if (isContextLengthError(error)) {
    return build({
      context,
      message: `the request is too large for the model's context window: ${detail}`,
      retryable: false,
      cause: error,
      contextLengthExceeded: true,
    });
  }
  const busy = status === 408 || status === 409 || status === 429 || status >= 500;
  const retryable = busy || OVERLOADED_PATTERN.test(`${error.type ?? ''} ${error.code ?? ''}`);
  const hint =
    status === 401 || status === 403
      ? ' — check the API key'
      : status === 404
        ? ' — check the model id and baseURL'
        : '';
  return build({ context, message: `HTTP ${detail}${hint}`, retryable, cause: error });
}

/**
 * Turns whatever the SDK threw into an AgentError PROVIDER_ERROR (or REQUEST_CANCELLED for an abort),
 * with `retryable` and `contextLengthExceeded` set, and the API key scrubbed from its text.
 */
export function toProviderError(error: unknown, context: ErrorContext): AgentError {
  if (isAgentError(error)) return error;
  if (error instanceof APIUserAbortError) {
    return new AgentError({ code: 'REQUEST_CANCELLED', message: 'the model request was cancelled' });
  }
  if (error instanceof APIConnectionTimeoutError) {
    return build({
      context,
      message: `the request to ${context.baseURL} timed out`,
      retryable: true,
      cause: error,
    });
  }
  if (error instanceof APIConnectionError) {
    return build({
      context,
      message: `could not reach ${context.baseURL}: ${causeMessage(error)}`,
      retryable: true,
      cause: error,
    });
  }
  if (error instanceof APIError) return fromApiError(error, context);
  if (error instanceof SyntaxError) {
    return build({
      context,
      message: 'the server sent a malformed stream event: its data is not valid JSON',
      retryable: false,
      cause: error,
    });
  }
  // Anything else thrown while reading the body is the transport failing: the connection dropped.
  return build({
    context,
    message: `the connection to ${context.baseURL} was lost mid-stream: ${causeMessage(error)}`,
    retryable: true,
    cause: error,
  });
}

/** The error of a stream that ended before the server said the answer was finished. */
export function streamEndedEarly(context: ErrorContext): AgentError {
  return build({
    context,
    message: `the stream from ${context.baseURL} ended before the answer was finished (the connection was dropped)`,
    retryable: true,
    cause: undefined,
  });
}

/** The error of a failure the server reported inside the stream (`response.failed`, an `error` event). */
export function streamFailure(options: {
  context: ErrorContext;
  message: string;
  code: string | null | undefined;
  cause?: unknown;
}): AgentError {
  const text = `${options.message}${options.code ? ` (code ${options.code})` : ''}`;
  const contextLengthExceeded =
    options.code === 'context_length_exceeded' || CONTEXT_LENGTH_PATTERN.test(options.message);
  return build({
    context: options.context,
    message: `the server reported a failure: ${text}`,
    retryable: !contextLengthExceeded && OVERLOADED_PATTERN.test(`${options.message} ${options.code ?? ''}`),
    cause: options.cause,
    contextLengthExceeded,
  });
}

/** Ends an iterator (closing its HTTP stream); an error while closing is of no use to anyone and is dropped. */
export async function closeQuietly(iterator: AsyncIterator<unknown>): Promise<void> {
  try {
    await iterator.return?.();
  } catch {
    // The stream is being abandoned either way.
  }
}
