import { InMemorySessionStorage, isAgentError } from '@youyou/agent';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  errorEvent,
  errorReply,
  messageStart,
  sseReply,
  textBlock,
  textReply,
} from '../../../test-support/anthropic-wire.js';
import { messagesApiViolations } from '../../../test-support/anthropic-wire-rules.js';
import { startWireServer, type WireServer } from '../../../test-support/wire-server.js';
import { anthropicProvider } from '../src/index.js';
import {
  API_KEY,
  agentFor,
  bodyOf,
  chatRequest,
  collect,
  drain,
  providerFor,
  turnError,
  types,
} from './support/harness.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await server.close();
});

/** The first events of a text answer that never finishes: its block's start and two deltas. */
const PARTIAL = [messageStart(), ...textBlock(0, ['Half an ', 'answer']).slice(0, 3)];

describe('failures through an Agent turn', () => {
  test('a malformed SSE line ends the turn with a PROVIDER_ERROR that says so', async () => {
    server.enqueue(
      sseReply([
        messageStart(),
        { raw: 'event: content_block_start\ndata: {"type": "content_block_start", "index": 0,\n\n' },
      ]),
    );
    const agent = await agentFor({ server });
    const session = await agent.newSession();
    const events = await collect(await session.sendMessage('hi'));
    expect(types(events)).toEqual(['error', 'turn_complete']);
    const error = turnError(events);
    expect(error).toMatchObject({ code: 'PROVIDER_ERROR', retryable: false });
    expect(error.message).toContain('not valid JSON');
    await agent.shutdown();
  });

  test('a connection dropped mid-stream: error event, the partial answer saved as incomplete', async () => {
    server.enqueue(sseReply(PARTIAL, { dropAfter: PARTIAL.length }));
    const storage = new InMemorySessionStorage();
    const agent = await agentFor({ server, storage });
    const session = await agent.newSession();
    const events = await collect(await session.sendMessage('hi'));
    expect(types(events)).toEqual(['text_delta', 'text_delta', 'error', 'turn_complete']);
    expect(turnError(events)).toMatchObject({ code: 'PROVIDER_ERROR', retryable: true });
    expect(turnError(events).message).toContain('dropped mid-stream');
    const saved = (await storage.loadSession(session.id))?.map((event) => event.payload);
    expect(saved).toContainEqual({
      type: 'assistant_message',
      content: [{ type: 'text', text: 'Half an answer' }],
      status: 'incomplete',
    });
    await agent.shutdown();
  });

  test('429 with retry-after: 0 is retried by the SDK and the turn succeeds', async () => {
    server.enqueue(
      errorReply({
        status: 429,
        type: 'rate_limit_error',
        message: 'Number of requests has exceeded your rate limit',
        headers: { 'retry-after': '0' },
      }),
      textReply(['Fine.']),
    );
    const agent = await agentFor({ server });
    const session = await agent.newSession();
    const events = await collect(await session.sendMessage('hi'));
    expect(types(events)).toEqual(['text_delta', 'usage', 'turn_complete']);
    expect(server.requests).toHaveLength(2);
    await agent.shutdown();
  });

  test('400 is not retried and is not retryable', async () => {
    server.enqueue(
      errorReply({ status: 400, type: 'invalid_request_error', message: 'max_tokens: field required' }),
    );
    const agent = await agentFor({ server });
    const session = await agent.newSession();
    const events = await collect(await session.sendMessage('hi'));
    expect(types(events)).toEqual(['error', 'turn_complete']);
    const error = turnError(events);
    expect(error).toMatchObject({ code: 'PROVIDER_ERROR', retryable: false, contextLengthExceeded: false });
    expect(error.message).toContain('max_tokens: field required');
    expect(server.requests).toHaveLength(1);
    await agent.shutdown();
  });

  test('413 prompt too long: the turn compacts the history and asks again', async () => {
    server.enqueue(
      textReply(['First answer.']),
      errorReply({ status: 413, type: 'request_too_large', message: 'prompt is too long: 1200000 tokens' }),
      textReply(['A summary of the talk so far.']),
      textReply(['Second answer.']),
    );
    const agent = await agentFor({ server });
    const session = await agent.newSession();
    await collect(await session.sendMessage('first question'));
    const events = await collect(await session.sendMessage('second question'));

    expect(types(events)).toEqual(['usage', 'context_compacted', 'text_delta', 'usage', 'turn_complete']);
    expect(server.requests).toHaveLength(4);
    const bodies = server.requests.map((_, index) => bodyOf(server, index));
    for (const body of bodies) expect(messagesApiViolations(body)).toEqual([]);
    // The compaction request is the runtime's own: one user message, no tools.
    expect(bodies[2]?.messages).toHaveLength(1);
    const retried = JSON.stringify(bodies[3]?.messages);
    expect(retried).toContain('A summary of the talk so far.');
    expect(retried).toContain('<system>');
    await agent.shutdown();
  });

  test('cancelling mid-stream closes the HTTP stream at once', async () => {
    server.enqueue(sseReply(PARTIAL, { hang: true }));
    const agent = await agentFor({ server });
    const session = await agent.newSession();
    const turn = await session.sendMessage('hi');
    const seen: string[] = [];
    for await (const event of turn) {
      seen.push(event.payload.type);
      if (event.payload.type === 'text_delta') turn.cancel();
    }
    await server.clientClosed();
    expect(seen).toEqual(['text_delta', 'turn_cancelled']);
    await agent.shutdown();
  });
});

