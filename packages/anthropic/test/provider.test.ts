import { AgentBuilder, isAgentError } from '@youyou/agent';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  messageDelta,
  messageEvents,
  messageStart,
  messageStop,
  ping,
  sseReply,
  textBlock,
  textReply,
  toolUseBlock,
} from '../../../test-support/anthropic-wire.js';
import { messagesApiViolations } from '../../../test-support/anthropic-wire-rules.js';
import { startWireServer, type WireServer } from '../../../test-support/wire-server.js';
import { ANTHROPIC_MODELS, type AnthropicModelInfo, anthropicProvider } from '../src/index.js';
import { API_KEY, bodyOf, chatRequest, drain, providerFor } from './support/harness.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await server.close();
});

const signal = () => new AbortController().signal;

describe('the stream assembly', () => {
  test('usage: inputTokens is the whole prompt (input_tokens + cache reads + cache writes), the cache counts its parts; stop reasons map', async () => {
    server.enqueue(
      sseReply([
        messageStart({ input_tokens: 10, cache_read_input_tokens: 900, cache_creation_input_tokens: 50 }),
        ping(),
        ...textBlock(0, ['ok']),
        messageDelta('max_tokens', { output_tokens: 42, thinking_tokens: 7 }),
        ping(),
        messageStop(),
      ]),
      sseReply(messageEvents({ blocks: [textBlock(0, ['x'])], stopReason: 'refusal' })),
    );
    const provider = providerFor(server);
    const first = await drain(provider.chat(chatRequest(), signal()));
    expect(first.error).toBeUndefined();
    expect(first.events).toEqual([
      { type: 'text_delta', text: 'ok' },
      {
        type: 'usage',
        usage: {
          inputTokens: 960,
          cachedInputTokens: 900,
          cacheWriteTokens: 50,
          outputTokens: 42,
          reasoningTokens: 7,
        },
      },
      { type: 'done', stopReason: 'max_tokens', responseModel: 'claude-sonnet-5-5' },
    ]);
    const second = await drain(provider.chat(chatRequest(), signal()));
    expect(second.events.at(-1)).toEqual({
      type: 'done',
      stopReason: 'other',
      responseModel: 'claude-sonnet-5-5',
    });
  });

  test('a tool call with no input is `{}`; each tool_use block is its own call', async () => {
    server.enqueue(
      sseReply(
        messageEvents({
          blocks: [
            toolUseBlock(0, { id: 'toolu_1', name: 'now', jsonChunks: [] }),
            toolUseBlock(1, { id: 'toolu_2', name: 'now', jsonChunks: ['', '{}'] }),
          ],
          stopReason: 'tool_use',
        }),
      ),
    );
    const { events } = await drain(providerFor(server).chat(chatRequest(), signal()));
    expect(events.filter((event) => event.type === 'tool_call')).toEqual([
      { type: 'tool_call', callId: 'toolu_1', toolName: 'now', arguments: '{}' },
      { type: 'tool_call', callId: 'toolu_2', toolName: 'now', arguments: '{}' },
    ]);
    expect(events.at(-1)).toEqual({
      type: 'done',
      stopReason: 'tool_use',
      responseModel: 'claude-sonnet-5-5',
    });
  });

  test('a stream that ends before message_stop is a retryable PROVIDER_ERROR', async () => {
    server.enqueue(sseReply([messageStart(), ...textBlock(0, ['cut'])]));
    const { events, error } = await drain(providerFor(server).chat(chatRequest(), signal()));
    expect(events).toEqual([{ type: 'text_delta', text: 'cut' }]);
    expect(error).toMatchObject({ code: 'PROVIDER_ERROR', retryable: true });
  });
});

