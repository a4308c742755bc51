import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { afterEach, expect, test } from 'vitest';
import { createSession, type Harness, startHarness, TOKENS } from './support/harness.js';
import { contentParts, lookupTool, send, userMessage } from './support/ui-chat.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

test('text, reasoning and a tool call arrive as UI message parts through the AI SDK client', async () => {
  const ran: unknown[] = [];
  harness = await startHarness({
    tools: [lookupTool(ran)],
    responses: [
      [
        { type: 'reasoning', text: 'I should look ' },
        { type: 'reasoning', text: 'it up.' },
        { type: 'tool_call', toolName: 'lookup', arguments: { word: 'agent' }, callId: 'call_1' },
      ],
      [
        { type: 'text', text: 'An agent ' },
        { type: 'text', text: 'acts.' },
      ],
    ],
  });
  const sessionId = await createSession(harness);
  const { message, errors } = await send({
    url: harness.url,
    chatId: sessionId,
    messages: [userMessage('u1', 'What is an agent?')],
  });
  expect(errors).toEqual([]);
  expect(message.role).toBe('assistant');
  expect(contentParts(message)).toEqual([
    expect.objectContaining({ type: 'reasoning', text: 'I should look it up.', state: 'done' }),
    expect.objectContaining({
      type: 'dynamic-tool',
      toolName: 'lookup',
      toolCallId: 'call_1',
      state: 'output-available',
      input: { word: 'agent' },
      output: 'definition of agent',
    }),
    expect.objectContaining({ type: 'text', text: 'An agent acts.', state: 'done' }),
  ]);
  expect(ran).toEqual([{ word: 'agent' }]);
  // The turn really ran on the session: its log has the question and the answer.
  const saved = (await (await harness.request(`/sessions/${sessionId}/messages`)).json()) as {
    messages: { type: string; content: unknown }[];
  };
  expect(JSON.stringify(saved.messages)).toContain('What is an agent?');
  expect(JSON.stringify(saved.messages)).toContain('An agent acts.');
});

test('the wire is the UI message stream: its header, data-only SSE chunks, and [DONE] at the end', async () => {
  harness = await startHarness({ responses: [[{ type: 'text', text: 'Hi.' }]] });
  const sessionId = await createSession(harness);
  const response = await harness.request('/ui/chat', {
    method: 'POST',
    json: { id: sessionId, messages: [userMessage('u1', 'Hello')], trigger: 'submit-message' },
  });
  expect(response.status).toBe(200);
  expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  const data = (await response.text())
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => line.slice(6));
  expect(data.at(-1)).toBe('[DONE]');
  const types = data.slice(0, -1).map((line) => (JSON.parse(line) as { type: string }).type);
  expect(types).toEqual([
    'start',
    'start-step',
    'text-start',
    'text-delta',
    'text-end',
    'finish-step',
    'finish',
  ]);
});

test('a second request on the same session continues the conversation', async () => {
  harness = await startHarness({
    responses: [[{ type: 'text', text: 'Nice to meet you, Ada.' }], [{ type: 'text', text: 'You are Ada.' }]],
  });
  const sessionId = await createSession(harness);
  const first = await send({
    url: harness.url,
    chatId: sessionId,
    messages: [userMessage('u1', 'I am Ada.')],
  });
  const second = await send({
    url: harness.url,
    chatId: sessionId,
    // useChat sends the whole history; the session already has it and takes the new user message only.
    messages: [userMessage('u1', 'I am Ada.'), first.message, userMessage('u2', 'Who am I?')],
  });
  expect(contentParts(second.message)).toEqual([
    expect.objectContaining({ type: 'text', text: 'You are Ada.' }),
  ]);
  expect(second.message.id).not.toBe(first.message.id);
  // The model's second request held the first exchange: the conversation went on, it did not restart.
  const requests = harness.provider.requests;
  const lastRequest = JSON.stringify(requests.at(-1));
  expect(lastRequest).toContain('I am Ada.');
  expect(lastRequest).toContain('Nice to meet you, Ada.');
  expect(lastRequest).toContain('Who am I?');
  const saved = (await (await harness.request(`/sessions/${sessionId}/messages`)).json()) as {
    messages: { type: string }[];
  };
  expect(saved.messages.map((message) => message.type)).toEqual(['user', 'assistant', 'user', 'assistant']);
});

test('a model error reaches the client as an error chunk with its code, without the provider text', async () => {
  harness = await startHarness({
    responses: [[{ type: 'error', error: new Error('upstream down: key sk-secret') }]],
  });
  const sessionId = await createSession(harness);
  const { errors } = await send({ url: harness.url, chatId: sessionId, messages: [userMessage('u1', 'Hi')] });
  expect(errors.length).toBe(1);
  expect(errors[0]).toMatch(/^\[[A-Z_]+\]/);
  expect(errors[0]).not.toContain('sk-secret');
});

