import { type ChatRequest, isAgentError, type ModelInfo } from '@youyou/agent';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { startWireServer, type WireServer } from '../../../test-support/wire-server.js';
import {
  isReasoningModel,
  OPENAI_MODELS,
  openaiChatProvider,
  openaiCompatibleProvider,
  openaiResponsesProvider,
} from '../src/index.js';
import { collect, DIALECTS, startSession, typesOf } from './support/dialects.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  vi.unstubAllEnvs();
  await server.close();
});

const LOCAL: ModelInfo = {
  id: 'mistral-small',
  displayName: 'Mistral Small',
  contextWindow: 32_000,
  capabilities: { toolUse: true, vision: false, streaming: true },
};

function configError(make: () => unknown): string {
  try {
    make();
  } catch (error) {
    if (isAgentError(error)) return `${error.code}: ${error.message}`;
    throw error;
  }
  return 'no error';
}

describe('the OpenAI model catalogue', () => {
  test('lists current models with their context windows', () => {
    const windows = Object.fromEntries(OPENAI_MODELS.map((model) => [model.id, model.contextWindow]));
    expect(windows).toMatchObject({
      'gpt-5': 400_000,
      'gpt-5-mini': 400_000,
      'gpt-5-nano': 400_000,
      'gpt-4.1': 1_047_576,
      'gpt-4.1-mini': 1_047_576,
      'gpt-4o': 128_000,
      'gpt-4o-mini': 128_000,
      o3: 200_000,
      'o4-mini': 200_000,
    });
    expect(OPENAI_MODELS.find((model) => model.id === 'o3-mini')?.capabilities.vision).toBe(false);
    expect(OPENAI_MODELS.filter((model) => model.reasoning).map((model) => model.id)).toContain('gpt-5');
    expect(OPENAI_MODELS.find((model) => model.id === 'gpt-4o')?.reasoning).toBe(false);
  });

  test('guesses whether an uncatalogued model reasons, unless told', () => {
    const info = (id: string, reasoning?: boolean) => ({
      ...LOCAL,
      id,
      ...(reasoning === undefined ? {} : { reasoning }),
    });
    expect(isReasoningModel(info('o5'))).toBe(true);
    expect(isReasoningModel(info('gpt-5.5'))).toBe(true);
    expect(isReasoningModel(info('gpt-5-chat-latest'))).toBe(false);
    expect(isReasoningModel(info('gpt-4.5'))).toBe(false);
    expect(isReasoningModel(info('my-reasoner', true))).toBe(true);
  });

  test('each provider offers the catalogue under its wire-API id by default, or exactly the models given', () => {
    const apiKey = 'sk-test-key-123456';
    expect(openaiChatProvider({ apiKey }).id).toBe('openai-chat');
    expect(openaiResponsesProvider({ apiKey }).id).toBe('openai-responses');
    expect(openaiChatProvider({ apiKey }).models.map((model) => model.id)).toEqual(
      OPENAI_MODELS.map((m) => m.id),
    );
    expect(openaiChatProvider({ apiKey, models: [LOCAL] }).models).toEqual([LOCAL]);
    expect(openaiResponsesProvider({ apiKey, models: [...OPENAI_MODELS, LOCAL] }).models).toHaveLength(
      OPENAI_MODELS.length + 1,
    );
    const compatible = openaiCompatibleProvider({ baseURL: 'http://127.0.0.1:11434/v1', models: [LOCAL] });
    expect(compatible.id).toBe('openai-compatible');
    expect(compatible.models).toEqual([LOCAL]);
    expect(
      openaiCompatibleProvider({ id: 'ollama', baseURL: 'http://127.0.0.1:1/v1', models: [LOCAL] }).id,
    ).toBe('ollama');
  });
});

