import { getEventListeners } from 'node:events';
import {
  type AgentEvent,
  type ChatRequest,
  InMemorySessionStorage,
  isAgentError,
  templates,
} from '@youyou/agent';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { errorReply, sseReply } from '../../../test-support/openai-wire.js';
import { startWireServer, type WireServer } from '../../../test-support/wire-server.js';
import { collect, DIALECTS, errorsOf, startSession, TEST_API_KEY, typesOf } from './support/dialects.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await server.close();
});

function request(modelId: string): ChatRequest {
  return {
    modelId,
    purpose: 'turn',
    systemPrompt: 'You are terse.',
    systemPromptParts: { stable: 'You are terse.', dynamic: '' },
    messages: [{ type: 'user', content: [{ type: 'text', text: 'hi' }] }],
    tools: [],
  };
}

describe.each(DIALECTS)('$name failures', (dialect) => {
  test('a malformed SSE line is a non-retryable PROVIDER_ERROR that says so', async () => {
    const [first, ...rest] = dialect.partialText(['Hel']);
    server.enqueue(sseReply([first!, ...rest, { raw: 'data: {"choices": [oops\n\n' }]));
    const { agent, session } = await startSession({
      provider: dialect.provider({ server }),
      modelId: dialect.modelId,
    });
    const events = await collect(await session.sendMessage('hi'));

    const [error] = errorsOf(events);
    expect(error?.code).toBe('PROVIDER_ERROR');
    expect(error?.retryable).toBe(false);
    expect(error?.message).toMatch(/malformed stream event/);
    expect(typesOf(events).at(-1)).toBe('turn_complete');
    await agent.shutdown();
  });

  test('a connection dropped mid-stream is a retryable error and the partial answer is saved incomplete', async () => {
    const events = dialect.partialText(['Hel', 'lo']);
    server.enqueue(sseReply(events, { dropAfter: events.length }));
    const storage = new InMemorySessionStorage();
    const { agent, session } = await startSession({
      provider: dialect.provider({ server }),
      modelId: dialect.modelId,
      storage,
    });
    const turnEvents = await collect(await session.sendMessage('hi'));

    expect(typesOf(turnEvents)).toEqual(['text_delta', 'text_delta', 'error', 'turn_complete']);
    const [error] = errorsOf(turnEvents);
    expect(error?.code).toBe('PROVIDER_ERROR');
    expect(error?.retryable).toBe(true);
    const saved = (await storage.loadSession(session.id)) ?? [];
    expect(saved.map((event) => event.payload)).toContainEqual({
      type: 'assistant_message',
      content: [{ type: 'text', text: 'Hello' }],
      status: 'incomplete',
    });
    expect(server.requests).toHaveLength(1);
    await agent.shutdown();
  });

  test('a 429 with Retry-After: 0 is retried by the SDK and the turn completes', async () => {
    server.enqueue(
      errorReply({
        status: 429,
        message: 'Rate limit reached',
        type: 'requests',
        code: 'rate_limit_exceeded',
        headers: { 'retry-after': '0' },
      }),
      dialect.text(['after retry']),
    );
    const { agent, session } = await startSession({
      provider: dialect.provider({ server, maxRetries: 1 }),
      modelId: dialect.modelId,
    });
    const events = await collect(await session.sendMessage('hi'));

    expect(server.requests).toHaveLength(2);
    expect(errorsOf(events)).toEqual([]);
    expect(typesOf(events)).toEqual(['text_delta', 'usage', 'turn_complete']);
    await agent.shutdown();
  });

  test('a 429 that outlasts the retries is a retryable error', async () => {
    const busy = errorReply({ status: 429, message: 'Rate limit reached', headers: { 'retry-after': '0' } });
    server.enqueue(busy, busy);
    const provider = dialect.provider({ server, maxRetries: 1 });
    const error = await drain(provider.chat(request(dialect.modelId), new AbortController().signal));
    expect(server.requests).toHaveLength(2);
    expect(error?.code).toBe('PROVIDER_ERROR');
    expect(error?.retryable).toBe(true);
  });

  test('a 400 is not retried: one request, an error event, retryable false', async () => {
    server.enqueue(
      errorReply({ status: 400, message: "Invalid value for 'temperature'", code: 'invalid_value' }),
    );
    const { agent, session } = await startSession({
      provider: dialect.provider({ server }),
      modelId: dialect.modelId,
    });
    const events = await collect(await session.sendMessage('hi'));

    expect(server.requests).toHaveLength(1);
    const [error] = errorsOf(events);
    expect(error?.code).toBe('PROVIDER_ERROR');
    expect(error?.retryable).toBe(false);
    expect(error?.contextLengthExceeded).toBe(false);
    expect(error?.message).toContain("Invalid value for 'temperature'");
    expect(typesOf(events)).toEqual(['error', 'turn_complete']);
    await agent.shutdown();
  });

  test('a 413 marks the error contextLengthExceeded', async () => {
    server.enqueue(errorReply({ status: 413, message: 'Request too large for the model' }));
    const provider = dialect.provider({ server });
    const error = await drain(provider.chat(request(dialect.modelId), new AbortController().signal));
    expect(error?.code).toBe('PROVIDER_ERROR');
    expect(error?.contextLengthExceeded).toBe(true);
    expect(error?.retryable).toBe(false);
  });

  test('a context-length 400 makes the agent compact and send the turn once more', async () => {
    server.enqueue(
      errorReply({
        status: 400,
        message:
          "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
        code: 'context_length_exceeded',
      }),
      dialect.text(['The user said hi.']),
      dialect.text(['Hello again']),
    );
    const { agent, session } = await startSession({
      provider: dialect.provider({ server }),
      modelId: dialect.modelId,
    });
    const events = await collect(await session.sendMessage('hi'));

    expect(server.requests).toHaveLength(3);
    // The second request is the compaction request; the third sends the turn again on the summary.
    expect(server.requests[1]!.rawBody).toContain(JSON.stringify(templates.COMPACT_PROMPT).slice(1, 60));
    expect(server.requests[2]!.rawBody).toContain('The user said hi.');
    expect(errorsOf(events)).toEqual([]);
    expect(typesOf(events)).toEqual(['usage', 'context_compacted', 'text_delta', 'usage', 'turn_complete']);
    expect(session.messages().at(-1)).toMatchObject({
      type: 'assistant',
      content: [{ text: 'Hello again' }],
    });
    await agent.shutdown();
  });

  test('cancelling the turn mid-stream closes the HTTP stream', async () => {
    server.enqueue(sseReply(dialect.partialText(['Hel']), { hang: true }));
    const { agent, session } = await startSession({
      provider: dialect.provider({ server }),
      modelId: dialect.modelId,
    });
    const turn = await session.sendMessage('hi');
    const events: AgentEvent[] = [];
    for await (const event of turn) {
      events.push(event);
      if (event.payload.type === 'text_delta') turn.cancel();
    }
    await server.clientClosed();
    expect(typesOf(events)).toEqual(['text_delta', 'turn_cancelled']);
    await agent.shutdown();
  });

  test('no abort listener is left on the signal after an answer, a dropped stream or a 400', async () => {
    const partial = dialect.partialText(['Hel', 'lo']);
    server.enqueue(
      dialect.text(['a']),
      sseReply(partial, { dropAfter: partial.length }),
      errorReply({ status: 400, message: 'bad request' }),
    );
    const provider = dialect.provider({ server });
    const left: number[] = [];
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const controller = new AbortController();
      await drain(provider.chat(request(dialect.modelId), controller.signal));
      left.push(getEventListeners(controller.signal, 'abort').length);
    }
    expect(server.requests).toHaveLength(3);
    expect(left).toEqual([0, 0, 0]);
  });

  test('the API key never reaches an error, an event or the storage', async () => {
    server.enqueue(
      errorReply({
        status: 401,
        message: `Incorrect API key provided: ${TEST_API_KEY}. You can find your API key at the dashboard.`,
        type: 'invalid_request_error',
        code: 'invalid_api_key',
      }),
    );
    const storage = new InMemorySessionStorage();
    const { agent, session } = await startSession({
      provider: dialect.provider({ server }),
      modelId: dialect.modelId,
      storage,
    });
    const events = await collect(await session.sendMessage('hi'));

    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${TEST_API_KEY}`);
    const [error] = errorsOf(events);
    expect(error?.code).toBe('PROVIDER_ERROR');
    expect(error?.message).toContain('Incorrect API key provided: [redacted]');
    expect(error?.message).not.toContain(TEST_API_KEY);
    expect(error?.stack ?? '').not.toContain(TEST_API_KEY);
    expect(String(error?.cause ?? '')).not.toContain(TEST_API_KEY);
    expect(JSON.stringify(events)).not.toContain(TEST_API_KEY);
    expect(JSON.stringify(await storage.loadSession(session.id))).not.toContain(TEST_API_KEY);
    await agent.shutdown();
  });
});

/** Reads a provider's stream to its end; returns the AgentError it threw, if any. */
async function drain(stream: ReturnType<ReturnType<(typeof DIALECTS)[number]['provider']>['chat']>) {
  try {
    for await (const _event of await stream) {
      // Only the failure matters here.
    }
  } catch (error) {
    if (isAgentError(error)) return error;
    throw error;
  }
  return undefined;
}
