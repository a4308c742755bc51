import { request as httpRequest } from 'node:http';
import { afterEach, expect, test } from 'vitest';
import { createSession, type Harness, startHarness, TOKENS } from './support/harness.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function errorOf(response: Response): Promise<{ status: number; code: string; text: string }> {
  const text = await response.text();
  const body = JSON.parse(text) as { error: { code: string; message: string } };
  expect(typeof body.error.message).toBe('string');
  expect(text).not.toMatch(/\bat .*\.(ts|js):\d+/);
  expect(text).not.toContain(TOKENS.alice);
  return { status: response.status, code: body.error.code, text };
}

test('no token, a malformed header and an unknown token are 401 UNAUTHORIZED on every route', async () => {
  harness = await startHarness();
  const sessionId = await createSession(harness);
  for (const path of ['/sessions', `/sessions/${sessionId}`, `/sessions/${sessionId}/messages`, '/nowhere']) {
    expect(await errorOf(await harness.request(path, { as: null }))).toMatchObject({
      status: 401,
      code: 'UNAUTHORIZED',
    });
    const bad = await harness.request(path, { as: null, headers: { authorization: 'Bearer not-a-token' } });
    expect(await errorOf(bad)).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
    const basic = await harness.request(path, {
      as: null,
      headers: { authorization: `Basic ${TOKENS.alice}` },
    });
    expect(await errorOf(basic)).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
  }
});

test('an unknown route is 404 NOT_FOUND as JSON', async () => {
  harness = await startHarness();
  expect(await errorOf(await harness.request('/nowhere'))).toMatchObject({ status: 404, code: 'NOT_FOUND' });
  expect(await errorOf(await harness.request('/sessions', { method: 'DELETE' }))).toMatchObject({
    status: 404,
  });
});

test('bad JSON, a body that is not an object, an unknown field and bad input are 400 INVALID_INPUT', async () => {
  harness = await startHarness();
  const sessionId = await createSession(harness);
  const post = (body: string) =>
    harness?.request(`/sessions/${sessionId}/messages`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    }) as Promise<Response>;
  for (const body of ['{"content": ', '[1,2]', '{"content":"hi","extra":1}', '{"content":42}', '{}']) {
    expect(await errorOf(await post(body))).toMatchObject({ status: 400, code: 'INVALID_INPUT' });
  }
  const badCursor = await harness.request(`/sessions/${sessionId}/events`, {
    headers: { 'last-event-id': 'abc' },
  });
  expect(await errorOf(badCursor)).toMatchObject({ status: 400, code: 'INVALID_INPUT' });
  const badModel = await harness.request('/sessions', { method: 'POST', json: { modelId: 'no-such-model' } });
  expect((await errorOf(badModel)).status).toBe(400);
  expect(harness.provider.requests).toHaveLength(0);
});

test('a body over the limit is 413 PAYLOAD_TOO_LARGE, with or without Content-Length', async () => {
  harness = await startHarness({ limits: { maxBodyBytes: 1000 } });
  const sessionId = await createSession(harness);
  const big = JSON.stringify({ content: 'x'.repeat(2000) });
  const response = await harness.request(`/sessions/${sessionId}/messages`, {
    method: 'POST',
    body: big,
    headers: { 'content-type': 'application/json' },
  });
  expect(await errorOf(response)).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });

  // Chunked, so the server cannot refuse it by the header alone.
  const url = new URL(`${harness.url}/sessions/${sessionId}/messages`);
  const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const outgoing = httpRequest(
      url,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${TOKENS.alice}`,
          'content-type': 'application/json',
          'transfer-encoding': 'chunked',
        },
      },
      (incoming) => {
        let body = '';
        incoming.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, body }));
      },
    );
    outgoing.on('error', reject);
    outgoing.write(big.slice(0, 900));
    outgoing.end(big.slice(900));
  });
  expect(chunked.status).toBe(413);
  expect((JSON.parse(chunked.body) as { error: { code: string } }).error.code).toBe('PAYLOAD_TOO_LARGE');
  expect(harness.provider.requests).toHaveLength(0);
});

test('CORS answers a preflight from an allowed origin only when configured', async () => {
  harness = await startHarness({ cors: { origin: 'https://chat.example' } });
  const preflight = await fetch(`${harness.url}/sessions`, {
    method: 'OPTIONS',
    headers: {
      origin: 'https://chat.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type',
    },
  });
  expect(preflight.status).toBeLessThan(300);
  expect(preflight.headers.get('access-control-allow-origin')).toBe('https://chat.example');
  expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
  const other = await harness.request('/sessions', { headers: { origin: 'https://evil.example' } });
  expect(other.headers.get('access-control-allow-origin')).not.toBe('https://evil.example');
  await harness.close();

  harness = await startHarness();
  const plain = await harness.request('/sessions', { headers: { origin: 'https://chat.example' } });
  expect(plain.headers.get('access-control-allow-origin')).toBeNull();
});

test('an error event carries code, message and retryable, never a stack or a cause', async () => {
  const failure = new Error('upstream broke');
  harness = await startHarness({ responses: [[{ type: 'error', error: failure }]] });
  const sessionId = await createSession(harness);
  const response = await harness.request(`/sessions/${sessionId}/messages`, {
    method: 'POST',
    json: { content: 'hi' },
  });
  const text = await response.text();
  const errorLine = text.split('\n').find((line) => line.startsWith('data:') && line.includes('"error"'));
  expect(errorLine).toBeDefined();
  const event = JSON.parse(errorLine?.slice(5) ?? '{}') as { payload: { error: Record<string, unknown> } };
  expect(Object.keys(event.payload.error).sort()).toEqual(['code', 'message', 'retryable']);
  expect(typeof event.payload.error.code).toBe('string');
  expect(text).not.toContain('stack');
  expect(text).not.toMatch(/\bat .*\.(ts|js):\d+/);
  expect(text).toContain('event: turn_complete');
});