describe('configuration errors', () => {
  test('the compatible provider requires a baseURL and a non-empty, duplicate-free models list', () => {
    const make = (options: unknown) => () =>
      openaiCompatibleProvider(options as Parameters<typeof openaiCompatibleProvider>[0]);
    expect(configError(make({ models: [LOCAL] }))).toMatch(/^INVALID_CONFIG: .*baseURL/);
    expect(configError(make({ baseURL: 'http://127.0.0.1:1/v1' }))).toMatch(/^INVALID_CONFIG: .*models/);
    expect(configError(make({ baseURL: 'http://127.0.0.1:1/v1', models: [] }))).toMatch(/^INVALID_CONFIG/);
    expect(configError(make({ baseURL: 'http://127.0.0.1:1/v1', models: [LOCAL, LOCAL] }))).toMatch(
      /listed twice/,
    );
    expect(configError(make({ baseURL: 'http://127.0.0.1:1/v1', models: [LOCAL], maxRetries: -1 }))).toMatch(
      /maxRetries/,
    );
  });

  test('an OpenAI provider without any API key is a configuration error', () => {
    vi.stubEnv('OPENAI_API_KEY', '');
    expect(configError(() => openaiChatProvider())).toMatch(/^INVALID_CONFIG: .*OPENAI_API_KEY/);
    expect(configError(() => openaiResponsesProvider())).toMatch(/^INVALID_CONFIG: .*OPENAI_API_KEY/);
  });
});

describe('keys and models on the wire', () => {
  const chatDialect = DIALECTS.find((dialect) => dialect.name === 'openai-chat')!;

  test('OPENAI_API_KEY is used when no key is given', async () => {
    vi.stubEnv('OPENAI_API_KEY', 'sk-from-environment-42');
    server.enqueue(chatDialect.text(['ok']));
    const provider = openaiChatProvider({ baseURL: `${server.url}/v1` });
    for await (const _event of await provider.chat(chatRequest('gpt-4o'), new AbortController().signal)) {
      // Draining.
    }
    expect(server.requests[0]!.headers.authorization).toBe('Bearer sk-from-environment-42');
  });

  test('a compatible server gets a placeholder key, never the OpenAI key or organization of the environment', async () => {
    vi.stubEnv('OPENAI_API_KEY', 'sk-openai-must-not-leak');
    vi.stubEnv('OPENAI_ORG_ID', 'org-must-not-leak');
    server.enqueue(chatDialect.text(['ok']));
    const provider = openaiCompatibleProvider({ baseURL: `${server.url}/v1`, models: [LOCAL] });
    for await (const _event of await provider.chat(chatRequest(LOCAL.id), new AbortController().signal)) {
      // Draining.
    }
    const headers = server.requests[0]!.headers;
    expect(headers.authorization).toBe('Bearer not-needed');
    expect(JSON.stringify(headers)).not.toContain('must-not-leak');
  });

  test('an uncatalogued model is used once the caller supplies its ModelInfo', async () => {
    server.enqueue(chatDialect.text(['from the new model']));
    const provider = openaiChatProvider({
      apiKey: 'sk-test-key-123456',
      baseURL: `${server.url}/v1`,
      models: [...OPENAI_MODELS, { ...LOCAL, id: 'gpt-next-preview' }],
    });
    const { agent, session } = await startSession({ provider, modelId: 'gpt-next-preview' });
    const events = await collect(await session.sendMessage('hi'));
    expect(typesOf(events)).toEqual(['text_delta', 'usage', 'turn_complete']);
    expect((server.requests[0]!.body as { model: string }).model).toBe('gpt-next-preview');
    await agent.shutdown();
  });

  test('a model the provider does not offer is MODEL_NOT_SUPPORTED, and nothing is sent', async () => {
    const provider = openaiChatProvider({ apiKey: 'sk-test-key-123456', baseURL: `${server.url}/v1` });
    await expect(
      (async () => {
        for await (const _event of await provider.chat(
          chatRequest('gpt-unknown'),
          new AbortController().signal,
        )) {
          // Draining.
        }
      })(),
    ).rejects.toMatchObject({ code: 'MODEL_NOT_SUPPORTED' });
    expect(server.requests).toHaveLength(0);
  });
});

function chatRequest(modelId: string): ChatRequest {
  return {
    modelId,
    purpose: 'turn',
    systemPrompt: '',
    systemPromptParts: { stable: '', dynamic: '' },
    messages: [{ type: 'user', content: [{ type: 'text', text: 'hi' }] }],
    tools: [],
  };
}
