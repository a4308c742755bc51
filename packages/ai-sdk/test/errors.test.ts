import { getEventListeners } from 'node:events';
import { APICallError, type LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { isAgentError } from '@youyou/agent';
import { MockLanguageModelV3 } from 'ai/test';
import { describe, expect, test } from 'vitest';
import { aiSdkProvider } from '../src/index.js';
import {
  chatError,
  chatRequest,
  collect,
  finish,
  MODEL_ID,
  mockModel,
  modelInfo,
  streamOf,
  textParts,
} from './support.js';

const request = chatRequest([{ type: 'user', content: [{ type: 'text', text: 'hi' }] }]);

function apiError(options: {
  status: number;
  message: string;
  body?: string;
  retryable?: boolean;
}): APICallError {
  return new APICallError({
    message: options.message,
    url: 'http://127.0.0.1/v1/messages',
    requestBodyValues: {},
    statusCode: options.status,
    ...(options.body === undefined ? {} : { responseBody: options.body }),
    ...(options.retryable === undefined ? {} : { isRetryable: options.retryable }),
  });
}

/** A mock whose doStream fails with the given errors in turn, then answers `ok`. */
function failingModel(...errors: unknown[]): MockLanguageModelV3 {
  let calls = 0;
  return new MockLanguageModelV3({
    modelId: MODEL_ID,
    doStream: async () => {
      const error = errors[calls];
      calls += 1;
      if (error !== undefined) throw error;
      return streamOf([...textParts('ok'), finish('stop')]);
    },
  });
}

function providerOf(model: MockLanguageModelV3, retries: { maxRetries?: number } = { maxRetries: 0 }) {
  return aiSdkProvider({ id: 'ai-sdk', models: [{ model, info: modelInfo() }], retryDelayMs: 0, ...retries });
}

describe('provider errors', () => {
  test.each([
    {
      name: 'Anthropic "prompt is too long"',
      error: apiError({ status: 400, message: 'prompt is too long: 210000 tokens > 200000 maximum' }),
    },
    {
      name: "OpenAI's body only",
      error: apiError({
        status: 400,
        message: 'Bad Request',
        body: '{"error":{"message":"This model\'s maximum context length is 128000 tokens.","code":"context_length_exceeded"}}',
      }),
    },
    { name: 'HTTP 413', error: apiError({ status: 413, message: 'Request Entity Too Large' }) },
    {
      name: 'a streamed error object',
      error: { type: 'invalid_request_error', message: 'too many tokens in the input' },
    },
  ])('$name → contextLengthExceeded, not retryable', async ({ error }) => {
    const failure = await chatError(providerOf(failingModel(error)), request);
    expect(isAgentError(failure) && failure.code).toBe('PROVIDER_ERROR');
    expect(failure).toMatchObject({ contextLengthExceeded: true, retryable: false });
  });

  test.each([
    {
      name: 'HTTP 503',
      error: apiError({ status: 503, message: 'Service Unavailable', retryable: true }),
      retryable: true,
    },
    { name: 'HTTP 529 overloaded', error: apiError({ status: 529, message: 'Overloaded' }), retryable: true },
    { name: 'HTTP 401', error: apiError({ status: 401, message: 'invalid x-api-key' }), retryable: false },
    {
      name: 'a dropped connection',
      error: new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } }),
      retryable: true,
    },
    {
      name: 'a streamed overload',
      error: { type: 'overloaded_error', message: 'Overloaded' },
      retryable: true,
    },
    { name: 'any other error', error: new Error('schema rejected'), retryable: false },
  ])('$name → retryable $retryable', async ({ error, retryable }) => {
    const failure = await chatError(providerOf(failingModel(error)), request);
    expect(failure).toMatchObject({ code: 'PROVIDER_ERROR', retryable, contextLengthExceeded: false });
    expect((failure as Error).message).toContain("provider 'ai-sdk', model 'mock-model'");
  });

  test('an API key the server echoes is not put in the message', async () => {
    const error = apiError({
      status: 401,
      message: 'Incorrect API key provided: sk-proj-abcdef123456. Bearer xyz',
    });
    const failure = (await chatError(providerOf(failingModel(error)), request)) as Error;
    expect(failure.message).not.toContain('sk-proj-abcdef123456');
    expect(failure.message).not.toContain('xyz');
    expect(failure.message).toContain('[redacted]');
  });
});

