/**
 * BeforeModelCall and AfterModelCall: an input guardrail edits or stops a request before it is sent, an output
 * guardrail replaces or stops an answer before any of it is emitted or saved. Failures of the handlers are
 * PLUGIN_ERROR and count as `continue`, as for every hook.
 */
import { afterEach, describe, expect, test } from 'vitest';
import {
  type AgentEventPayload,
  type ChatRequest,
  InMemorySessionStorage,
  type ModelCallAnswerData,
  type ModelCallRequestData,
} from '../src/index.js';
import { ScriptedModelProvider, scriptedModel } from '../src/testing/index.js';
import {
  buildAgent,
  collectTurn,
  hookPlugin,
  runTurn,
  shutdownAgents,
  storedPayloads,
} from './support/agent-fixtures.js';

afterEach(shutdownAgents);

const SECRET = 'sk-live-0123456789abcdef';

function redact(text: string): string {
  return text.replaceAll(/sk-live-[0-9a-f]+/g, '[REDACTED]');
}

/** An input guardrail: every text of every message and the system prompt with secrets redacted. */
function redactingHandler(payload: { data: unknown }) {
  const data = payload.data as ModelCallRequestData;
  const messages = data.messages.map((message) => {
    if (message.type === 'user' || message.type === 'assistant') {
      return {
        ...message,
        content: message.content.map((block) =>
          block.type === 'text' ? { ...block, text: redact(block.text) } : block,
        ),
      };
    }
    if (message.type === 'system') return { ...message, content: redact(message.content) };
    return message;
  });
  return { type: 'continue_with' as const, data: { messages, systemPrompt: redact(data.systemPrompt) } };
}

function wireText(request: ChatRequest | undefined): string {
  return JSON.stringify([request?.systemPrompt, request?.messages]);
}

function texts(payloads: readonly AgentEventPayload[]): string {
  return payloads.map((payload) => (payload.type === 'text_delta' ? payload.text : '')).join('');
}

describe('BeforeModelCall', () => {
  test('a redaction changes what the provider receives, turn and compaction calls alike, and not the saved history', async () => {
    const storage = new InMemorySessionStorage();
    const provider = new ScriptedModelProvider({
      models: [scriptedModel({ contextWindow: 2_000 })],
      responses: [
        [
          { type: 'text', text: 'noted' },
          { type: 'usage', usage: { inputTokens: 1_900, outputTokens: 5 } },
        ],
        [{ type: 'text', text: 'again' }],
      ],
      byPurpose: { compaction: [[{ type: 'text', text: 'SUMMARY' }]] },
    });
    const seen: ModelCallRequestData['purpose'][] = [];
    const { agent } = await buildAgent({
      provider,
      sessionStorage: storage,
      config: { compactThreshold: 0.5, systemInstructions: [`The key is ${SECRET}.`] },
      plugins: [
        hookPlugin({
          id: 'redactor',
          hooks: {
            BeforeModelCall: (payload) => {
              seen.push((payload.data as ModelCallRequestData).purpose);
              return redactingHandler(payload);
            },
          },
        }),
      ],
    });
    const session = await agent.newSession();
    await runTurn(session, `my key is ${SECRET}`);
    await runTurn(session, 'go on');
    expect(seen).toEqual(['turn', 'compaction', 'turn']);
    expect(provider.requests).toHaveLength(3);
    for (const request of provider.requests) {
      expect(wireText(request)).not.toContain(SECRET);
    }
    expect(wireText(provider.requests[0])).toContain('my key is [REDACTED]');
    // The session keeps what the user wrote; only the request was changed.
    expect(JSON.stringify(await storedPayloads(storage, session.id))).toContain(SECRET);
  });

  test('an abort stops the call before it is sent: MODEL_CALL_BLOCKED, then turn_complete', async () => {
    const provider = new ScriptedModelProvider({ responses: [[{ type: 'text', text: 'never' }]] });
    const { agent } = await buildAgent({
      provider,
      plugins: [
        hookPlugin({
          id: 'guard',
          hooks: { BeforeModelCall: () => ({ type: 'abort', reason: 'no secrets' }) },
        }),
      ],
    });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'hello');
    expect(provider.requests).toHaveLength(0);
    expect(turn.types).toEqual(['error', 'turn_complete']);
    expect(turn.errors[0]?.code).toBe('MODEL_CALL_BLOCKED');
    expect(turn.errors[0]?.message).toContain('no secrets');
  });

  test('a malformed edit and a throwing handler are PLUGIN_ERRORs; the request goes out unchanged', async () => {
    const provider = new ScriptedModelProvider({ responses: [[{ type: 'text', text: 'fine' }]] });
    const { agent } = await buildAgent({
      provider,
      plugins: [
        hookPlugin({
          id: 'broken',
          hooks: {
            BeforeModelCall: [
              () => ({ type: 'continue_with', data: { messages: [{ type: 'nonsense' }] } }),
              () => {
                throw new Error('handler crashed');
              },
            ],
          },
        }),
      ],
    });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'hello');
    expect(turn.errors.map((error) => error.code)).toEqual(['PLUGIN_ERROR', 'PLUGIN_ERROR']);
    expect(provider.requests[0]?.messages.at(-1)).toEqual({
      type: 'user',
      content: [{ type: 'text', text: 'hello' }],
    });
    expect(texts(turn.payloads)).toBe('fine');
  });
});

