/** `aiSdkProvider`: any AI SDK language model as a YouYou ModelProvider. */

import type {
  LanguageModelV2,
  LanguageModelV3,
  LanguageModelV3CallOptions,
  SharedV3ProviderOptions,
} from '@ai-sdk/provider';
import { APICallError } from '@ai-sdk/provider';
import {
  AgentError,
  type ChatEvent,
  type ChatRequest,
  type ModelInfo,
  type ModelProvider,
  type ResponseFormat,
} from '@youyou/agent';
import { type ErrorContext, toProviderError } from './errors.js';
import { type SystemMessageMode, toPrompt, toTools } from './prompt.js';
import { StreamMapper, type StreamPart } from './stream.js';

/** A language model of the AI SDK: the V3 specification, or V2 (older providers). */
export type AiSdkLanguageModel = LanguageModelV3 | LanguageModelV2;

/** One model the provider offers. */
export interface AiSdkModelEntry {
  /** The AI SDK model, e.g. `anthropic('claude-sonnet-4-5')` or `openai.responses('gpt-5')`. */
  model: AiSdkLanguageModel;
  /** How the runtime names and sizes the model; `info.id` is the id sessions ask for. */
  info: ModelInfo;
  /** Sent with every call of this model, e.g. `{ anthropic: { thinking: { type: 'enabled', budgetTokens: 4000 } } }`. */
  providerOptions?: SharedV3ProviderOptions;
}

/** What `aiSdkProvider` takes. */
export interface AiSdkProviderOptions {
  /** The provider's id in the agent; unique among registered providers. */
  id: string;
  models: readonly AiSdkModelEntry[];
  /** Retries of a retryable failure (429, 5xx, overloaded, dropped connection) before any event; default 2. */
  maxRetries?: number;
  /**
   * The first retry's delay; each further retry doubles it. Default 1000 ms. A server that says when to come
   * back (`retry-after-ms`, `retry-after` in seconds or as a date, up to a minute) is waited for instead.
   */
  retryDelayMs?: number;
  /**
   * How system messages of the history are sent: `leading` (default) keeps those before the conversation as system messages and sends later ones as user messages; `in-place` as system messages where they stand;
   * `as-user` as user messages, for wrapped providers that accept system messages only at the start
   * (the AI SDK's Anthropic and Google providers reject a system message after the first user message).
   */
  systemMessages?: SystemMessageMode;
}

/**
 * Wraps AI SDK language models as a YouYou ModelProvider. Every failure is thrown as AgentError
 * PROVIDER_ERROR (`retryable`, `contextLengthExceeded` set from the error); bad options throw
 * INVALID_CONFIG at once.
 */
export function aiSdkProvider(options: AiSdkProviderOptions): ModelProvider {
  validate(options);
  const entries = new Map(options.models.map((entry) => [entry.info.id, entry]));
  const settings: Settings = {
    providerId: options.id,
    maxRetries: options.maxRetries ?? 2,
    retryDelayMs: options.retryDelayMs ?? 1000,
    systemMessages: options.systemMessages ?? 'leading',
  };
  return {
    id: options.id,
    models: options.models.map((entry) => entry.info),
    chat(request: ChatRequest, signal: AbortSignal): AsyncIterable<ChatEvent> {
      const entry = entries.get(request.modelId);
      if (entry === undefined) {
        throw new AgentError({
          code: 'MODEL_NOT_SUPPORTED',
          message: `provider '${options.id}' has no model '${request.modelId}'; it offers: ${[...entries.keys()].join(', ')}`,
        });
      }
      return chat({ settings, entry, request, signal });
    },
  };
}

interface Settings {
  providerId: string;
  maxRetries: number;
  retryDelayMs: number;
  systemMessages: SystemMessageMode;
}

