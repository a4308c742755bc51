import { connect } from 'node:net';
import type { ModelInfo, ModelProvider } from '@youyou/agent';
// Types only: the adapters (and their SDKs) are imported when a provider is built, so that `--help`,
// `--version` and `sessions` do not load them.
import type { AnthropicModelInfo } from '@youyou/anthropic';
import type { OpenAIModelInfo } from '@youyou/openai';
import type { ProviderName } from '../config/args.js';
import {
  type CliSettings,
  ConfigError,
  DEFAULT_BASE_URL,
  DEFAULT_COMPATIBLE_CONTEXT_WINDOW,
  DEFAULT_COMPATIBLE_MODEL,
} from '../config/config.js';
import { UnreachableError, unreachableMessage } from '../config/model-server.js';

/** The provider the CLI talks to, and what to say about it. */
export interface ChosenProvider {
  provider: ModelProvider;
  name: ProviderName;
  modelId: string;
  /** The server's URL, or undefined for the provider's own default. */
  baseURL: string | undefined;
}

/** Context windows assumed for a model the adapter's list does not know, by provider. */
const UNKNOWN_MODEL_CONTEXT: Record<'openai' | 'anthropic', number> = { openai: 128_000, anthropic: 200_000 };

function withModel<T extends ModelInfo>(options: {
  models: readonly T[];
  modelId: string;
  contextWindow: number;
}): T[] {
  const { models, modelId, contextWindow } = options;
  if (models.some((model) => model.id === modelId)) return [...models];
  // A model newer than the adapter's list still works; its window is a guess the config can correct.
  const extra = {
    id: modelId,
    displayName: modelId,
    contextWindow,
    capabilities: { toolUse: true, vision: true, streaming: true },
  } as T;
  return [...models, extra];
}

function requireKey(settings: CliSettings, variable: string): string {
  if (settings.apiKey !== undefined) return settings.apiKey;
  throw new ConfigError(
    `--provider ${settings.provider} needs an API key: set ${variable} (or "apiKey" in ${settings.configPath})`,
  );
}

/** Builds the model provider the settings ask for; rejects with ConfigError when something is missing. */
export async function chooseProvider(settings: CliSettings): Promise<ChosenProvider> {
  if (settings.provider === 'compatible') {
    const { openaiCompatibleProvider } = await import('@youyou/openai');
    const baseURL = settings.baseURL ?? DEFAULT_BASE_URL;
    const modelId = settings.model ?? DEFAULT_COMPATIBLE_MODEL;
    const model: OpenAIModelInfo = {
      id: modelId,
      displayName: modelId,
      contextWindow: settings.contextWindow ?? DEFAULT_COMPATIBLE_CONTEXT_WINDOW,
      capabilities: { toolUse: true, vision: false, streaming: true },
    };
    const provider = openaiCompatibleProvider({
      baseURL,
      models: [model],
      ...(settings.apiKey === undefined ? {} : { apiKey: settings.apiKey }),
    });
    return { provider, name: 'compatible', modelId, baseURL };
  }
  if (settings.provider === 'openai') {
    const apiKey = requireKey(settings, 'OPENAI_API_KEY');
    const { OPENAI_MODELS, openaiChatProvider, openaiResponsesProvider } = await import('@youyou/openai');
    const modelId = settings.model ?? OPENAI_MODELS[0]?.id ?? 'gpt-5';
    const models = withModel<OpenAIModelInfo>({
      models: OPENAI_MODELS,
      modelId,
      contextWindow: settings.contextWindow ?? UNKNOWN_MODEL_CONTEXT.openai,
    });
    const options = {
      apiKey,
      models,
      ...(settings.baseURL === undefined ? {} : { baseURL: settings.baseURL }),
    };
    const provider =
      settings.openaiApi === 'chat' ? openaiChatProvider(options) : openaiResponsesProvider(options);
    return { provider, name: 'openai', modelId, baseURL: settings.baseURL };
  }
  const apiKey = requireKey(settings, 'ANTHROPIC_API_KEY');
  const { ANTHROPIC_MODELS, anthropicProvider } = await import('@youyou/anthropic');
  const preferred = ANTHROPIC_MODELS.find((model) => model.id.includes('sonnet')) ?? ANTHROPIC_MODELS[0];
  const modelId = settings.model ?? preferred?.id ?? 'claude-sonnet-4-6';
  const models = withModel<AnthropicModelInfo>({
    models: ANTHROPIC_MODELS,
    modelId,
    contextWindow: settings.contextWindow ?? UNKNOWN_MODEL_CONTEXT.anthropic,
  });
  const provider = anthropicProvider({
    apiKey,
    models,
    ...(settings.baseURL === undefined ? {} : { baseURL: settings.baseURL }),
  });
  return { provider, name: 'anthropic', modelId, baseURL: settings.baseURL };
}

/**
 * Opens and closes a TCP connection to the server of `baseURL`, so that a server that is not running is
 * reported in one sentence before the session starts, instead of after the SDK's retries.
 */
export async function checkReachable(baseURL: string, timeoutMs = 3000): Promise<void> {
  const url = new URL(baseURL);
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  await new Promise<void>((resolve, reject) => {
    const socket = connect({ host, port });
    const fail = (): void => {
      socket.destroy();
      reject(new UnreachableError(unreachableMessage(baseURL)));
    };
    socket.setTimeout(timeoutMs, fail);
    socket.once('error', fail);
    socket.once('connect', () => {
      socket.end();
      socket.destroy();
      resolve();
    });
  });
}