describe('failures of the provider on its own', () => {
  test('413 or 400 saying the prompt is too long set contextLengthExceeded', async () => {
    server.enqueue(
      errorReply({
        status: 400,
        type: 'invalid_request_error',
        message: 'prompt is too long: 210000 tokens > 200000 maximum',
      }),
      errorReply({
        status: 413,
        type: 'request_too_large',
        message: 'Request exceeds the maximum allowed number of bytes.',
      }),
    );
    const provider = providerFor(server);
    const tooLong = await drain(provider.chat(chatRequest(), new AbortController().signal));
    expect(tooLong.error).toMatchObject({
      code: 'PROVIDER_ERROR',
      contextLengthExceeded: true,
      retryable: false,
    });
    const tooBig = await drain(provider.chat(chatRequest(), new AbortController().signal));
    expect(tooBig.error).toMatchObject({ code: 'PROVIDER_ERROR', contextLengthExceeded: false });
  });

  test('an overloaded_error event is a retryable PROVIDER_ERROR; other error events are not', async () => {
    server.enqueue(
      sseReply([messageStart(), errorEvent('overloaded_error', 'Overloaded')]),
      sseReply([messageStart(), errorEvent('invalid_request_error', 'bad thing')]),
    );
    const provider = providerFor(server);
    const overloaded = await drain(provider.chat(chatRequest(), new AbortController().signal));
    expect(overloaded.error).toMatchObject({ code: 'PROVIDER_ERROR', retryable: true });
    expect(String((overloaded.error as Error).message)).toContain('overloaded_error: Overloaded');
    const invalid = await drain(provider.chat(chatRequest(), new AbortController().signal));
    expect(invalid.error).toMatchObject({ code: 'PROVIDER_ERROR', retryable: false });
  });

  test('5xx after the retries is retryable; a refused connection too', async () => {
    server.enqueue(errorReply({ status: 529, type: 'overloaded_error', message: 'Overloaded' }));
    const provider = providerFor(server, { maxRetries: 0 });
    const overloaded = await drain(provider.chat(chatRequest(), new AbortController().signal));
    expect(overloaded.error).toMatchObject({ code: 'PROVIDER_ERROR', retryable: true });

    // Port 1 on loopback: nothing listens there, so the connection is refused.
    const unreachable = anthropicProvider({ apiKey: API_KEY, baseURL: 'http://127.0.0.1:1', maxRetries: 0 });
    const refused = await drain(unreachable.chat(chatRequest(), new AbortController().signal));
    expect(refused.error).toMatchObject({ code: 'PROVIDER_ERROR', retryable: true });
    expect((refused.error as Error).message).toContain('could not reach the Messages API');
  });

  test('the API key never shows in an error, its cause or a stored row', async () => {
    const echo = `invalid x-api-key: ${API_KEY}`;
    server.enqueue(
      errorReply({ status: 401, type: 'authentication_error', message: echo }),
      sseReply([messageStart(), errorEvent('api_error', echo)]),
    );
    const provider = providerFor(server);
    const unauthorised = await drain(provider.chat(chatRequest(), new AbortController().signal));
    const storage = new InMemorySessionStorage();
    const agent = await agentFor({ server, storage });
    const session = await agent.newSession();
    const events = await collect(await session.sendMessage('hi'));

    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    for (const error of [unauthorised.error, turnError(events)]) {
      expect(isAgentError(error)).toBe(true);
      const agentError = error as Error & { cause?: unknown };
      expect(agentError.message).toContain('[redacted]');
      const everything = `${agentError.message} ${JSON.stringify(agentError)} ${String(agentError.cause)} ${agentError.stack}`;
      expect(everything).not.toContain(API_KEY);
    }
    expect((unauthorised.error as Error).message).toContain('check the API key');
    expect(JSON.stringify(await storage.loadSession(session.id))).not.toContain(API_KEY);
    await agent.shutdown();
  });

  test('an aborted signal before the call: REQUEST_CANCELLED, no request sent', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await drain(providerFor(server).chat(chatRequest(), controller.signal));
    expect(result.error).toMatchObject({ code: 'REQUEST_CANCELLED' });
    expect(server.requests).toHaveLength(0);
  });
});