function validate(options: AiSdkProviderOptions): void {
  const fail = (message: string): never => {
    throw new AgentError({ code: 'INVALID_CONFIG', message: `aiSdkProvider: ${message}` });
  };
  if (typeof options?.id !== 'string' || options.id.trim() === '') fail('`id` must be a non-empty string');
  if (!Array.isArray(options.models) || options.models.length === 0) {
    fail(`provider '${options.id}': \`models\` must list at least one { model, info }`);
  }
  const seen = new Set<string>();
  options.models.forEach((entry, index) => {
    const where = `provider '${options.id}', models[${index}]`;
    if (typeof entry?.model?.doStream !== 'function') {
      fail(`${where}: \`model\` must be an AI SDK language model (an object with doStream)`);
    }
    const info = entry.info;
    if (typeof info?.id !== 'string' || info.id.trim() === '')
      fail(`${where}: \`info.id\` must be a non-empty string`);
    if (
      typeof info.contextWindow !== 'number' ||
      !Number.isFinite(info.contextWindow) ||
      info.contextWindow <= 0
    ) {
      fail(`${where}: \`info.contextWindow\` must be a positive number of tokens`);
    }
    if (typeof info.capabilities !== 'object' || info.capabilities === null) {
      fail(`${where}: \`info.capabilities\` must say { toolUse, vision, streaming }`);
    }
    if (seen.has(info.id)) fail(`${where}: model id '${info.id}' is listed twice`);
    seen.add(info.id);
  });
  for (const [name, value] of [
    ['maxRetries', options.maxRetries],
    ['retryDelayMs', options.retryDelayMs],
  ] as const) {
    if (value !== undefined && (!Number.isInteger(value) || value < 0)) {
      fail(`provider '${options.id}': \`${name}\` must be a whole number ≥ 0`);
    }
  }
}

/** One request: retried while a retryable failure happens before the first event. */
async function* chat(options: {
  settings: Settings;
  entry: AiSdkModelEntry;
  request: ChatRequest;
  signal: AbortSignal;
}): AsyncGenerator<ChatEvent, void, undefined> {
  const { settings, entry, request, signal } = options;
  const context: ErrorContext = { providerId: settings.providerId, modelId: request.modelId };
  const callOptions = toCallOptions({ settings, entry, request, signal });
  for (let attempt = 0; ; attempt += 1) {
    if (signal.aborted) return;
    let emitted = false;
    try {
      for await (const event of streamOnce({ model: entry.model, callOptions, signal })) {
        emitted = true;
        yield event;
      }
      return;
    } catch (error) {
      // A cancelled request ends quietly; the runtime knows it cancelled.
      if (signal.aborted) return;
      const failure = toProviderError(error, context);
      if (emitted || !failure.retryable || attempt >= settings.maxRetries) throw failure;
      await delay(retryAfterMs(error) ?? settings.retryDelayMs * 2 ** attempt, signal);
    }
  }
}

function toCallOptions(options: {
  settings: Settings;
  entry: AiSdkModelEntry;
  request: ChatRequest;
  signal: AbortSignal;
}): LanguageModelV3CallOptions {
  const { entry, request } = options;
  const callOptions: LanguageModelV3CallOptions = {
    prompt: toPrompt({
      request,
      systemMessages: options.settings.systemMessages,
      // AI SDK provider ids look like `anthropic.messages`; the first segment is their providerOptions key.
      reasoningNamespace: entry.model.provider.split('.')[0],
    }),
    abortSignal: options.signal,
  };
  if (request.tools.length > 0) callOptions.tools = toTools(request.tools);
  if (request.responseFormat !== undefined)
    callOptions.responseFormat = toResponseFormat(request.responseFormat);
  if (request.maxOutputTokens !== undefined) callOptions.maxOutputTokens = request.maxOutputTokens;
  if (request.temperature !== undefined) callOptions.temperature = request.temperature;
  if (entry.providerOptions !== undefined) callOptions.providerOptions = entry.providerOptions;
  return callOptions;
}

type JsonResponseFormat = Extract<
  NonNullable<LanguageModelV3CallOptions['responseFormat']>,
  { type: 'json' }
>;

/**
 * The AI SDK's `responseFormat`: JSON with the schema, its name and description. How strictly the wrapped
 * model holds to it is the AI SDK provider's business (OpenAI sends `response_format`, others a tool or a
 * prompt); the runtime checks the answer either way.
 */
