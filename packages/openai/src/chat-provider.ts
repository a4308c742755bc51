import { AgentError, type ChatEvent, type ChatRequest, type ModelProvider } from '@youyou/agent';
import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { promptCacheKey, promptCacheKeyOption } from './cache-key.js';
import { toChatMessages, toChatTools } from './chat-messages.js';
import { chatEvents } from './chat-stream.js';
import {
  type ConnectionOptions,
  createClient,
  type OpenAIAccountOptions,
  openaiAccountClient,
  type ReasoningEffort,
} from './client.js';
import { type ErrorContext, toProviderError } from './errors.js';
import { findModel, isReasoningModel, type OpenAIModelInfo, resolveModels } from './models.js';
import { chatResponseFormat } from './response-format.js';

/** A reasoning model's effort setting, as the API names it. */

/** Options of `openaiChatProvider`. */
export interface OpenAIChatProviderOptions extends OpenAIAccountOptions {}

/** Options of `openaiCompatibleProvider`. */
export interface OpenAICompatibleProviderOptions extends ConnectionOptions {
  /** The server's OpenAI-style root, e.g. `http://127.0.0.1:11434/v1` for Ollama. */
  baseURL: string;
  /** The models the server offers, with their context windows; required. */
  models: readonly OpenAIModelInfo[];
  /** Default: a placeholder, as local servers need none (the environment's OpenAI key is never sent). */
  apiKey?: string;
  /**
   * Send `prompt_cache_key` (a hash of the session id); default false: Ollama, vLLM, llama.cpp and LM Studio
   * cache prompt prefixes on their own and ignore the field at best. Turn it on for a gateway that passes it on
   * to OpenAI.
   */
  promptCacheKey?: boolean;
}

/** How the two Chat Completions providers differ. */
interface ChatWireSettings {
  id: string;
  models: readonly OpenAIModelInfo[];
  client: OpenAI;
  errorContext: ErrorContext;
  /** OpenAI wants `max_completion_tokens`; compatible servers know `max_tokens`. */
  maxTokensField: 'max_completion_tokens' | 'max_tokens';
  reasoningEffort: ReasoningEffort | undefined;
  /** Whether requests carry `prompt_cache_key`. */
  promptCacheKey: boolean;
  /**
   * OpenAI takes `response_format` json_schema for every chat model; a compatible server may not (older
   * ones answer 400), so there it is sent only for models whose `capabilities.structuredOutput` says so.
   */
  responseFormatOnlyWhenCapable: boolean;
}

/** What local servers get as the API key when none is given: the SDK refuses to run without one. */
const PLACEHOLDER_API_KEY = 'not-needed';

function chatParams(settings: ChatWireSettings, request: ChatRequest): ChatCompletionCreateParamsStreaming {
  const model = findModel({ models: settings.models, modelId: request.modelId, providerId: settings.id });
  const params: ChatCompletionCreateParamsStreaming = {
    model: model.id,
    messages: toChatMessages({ systemPrompt: request.systemPrompt, messages: request.messages }),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.tools.length > 0) params.tools = toChatTools(request.tools);
  const format = request.responseFormat;
  const formatWanted =
    !settings.responseFormatOnlyWhenCapable || model.capabilities.structuredOutput === true;
  if (format !== undefined && formatWanted) params.response_format = chatResponseFormat(format);
  if (request.maxOutputTokens !== undefined) params[settings.maxTokensField] = request.maxOutputTokens;
  if (request.temperature !== undefined) params.temperature = request.temperature;
  const cacheKey = settings.promptCacheKey ? promptCacheKey(request.sessionId) : undefined;
  if (cacheKey !== undefined) params.prompt_cache_key = cacheKey;
  if (settings.reasoningEffort !== undefined && isReasoningModel(model)) {
    params.reasoning_effort = settings.reasoningEffort;
  }
  return params;
}

async function* streamChat(options: {
  settings: ChatWireSettings;
  request: ChatRequest;
  signal: AbortSignal;
}): AsyncGenerator<ChatEvent, void, undefined> {
  const { settings, request, signal } = options;
  const params = chatParams(settings, request);
  let chunks: AsyncIterable<OpenAI.Chat.ChatCompletionChunk>;
  try {
    // The SDK retries (with backoff, honouring Retry-After) only until the response starts.
    chunks = await settings.client.chat.completions.create(params, { signal });
  } catch (error) {
    throw toProviderError(error, settings.errorContext);
  }
  yield* chatEvents({ chunks, signal, errorContext: settings.errorContext });
}

function chatWireProvider(settings: ChatWireSettings): ModelProvider {
  return {
    id: settings.id,
    models: settings.models,
    chat: (request, signal) => streamChat({ settings, request, signal }),
  };
}

/**
 * A ModelProvider over OpenAI Chat Completions streaming (id `openai-chat` by default). Reasoning is not
 * returned by this API, so reasoning blocks of the history are dropped; use `openaiResponsesProvider` to
 * keep a reasoning model's reasoning across turns.
 */
export function openaiChatProvider(options: OpenAIChatProviderOptions = {}): ModelProvider {
  const { id, models, client, errorContext } = openaiAccountClient({
    account: options,
    providerName: 'openaiChatProvider',
    defaultId: 'openai-chat',
  });
  return chatWireProvider({
    id,
    models,
    client,
    errorContext,
    maxTokensField: 'max_completion_tokens',
    reasoningEffort: options.reasoningEffort,
    promptCacheKey: promptCacheKeyOption({
      value: options.promptCacheKey,
      fallback: true,
      providerName: 'openaiChatProvider',
    }),
    responseFormatOnlyWhenCapable: false,
  });
}

/**
 * A ModelProvider for servers that speak the Chat Completions wire: Ollama (`http://127.0.0.1:11434/v1`),
 * vLLM, llama.cpp server, LM Studio (id `openai-compatible` by default). It tolerates servers that omit
 * usage, stream reasoning as `reasoning_content`/`reasoning`, or send a whole tool call in one chunk.
 */
export function openaiCompatibleProvider(options: OpenAICompatibleProviderOptions): ModelProvider {
  const name = 'openaiCompatibleProvider';
  const id = options.id ?? 'openai-compatible';
  if (typeof options.baseURL !== 'string' || options.baseURL === '') {
    throw new AgentError({
      code: 'INVALID_CONFIG',
      message: `${name} needs 'baseURL', the server's OpenAI-style root such as http://127.0.0.1:11434/v1`,
    });
  }
  const models = resolveModels({ models: options.models, fallback: undefined, providerName: name });
  const { client, errorContext } = createClient({
    providerId: id,
    providerName: name,
    apiKey: options.apiKey ?? PLACEHOLDER_API_KEY,
    baseURL: options.baseURL,
    connection: options,
  });
  return chatWireProvider({
    id,
    models,
    client,
    errorContext,
    maxTokensField: 'max_tokens',
    reasoningEffort: undefined,
    promptCacheKey: promptCacheKeyOption({
      value: options.promptCacheKey,
      fallback: false,
      providerName: name,
    }),
    responseFormatOnlyWhenCapable: true,
  });
}
