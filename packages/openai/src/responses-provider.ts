import type { ChatEvent, ChatRequest, ModelProvider } from '@youyou/agent';
import type OpenAI from 'openai';
import type {
  ResponseCreateParamsStreaming,
  ResponseStreamEvent,
} from 'openai/resources/responses/responses';
import { promptCacheKey, promptCacheKeyOption } from './cache-key.js';
import { type OpenAIAccountOptions, openaiAccountClient, type ReasoningEffort } from './client.js';
import { type ErrorContext, toProviderError } from './errors.js';
import { findModel, isReasoningModel, type OpenAIModelInfo } from './models.js';
import { responsesTextFormat } from './response-format.js';
import { toResponsesInput, toResponsesTools } from './responses-input.js';
import { responsesEvents } from './responses-stream.js';

/** Options of `openaiResponsesProvider`. */
export interface OpenAIResponsesProviderOptions extends OpenAIAccountOptions {
  /** The reasoning summary reasoning models stream (as `reasoning_delta`); default `'auto'`, `null` for none. */
  reasoningSummary?: 'auto' | 'concise' | 'detailed' | null;
}

interface ResponsesSettings {
  id: string;
  models: readonly OpenAIModelInfo[];
  client: OpenAI;
  errorContext: ErrorContext;
  reasoningEffort: ReasoningEffort | undefined;
  reasoningSummary: 'auto' | 'concise' | 'detailed' | null;
  /** Whether requests carry `prompt_cache_key`. */
  promptCacheKey: boolean;
}

function responsesParams(settings: ResponsesSettings, request: ChatRequest): ResponseCreateParamsStreaming {
  const model = findModel({ models: settings.models, modelId: request.modelId, providerId: settings.id });
  const params: ResponseCreateParamsStreaming = {
    model: model.id,
    input: toResponsesInput({
      systemPrompt: request.systemPrompt,
      messages: request.messages,
      sendReasoning: isReasoningModel(model),
    }),
    stream: true,
    // Nothing is kept on OpenAI's side: the history travels with every request, reasoning encrypted.
    store: false,
  };
  if (isReasoningModel(model)) {
    // Other models reject both fields ("Encrypted content is not supported with this model").
    params.include = ['reasoning.encrypted_content'];
    params.reasoning = {
      ...(settings.reasoningSummary === null ? {} : { summary: settings.reasoningSummary }),
      ...(settings.reasoningEffort === undefined ? {} : { effort: settings.reasoningEffort }),
    };
  }
  if (request.tools.length > 0) params.tools = toResponsesTools(request.tools);
  if (request.responseFormat !== undefined) params.text = responsesTextFormat(request.responseFormat);
  if (request.maxOutputTokens !== undefined) params.max_output_tokens = request.maxOutputTokens;
  if (request.temperature !== undefined) params.temperature = request.temperature;
  const cacheKey = settings.promptCacheKey ? promptCacheKey(request.sessionId) : undefined;
  if (cacheKey !== undefined) params.prompt_cache_key = cacheKey;
  return params;
}

async function* streamResponse(options: {
  settings: ResponsesSettings;
  request: ChatRequest;
  signal: AbortSignal;
}): AsyncGenerator<ChatEvent, void, undefined> {
  const { settings, request, signal } = options;
  const params = responsesParams(settings, request);
  let events: AsyncIterable<ResponseStreamEvent>;
  try {
    // The SDK retries (with backoff, honouring Retry-After) only until the response starts.
    events = await settings.client.responses.create(params, { signal });
  } catch (error) {
    throw toProviderError(error, settings.errorContext);
  }
  yield* responsesEvents({ events, signal, errorContext: settings.errorContext });
}

/**
 * A ModelProvider over the OpenAI Responses API streaming (id `openai-responses` by default), stateless
 * (`store: false`): reasoning models stream their reasoning summary as `reasoning_delta`, and each
 * reasoning item's encrypted content becomes the reasoning block's `signature`, sent back on later calls.
 */
export function openaiResponsesProvider(options: OpenAIResponsesProviderOptions = {}): ModelProvider {
  const { id, models, client, errorContext } = openaiAccountClient({
    account: options,
    providerName: 'openaiResponsesProvider',
    defaultId: 'openai-responses',
  });
  const settings: ResponsesSettings = {
    id,
    models,
    client,
    errorContext,
    reasoningEffort: options.reasoningEffort,
    reasoningSummary: options.reasoningSummary === undefined ? 'auto' : options.reasoningSummary,
    promptCacheKey: promptCacheKeyOption({
      value: options.promptCacheKey,
      fallback: true,
      providerName: 'openaiResponsesProvider',
    }),
  };
  return {
    id,
    models,
    chat: (request, signal) => streamResponse({ settings, request, signal }),
  };
}