describe('AfterModelCall', () => {
  test('a replaced text is what the client sees and the log keeps; the handler saw the whole answer first', async () => {
    const storage = new InMemorySessionStorage();
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'text', text: 'the password ' },
          { type: 'text', text: 'is hunter2' },
        ],
      ],
    });
    const answers: ModelCallAnswerData[] = [];
    const { agent } = await buildAgent({
      provider,
      sessionStorage: storage,
      plugins: [
        hookPlugin({
          id: 'filter',
          hooks: {
            AfterModelCall: (payload) => {
              const data = payload.data as ModelCallAnswerData;
              answers.push(data);
              return { type: 'continue_with', data: { text: data.text.replace('hunter2', '*****') } };
            },
          },
        }),
      ],
    });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'tell me');
    expect(answers.map((answer) => answer.text)).toEqual(['the password is hunter2']);
    expect(texts(turn.payloads)).toBe('the password is *****');
    const saved = JSON.stringify(await storedPayloads(storage, session.id));
    expect(saved).toContain('the password is *****');
    expect(saved).not.toContain('hunter2');
  });

  test('a blocked answer reaches neither the client nor the log; its usage is still counted', async () => {
    const storage = new InMemorySessionStorage();
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'text', text: 'FORBIDDEN ANSWER' },
          { type: 'tool_call', toolName: 'nothing' },
          { type: 'usage', usage: { inputTokens: 10, outputTokens: 3 } },
        ],
      ],
    });
    const { agent } = await buildAgent({
      provider,
      sessionStorage: storage,
      plugins: [
        hookPlugin({
          id: 'filter',
          hooks: { AfterModelCall: () => ({ type: 'abort', reason: 'policy' }) },
        }),
      ],
    });
    const session = await agent.newSession();
    const turn = await collectTurn(await session.sendMessage('tell me'));
    expect(JSON.stringify(turn.payloads)).not.toContain('FORBIDDEN');
    expect(turn.types).toEqual(['usage', 'error', 'turn_complete']);
    expect(turn.errors[0]?.code).toBe('MODEL_CALL_BLOCKED');
    const saved = await storedPayloads(storage, session.id);
    expect(JSON.stringify(saved)).not.toContain('FORBIDDEN');
    // Neither the text nor the tool call of the blocked answer was saved; its usage record was.
    expect(saved.map((payload) => payload.type).filter((type) => type !== 'metadata')).toEqual([
      'user_message',
    ]);
    expect(saved.some((payload) => payload.type === 'metadata' && payload.key === 'usage')).toBe(true);
  });
});

describe('the model-call hooks keep the rules of every hook', () => {
  test('a handler that never answers counts as continue (PLUGIN_ERROR), or stops the call when tapped with onTimeout abort', async () => {
    const never = () => new Promise<undefined>(() => undefined);
    const provider = new ScriptedModelProvider({ responses: [[{ type: 'text', text: 'sent anyway' }]] });
    const { agent } = await buildAgent({
      provider,
      config: { toolTimeoutMs: 20 },
      plugins: [hookPlugin({ id: 'slow', hooks: { BeforeModelCall: never } })],
    });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'hello');
    expect(provider.requests).toHaveLength(1);
    expect(turn.errors.map((error) => error.code)).toEqual(['PLUGIN_ERROR']);
    expect(texts(turn.payloads)).toBe('sent anyway');

    const gated = new ScriptedModelProvider({ responses: [[{ type: 'text', text: 'never sent' }]] });
    const strict = await buildAgent({
      provider: gated,
      config: { toolTimeoutMs: 20 },
      plugins: [
        {
          id: 'gate',
          displayName: 'Gate',
          description: 'A guardrail that fails closed.',
          initialize: async () => undefined,
          apply: (context) => {
            context.tap('BeforeModelCall', never, { onTimeout: 'abort' });
          },
          shutdown: async () => undefined,
        },
      ],
    });
    const closed = await runTurn(await strict.agent.newSession(), 'hello');
    expect(gated.requests).toHaveLength(0);
    expect(closed.errors.map((error) => error.code)).toEqual(['PLUGIN_ERROR', 'MODEL_CALL_BLOCKED']);
  });

  test('handlers run in registration order, each seeing what the one before left', async () => {
    const provider = new ScriptedModelProvider({ responses: [[{ type: 'text', text: 'raw' }]] });
    const seen: string[] = [];
    const { agent } = await buildAgent({
      provider,
      plugins: [
        hookPlugin({
          id: 'chain',
          hooks: {
            AfterModelCall: [
              (payload) => {
                seen.push((payload.data as ModelCallAnswerData).text);
                return { type: 'continue_with', data: { text: 'first' } };
              },
              (payload) => {
                seen.push((payload.data as ModelCallAnswerData).text);
                return { type: 'continue_with', data: { text: 'second' } };
              },
            ],
          },
        }),
      ],
    });
    const turn = await runTurn(await agent.newSession(), 'hello');
    expect(seen).toEqual(['raw', 'first']);
    expect(texts(turn.payloads)).toBe('second');
  });
});