describe('retries', () => {
  test('a retryable failure before any event is retried and the answer streams', async () => {
    const model = failingModel(apiError({ status: 429, message: 'rate limited', retryable: true }));
    const events = await collect(providerOf(model, {}), request);
    expect(model.doStreamCalls).toHaveLength(2);
    expect(events[0]).toEqual({ type: 'text_delta', text: 'ok' });
  });

  test('an error part before any output is retried too', async () => {
    const model = mockModel([
      [
        { type: 'stream-start', warnings: [] },
        { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
      ],
      [...textParts('ok'), finish('stop')],
    ]);
    const events = await collect(providerOf(model, {}), request);
    expect(model.doStreamCalls).toHaveLength(2);
    expect(events.map((event) => event.type)).toEqual(['text_delta', 'usage', 'done']);
  });

  test('retries stop after maxRetries, and a non-retryable failure is not retried', async () => {
    const overloaded = apiError({ status: 503, message: 'busy', retryable: true });
    const retried = failingModel(overloaded, overloaded, overloaded);
    expect(await chatError(providerOf(retried, { maxRetries: 2 }), request)).toMatchObject({
      retryable: true,
    });
    expect(retried.doStreamCalls).toHaveLength(3);

    const rejected = failingModel(apiError({ status: 400, message: 'bad request' }));
    expect(await chatError(providerOf(rejected, { maxRetries: 2 }), request)).toMatchObject({
      retryable: false,
    });
    expect(rejected.doStreamCalls).toHaveLength(1);
  });
});

describe('cancellation', () => {
  test('aborting while doStream is pending ends the stream without an error', async () => {
    const model = new MockLanguageModelV3({
      modelId: MODEL_ID,
      doStream: () => new Promise(() => undefined),
    });
    const controller = new AbortController();
    const events = (await providerOf(model).chat(request, controller.signal))[Symbol.asyncIterator]();
    const next = events.next();
    controller.abort();
    expect(await next).toEqual({ done: true, value: undefined });
    expect(model.doStreamCalls[0]?.abortSignal?.aborted).toBe(true);
  });

  test('aborting mid-stream stops reading even when the model ignores its signal', async () => {
    const model = new MockLanguageModelV3({
      modelId: MODEL_ID,
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            controller.enqueue({ type: 'text-delta', id: 't', delta: 'Hel' });
          },
        }),
      }),
    });
    const controller = new AbortController();
    const events = (await providerOf(model).chat(request, controller.signal))[Symbol.asyncIterator]();
    expect(await events.next()).toEqual({ done: false, value: { type: 'text_delta', text: 'Hel' } });
    const next = events.next();
    controller.abort();
    expect(await next).toEqual({ done: true, value: undefined });
  });

  test('no abort listener is left on the signal after a request, a retry or a failure', async () => {
    const signal = new AbortController().signal;
    const busy = apiError({ status: 503, message: 'busy', retryable: true });
    await collect(providerOf(failingModel(busy), {}), request, signal);
    await collect(providerOf(failingModel(busy, busy), { maxRetries: 1 }), request, signal).catch(
      () => undefined,
    );
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  test('an already aborted signal calls no model', async () => {
    const model = mockModel([[...textParts('ok'), finish('stop')]]);
    const controller = new AbortController();
    controller.abort();
    expect(await collect(providerOf(model), request, controller.signal)).toEqual([]);
    expect(model.doStreamCalls).toHaveLength(0);
  });
});