test("another tenant's session, an unknown one and bad auth are refused before any turn runs", async () => {
  harness = await startHarness({ responses: [[{ type: 'text', text: 'never' }]] });
  const sessionId = await createSession(harness, 'alice');
  const body = { id: sessionId, messages: [userMessage('u1', 'Hi')], trigger: 'submit-message' };

  const foreign = await harness.request('/ui/chat', { method: 'POST', as: 'bob', json: body });
  expect(foreign.status).toBe(404);
  expect(((await foreign.json()) as { error: { code: string } }).error.code).toBe('SESSION_NOT_FOUND');
  await expect(
    send({ url: harness.url, chatId: sessionId, messages: body.messages, as: 'bob' }),
  ).rejects.toThrow(/SESSION_NOT_FOUND/);
  const unknown = await harness.request('/ui/chat', {
    method: 'POST',
    json: { ...body, id: 'no-such-session' },
  });
  expect(unknown.status).toBe(404);

  const anonymous = await harness.request('/ui/chat', { method: 'POST', as: null, json: body });
  expect(anonymous.status).toBe(401);
  expect(((await anonymous.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
  const wrong = await harness.request('/ui/chat', {
    method: 'POST',
    as: null,
    headers: { authorization: 'Bearer not-a-token' },
    json: body,
  });
  expect(wrong.status).toBe(401);

  const bobReconnect = await harness.request(`/ui/chat/${sessionId}/stream`, { as: 'bob' });
  expect(bobReconnect.status).toBe(404);
  const noAuthReconnect = await harness.request(`/ui/chat/${sessionId}/stream`, { as: null });
  expect(noAuthReconnect.status).toBe(401);

  // Nothing ran: the model was never asked and alice's session is empty.
  expect(harness.provider.requests.length).toBe(0);
  const saved = (await (await harness.request(`/sessions/${sessionId}/messages`)).json()) as {
    messages: unknown[];
  };
  expect(saved.messages).toEqual([]);
});

test('bad bodies are clear 400 INVALID_INPUT errors', async () => {
  harness = await startHarness();
  const sessionId = await createSession(harness);
  const cases: unknown[] = [
    { id: sessionId, messages: [] },
    { id: sessionId, messages: 'hello' },
    { id: sessionId, messages: [{ role: 'user', parts: [{ type: 'step-start' }] }] },
    { id: sessionId, messages: [{ role: 'system', parts: [{ type: 'text', text: 'x' }] }] },
    { id: sessionId, messages: [userMessage('u1', 'Hi')], trigger: 'regenerate-message' },
    { id: sessionId, messages: [userMessage('u1', 'Hi')], extra: true },
  ];
  for (const json of cases) {
    const response = await harness.request('/ui/chat', { method: 'POST', json });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('INVALID_INPUT');
  }
});

test('a client that drops mid-turn reconnects with the transport and gets the whole answer', async () => {
  const steps = [];
  for (let index = 0; index < 6; index++) {
    steps.push({ type: 'text' as const, text: `part${index} ` }, { type: 'delay' as const, ms: 80 });
  }
  harness = await startHarness({ responses: [steps] });
  const sessionId = await createSession(harness);
  const abort = new AbortController();
  const first = await harness.request('/ui/chat', {
    method: 'POST',
    json: { id: sessionId, messages: [userMessage('u1', 'Count')], trigger: 'submit-message' },
    signal: abort.signal,
  });
  const reader = (first.body as ReadableStream<Uint8Array>).getReader();
  await reader.read();
  abort.abort();

  const transport = new DefaultChatTransport<UIMessage>({
    api: `${harness.url}/ui/chat`,
    headers: { authorization: `Bearer ${TOKENS.alice}` },
  });
  const stream = await transport.reconnectToStream({ chatId: sessionId });
  expect(stream).not.toBeNull();
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream: stream as ReadableStream<UIMessageChunk> })) {
    last = message;
  }
  const text = contentParts(last as UIMessage)
    .map((part) => String(part.text))
    .join('');
  expect(text).toBe('part0 part1 part2 part3 part4 part5 ');
  // Once the turn is over there is nothing to resume: 204, which the transport answers as null.
  expect(await transport.reconnectToStream({ chatId: sessionId })).toBeNull();
});

test('a turn cancelled over the sessions API ends the UI stream with abort and [DONE]', async () => {
  harness = await startHarness({ responses: [[{ type: 'text', text: 'Thinking ' }, { type: 'hang' }]] });
  const sessionId = await createSession(harness);
  const response = await harness.request('/ui/chat', {
    method: 'POST',
    json: { id: sessionId, messages: [userMessage('u1', 'Wait')], trigger: 'submit-message' },
  });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let wire = '';
  while (!wire.includes('"text-delta"')) {
    const { value, done } = await reader.read();
    if (done) break;
    wire += decoder.decode(value, { stream: true });
  }
  const cancelled = await harness.request(`/sessions/${sessionId}/cancel`, { method: 'POST' });
  expect(((await cancelled.json()) as { cancelled: boolean }).cancelled).toBe(true);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    wire += decoder.decode(value, { stream: true });
  }
  const data = wire
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => line.slice(6));
  expect(
    data.slice(-4).map((line) => (line === '[DONE]' ? line : (JSON.parse(line) as { type: string }).type)),
  ).toEqual(['text-end', 'finish-step', 'abort', '[DONE]']);
});