function toResponseFormat(format: ResponseFormat): JsonResponseFormat {
  const json: JsonResponseFormat = {
    type: 'json',
    schema: format.schema as NonNullable<JsonResponseFormat['schema']>,
    name: format.name,
  };
  if (format.description !== undefined) json.description = format.description;
  return json;
}

/** One call of `doStream`, read to its end; stops reading (and cancels the stream) when the signal fires. */
async function* streamOnce(options: {
  model: AiSdkLanguageModel;
  callOptions: LanguageModelV3CallOptions;
  signal: AbortSignal;
}): AsyncGenerator<ChatEvent, void, undefined> {
  const { model, callOptions, signal } = options;
  // The V2 call options differ from V3 only in fields this adapter never sets (V3 JSON objects allow
  // `undefined` values), so one object serves both.
  const pending: PromiseLike<{ stream: ReadableStream<StreamPart> }> =
    model.specificationVersion === 'v2'
      ? model.doStream(callOptions as Parameters<LanguageModelV2['doStream']>[0])
      : model.doStream(callOptions);
  const started = await untilAborted(pending, signal);
  if (started === undefined) return;
  const reader = started.stream.getReader();
  // Cancelling the reader ends a pending read even when the model ignores its abortSignal.
  const onAbort = (): void => {
    reader.cancel(signal.reason).catch(() => undefined);
  };
  signal.addEventListener('abort', onAbort, { once: true });
  let finished = false;
  try {
    const mapper = new StreamMapper();
    while (true) {
      const step = await reader.read();
      if (signal.aborted) return;
      if (step.done) break;
      const mapped = mapper.map(step.value);
      if (!Array.isArray(mapped)) throw mapped.error;
      yield* mapped;
    }
    yield* mapper.end();
    finished = true;
  } finally {
    signal.removeEventListener('abort', onAbort);
    // The caller stopped early or the stream failed: let the model close its connection.
    if (!finished) reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** Waits for `promise`; `undefined` if the signal fires first (a stream that arrives later is cancelled). */
async function untilAborted<T extends { stream: ReadableStream<unknown> }>(
  promise: PromiseLike<T>,
  signal: AbortSignal,
): Promise<T | undefined> {
  if (signal.aborted) {
    Promise.resolve(promise).then(
      (late) => late.stream.cancel().catch(() => undefined),
      () => undefined,
    );
    return undefined;
  }
  let onAbort = (): void => undefined;
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const result = await Promise.race([promise, aborted]);
    if (result === undefined) {
      Promise.resolve(promise).then(
        (late) => late.stream.cancel().catch(() => undefined),
        () => undefined,
      );
    }
    return result;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** The longest `Retry-After` waited for; a server asking for longer gets the usual backoff, as the vendors' SDKs do. */
const MAX_RETRY_AFTER_MS = 60_000;

/**
 * How long the server asked the client to wait before it tries again, from the failed response's headers
 * (`retry-after-ms`, then `retry-after` as seconds or an HTTP date); undefined when it did not say, or said
 * something unusable or longer than a minute.
 */
export function retryAfterMs(error: unknown, now: number = Date.now()): number | undefined {
  if (!APICallError.isInstance(error)) return undefined;
  const headers = error.responseHeaders;
  if (headers === undefined) return undefined;
  const header = (name: string): string | undefined => {
    for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
    return undefined;
  };
  let waitMs: number | undefined;
  const milliseconds = header('retry-after-ms');
  if (milliseconds !== undefined && /^\d+(\.\d+)?$/.test(milliseconds.trim())) {
    waitMs = Number(milliseconds);
  } else {
    const retryAfter = header('retry-after')?.trim();
    if (retryAfter !== undefined && /^\d+(\.\d+)?$/.test(retryAfter)) waitMs = Number(retryAfter) * 1000;
    else if (retryAfter !== undefined && /^[A-Za-z]{3}, /.test(retryAfter)) {
      const date = Date.parse(retryAfter);
      if (!Number.isNaN(date)) waitMs = Math.max(0, date - now);
    }
  }
  return waitMs !== undefined && waitMs >= 0 && waitMs <= MAX_RETRY_AFTER_MS ? waitMs : undefined;
}

/** The pause before a retry; ends early (without error) when the signal fires. */
function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