describe('the request', () => {
  test('adaptive models get `adaptive` thinking with room for it; no temperature is sent', async () => {
    server.enqueue(textReply(['a']), textReply(['b']));
    const provider = providerFor(server, { thinking: { budgetTokens: 4096 } });
    await drain(provider.chat(chatRequest({ modelId: 'claude-opus-4-8', temperature: 0.2 }), signal()));
    expect(bodyOf(server, 0)).toMatchObject({ thinking: { type: 'adaptive' }, max_tokens: 8192 + 4096 });
    expect(bodyOf(server, 0)).not.toHaveProperty('temperature');
    await drain(
      provider.chat(chatRequest({ modelId: 'claude-haiku-4-5', maxOutputTokens: 100_000 }), signal()),
    );
    // Capped at the model's output limit, still above the budget.
    expect(bodyOf(server, 1)).toMatchObject({ max_tokens: 64_000, thinking: { budget_tokens: 4096 } });
  });

  test('system prompt: sent as one cached block; the dynamic part is not sent again from systemPromptParts', async () => {
    server.enqueue(textReply(['a']), textReply(['b']), textReply(['c']));
    const provider = providerFor(server);
    // The runtime's layout: the dynamic part is in the messages, the system prompt is the stable part.
    await drain(
      provider.chat(
        chatRequest({
          systemPrompt: 'Be brief.',
          systemPromptParts: { stable: 'Be brief.', dynamic: 'today' },
        }),
        signal(),
      ),
    );
    expect(bodyOf(server, 0).system).toEqual([
      { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
    ]);
    expect(JSON.stringify(bodyOf(server, 0))).not.toContain('today');
    // A caller that puts both parts into systemPrompt gets the stable one cached and the rest after it.
    await drain(
      provider.chat(
        chatRequest({
          systemPrompt: 'Be brief.\n\ntoday',
          systemPromptParts: { stable: 'Be brief.', dynamic: 'today' },
        }),
        signal(),
      ),
    );
    expect(bodyOf(server, 1).system).toEqual([
      { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'today' },
    ]);
    await drain(
      provider.chat(
        chatRequest({
          systemPrompt: '',
          systemPromptParts: { stable: '', dynamic: '' },
          maxOutputTokens: 10,
        }),
        signal(),
      ),
    );
    expect(bodyOf(server, 2)).not.toHaveProperty('system');
    expect(bodyOf(server, 2).max_tokens).toBe(10);
  });
});

describe('models and options', () => {
  test('the catalogue: unique ids, 200k or 1M windows, every model usable by an Agent', async () => {
    const ids = ANTHROPIC_MODELS.map((model) => model.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const model of ANTHROPIC_MODELS) expect([200_000, 1_000_000]).toContain(model.contextWindow);
    const provider = anthropicProvider({ apiKey: API_KEY, baseURL: server.url });
    expect(provider.id).toBe('anthropic-messages');
    expect(provider.models).toBe(ANTHROPIC_MODELS);
    const agent = await new AgentBuilder({ defaultModel: 'claude-opus-5-5' })
      .registerModelProvider(provider)
      .build();
    await agent.shutdown();
  });

  test('`models` replaces the catalogue; an unknown id works once its ModelInfo is given', async () => {
    const custom: AnthropicModelInfo = {
      id: 'claude-next-preview',
      displayName: 'Claude Next (preview)',
      contextWindow: 2_000_000,
      capabilities: { toolUse: true, vision: true, streaming: true },
    };
    server.enqueue(textReply(['hi']));
    const provider = providerFor(server, { id: 'claude-proxy', models: [...ANTHROPIC_MODELS, custom] });
    expect(provider.id).toBe('claude-proxy');
    expect(provider.models.at(-1)).toBe(custom);
    const { error } = await drain(provider.chat(chatRequest({ modelId: 'claude-next-preview' }), signal()));
    expect(error).toBeUndefined();
    expect(bodyOf(server, 0)).toMatchObject({ model: 'claude-next-preview', max_tokens: 8192 });

    const only = providerFor(server, { models: [custom] });
    expect(only.models).toEqual([custom]);
    expect(() => only.chat(chatRequest({ modelId: 'claude-opus-5-5' }), signal())).toThrow(
      /MODEL_NOT_SUPPORTED/,
    );
  });

  test('bad options are refused with INVALID_CONFIG', () => {
    const bad = [
      { thinking: { budgetTokens: 500 } },
      { models: [] },
      { models: [ANTHROPIC_MODELS[0] as AnthropicModelInfo, ANTHROPIC_MODELS[0] as AnthropicModelInfo] },
      { maxRetries: -1 },
    ];
    for (const options of bad) {
      let thrown: unknown;
      try {
        anthropicProvider({ apiKey: API_KEY, ...options });
      } catch (error) {
        thrown = error;
      }
      expect(isAgentError(thrown) && thrown.code).toBe('INVALID_CONFIG');
    }
  });

  test('the rules checker itself catches what the API rejects', () => {
    expect(
      messagesApiViolations({
        max_tokens: 10,
        temperature: 1,
        messages: [
          {
            role: 'assistant',
            content: [
              { type: 'text', text: 'hi' },
              { type: 'tool_use', id: 't', input: {} },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'text', text: ' ' },
              { type: 'tool_result', tool_use_id: 't' },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x' }] },
        ],
      }),
    ).toEqual([
      'temperature is rejected by API version 2026-10-21',
      'the first message must be a user message',
      'messages[1] (user): a text block must hold non-whitespace text',
      'messages[1] (user): tool_result blocks must come before any other content',
      'messages[2] (user): roles must alternate',
      'messages[2] (user): tool_result x has no tool_use in the previous message',
    ]);
  });
});
