import { AgentError } from '@youyou/agent';
import OpenAI from 'openai';
import type { ErrorContext } from './errors.js';
import { OPENAI_MODELS, type OpenAIModelInfo, resolveModels } from './models.js';

/** The HTTP options every provider of this package takes. */
export interface ConnectionOptions {
  /** The provider id the agent knows it by. */
  id?: string;
  baseURL?: string;
  /** Retries of a request that failed before its stream started (429, 5xx, connection errors); default 2. */
  maxRetries?: number;
  /** Milliseconds to wait for a response before giving up; default: the SDK's 10 minutes. */
  timeoutMs?: number;
  /** Extra HTTP headers sent with every request. */
  defaultHeaders?: Record<string, string>;
  /** A `fetch` to use instead of the global one (a proxy, a test). */
  fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
  /** The SDK's own log output; default `'off'`: failures reach the caller as AgentErrors instead. */
  logLevel?: 'off' | 'error' | 'warn' | 'info' | 'debug';
}

/** A ready client and what its errors need to know. */
export interface PreparedClient {
  client: OpenAI;
  errorContext: ErrorContext;
}

/**
 * Builds the SDK client. `apiKey` is the key to send (already resolved by the caller); organization,
 * project and base URL come only from the options, so a compatible server never receives OpenAI settings
 * from the environment.
 */
export function createClient(options: {
  providerId: string;
  providerName: string;
  apiKey: string;
  baseURL: string;
  connection: ConnectionOptions;
  organization?: string | undefined;
  project?: string | undefined;
}): PreparedClient {
  const { connection } = options;
  if (
    connection.maxRetries !== undefined &&
    !(Number.isInteger(connection.maxRetries) && connection.maxRetries >= 0)
  ) {
    throw new AgentError({
      code: 'INVALID_CONFIG',
      message: `${options.providerName}: 'maxRetries' must be a whole number of 0 or more`,
    });
  }
  if (connection.timeoutMs !== undefined && !(connection.timeoutMs > 0)) {
    throw new AgentError({
      code: 'INVALID_CONFIG',
      message: `${options.providerName}: 'timeoutMs' must be positive`,
    });
  }
  const client = new OpenAI({
    apiKey: options.apiKey,
    baseURL: options.baseURL,
    organization: options.organization ?? null,
    project: options.project ?? null,
    maxRetries: connection.maxRetries ?? 2,
    logLevel: connection.logLevel ?? 'off',
    ...(connection.timeoutMs === undefined ? {} : { timeout: connection.timeoutMs }),
    ...(connection.defaultHeaders === undefined ? {} : { defaultHeaders: connection.defaultHeaders }),
    ...(connection.fetch === undefined ? {} : { fetch: connection.fetch }),
  });
  return {
    client,
    errorContext: { providerId: options.providerId, baseURL: options.baseURL, apiKey: options.apiKey },
  };
}

/** The OpenAI API key: the option, else `OPENAI_API_KEY`; a configuration error when neither is set. */
export function openaiApiKey(apiKey: string | undefined, providerName: string): string {
  const key = apiKey ?? process.env.OPENAI_API_KEY;
  if (key === undefined || key === '') {
    throw new AgentError({
      code: 'INVALID_CONFIG',
      message: `${providerName} needs an API key: pass 'apiKey' or set the OPENAI_API_KEY environment variable`,
    });
  }
  return key;
}

/** The reasoning effort sent to reasoning models. */
export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';

/** The options both providers of OpenAI's own API take. */
export interface OpenAIAccountOptions extends ConnectionOptions {
  /** Default: the `OPENAI_API_KEY` environment variable. */
  apiKey?: string;
  /** The models offered; when given, exactly these (spread `OPENAI_MODELS` to extend it). Default `OPENAI_MODELS`. */
  models?: readonly OpenAIModelInfo[];
  organization?: string;
  project?: string;
  /** Sent to reasoning models as their reasoning effort. */
  reasoningEffort?: ReasoningEffort;
  /**
   * Send `prompt_cache_key` (a hash of the session id) so that the requests of a session reach the same prompt
   * cache; default true. Turn it off for a proxy at `baseURL` that refuses the field.
   */
  promptCacheKey?: boolean;
}

/** The id, models and client of a provider of OpenAI's own API (key and base URL from the environment too). */
export function openaiAccountClient(options: {
  account: OpenAIAccountOptions;
  providerName: string;
  defaultId: string;
}): PreparedClient & { id: string; models: readonly OpenAIModelInfo[] } {
  const { account, providerName } = options;
  const id = account.id ?? options.defaultId;
  const models = resolveModels({ models: account.models, fallback: OPENAI_MODELS, providerName });
  const prepared = createClient({
    providerId: id,
    providerName,
    apiKey: openaiApiKey(account.apiKey, providerName),
    baseURL: account.baseURL ?? process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
    connection: account,
    organization: account.organization,
    project: account.project,
  });
  return { id, models, ...prepared };
}
