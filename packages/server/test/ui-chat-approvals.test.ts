import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { afterEach, expect, test } from 'vitest';
import { createSession, type Harness, startHarness, TOKENS } from './support/harness.js';
import { contentParts, eventually, lookupTool, send, TestChat, userMessage } from './support/ui-chat.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

test('a call that needs approval reaches useChat as an approval request; its answer continues the turn', async () => {
  const ran: unknown[] = [];
  harness = await startHarness({
    tools: [{ ...lookupTool(ran), name: 'deploy', isMutating: true, needsApproval: true }],
    responses: [
      [{ type: 'tool_call', toolName: 'deploy', arguments: { word: 'web' }, callId: 'call_d' }],
      [{ type: 'text', text: 'Deployed.' }],
    ],
  });
  const sessionId = await createSession(harness);
  const chat = new TestChat(harness.url, sessionId);
  await chat.sendMessage({ text: 'Ship it' });
  expect(chat.error).toBeUndefined();
  const held = chat.messages.at(-1)?.parts.find((part) => part.type === 'dynamic-tool');
  expect(held).toMatchObject({ toolName: 'deploy', toolCallId: 'call_d', state: 'approval-requested' });
  expect(ran).toEqual([]);
  // A suspended turn does not run: the transport's reconnect finds nothing to resume.
  const reconnect = new DefaultChatTransport<UIMessage>({
    api: `${harness.url}/ui/chat`,
    headers: { authorization: `Bearer ${TOKENS.alice}` },
  });
  expect(await reconnect.reconnectToStream({ chatId: sessionId })).toBeNull();

  await chat.addToolApprovalResponse({ id: 'call_d', approved: true });
  await eventually(() => chat.status === 'ready' && JSON.stringify(chat.messages).includes('Deployed.'));
  expect(chat.error).toBeUndefined();
  expect(ran).toEqual([{ word: 'web' }]);
  const parts = contentParts(chat.messages.at(-1) as UIMessage);
  expect(parts).toEqual([
    expect.objectContaining({ type: 'dynamic-tool', toolCallId: 'call_d', state: 'output-available' }),
    expect.objectContaining({ type: 'text', text: 'Deployed.' }),
  ]);
  expect(chat.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
});

test('a denied call is not run and the model hears the denial', async () => {
  const ran: unknown[] = [];
  harness = await startHarness({
    tools: [{ ...lookupTool(ran), name: 'deploy', isMutating: true, needsApproval: true }],
    responses: [
      [{ type: 'tool_call', toolName: 'deploy', arguments: { word: 'web' }, callId: 'call_d' }],
      [{ type: 'text', text: 'Not deployed.' }],
    ],
  });
  const sessionId = await createSession(harness);
  const chat = new TestChat(harness.url, sessionId);
  await chat.sendMessage({ text: 'Ship it' });
  await chat.addToolApprovalResponse({ id: 'call_d', approved: false, reason: 'not on a Friday' });
  await eventually(() => chat.status === 'ready' && JSON.stringify(chat.messages).includes('Not deployed.'));
  expect(ran).toEqual([]);
  expect(JSON.stringify(harness.provider.requests.at(-1))).toContain('not on a Friday');
  // The part ends as the AI SDK's own denied state, not as a failed call.
  expect(contentParts(chat.messages.at(-1) as UIMessage)).toEqual([
    expect.objectContaining({ type: 'dynamic-tool', toolCallId: 'call_d', state: 'output-denied' }),
    expect.objectContaining({ type: 'text', text: 'Not deployed.' }),
  ]);
});

test('approval answers: another tenant cannot give them, and a batch continues only once every call has one', async () => {
  const ran: unknown[] = [];
  harness = await startHarness({
    tools: [{ ...lookupTool(ran), name: 'deploy', isMutating: true, needsApproval: true }],
    responses: [
      [
        { type: 'tool_call', toolName: 'deploy', arguments: { word: 'web' }, callId: 'call_a' },
        { type: 'tool_call', toolName: 'deploy', arguments: { word: 'db' }, callId: 'call_b' },
      ],
      [{ type: 'text', text: 'Both done.' }],
    ],
  });
  const sessionId = await createSession(harness);
  const first = await send({
    url: harness.url,
    chatId: sessionId,
    messages: [userMessage('u1', 'Ship both')],
  });
  const held = first.message.parts.filter((part) => part.type === 'dynamic-tool');
  expect(held.map((part) => [part.toolCallId, part.state])).toEqual([
    ['call_a', 'approval-requested'],
    ['call_b', 'approval-requested'],
  ]);
  const answered = (ids: string[]): UIMessage => ({
    ...first.message,
    parts: first.message.parts.map((part) =>
      part.type === 'dynamic-tool' && ids.includes(part.toolCallId)
        ? ({
            ...part,
            state: 'approval-responded',
            approval: { id: part.toolCallId, approved: true },
          } as typeof part)
        : part,
    ),
  });
  const body = (ids: string[]) => ({
    id: sessionId,
    messages: [userMessage('u1', 'Ship both'), answered(ids)],
    trigger: 'submit-message',
  });

  const foreign = await harness.request('/ui/chat', {
    method: 'POST',
    as: 'bob',
    json: body(['call_a', 'call_b']),
  });
  expect(foreign.status).toBe(404);
  const partial = await harness.request('/ui/chat', { method: 'POST', json: body(['call_a']) });
  expect(partial.status).toBe(400);
  expect(((await partial.json()) as { error: { code: string } }).error.code).toBe('INVALID_INPUT');
  expect(ran).toEqual([]);

  const both = await send({
    url: harness.url,
    chatId: sessionId,
    messages: body(['call_a', 'call_b']).messages,
  });
  expect(both.errors).toEqual([]);
  expect(ran).toEqual([{ word: 'web' }, { word: 'db' }]);
  expect(contentParts(both.message).at(-1)).toMatchObject({ type: 'text', text: 'Both done.' });
});

test('a reconnect during a turn continued after approval replays the whole turn, not the suspension; a denied call shows as denied', async () => {
  const ran: unknown[] = [];
  harness = await startHarness({
    tools: [{ ...lookupTool(ran), name: 'deploy', isMutating: true, needsApproval: true }],
    responses: [
      [
        { type: 'reasoning', text: 'A deploy needs a yes.' },
        { type: 'text', text: 'Shipping it.' },
        { type: 'tool_call', toolName: 'deploy', arguments: { word: 'web' }, callId: 'call_r' },
        { type: 'tool_call', toolName: 'deploy', arguments: { word: 'db' }, callId: 'call_x' },
      ],
      [
        { type: 'text', text: 'Deploying ' },
        { type: 'delay', ms: 150 },
        { type: 'text', text: 'done.' },
        { type: 'delay', ms: 150 },
      ],
    ],
  });
  const sessionId = await createSession(harness);
  const first = await send({ url: harness.url, chatId: sessionId, messages: [userMessage('u1', 'Ship')] });
  const approvedMessage: UIMessage = {
    ...first.message,
    parts: first.message.parts.map((part) =>
      part.type === 'dynamic-tool'
        ? ({
            ...part,
            state: 'approval-responded',
            approval: { id: part.toolCallId, approved: part.toolCallId === 'call_r' },
          } as typeof part)
        : part,
    ),
  };
  const abort = new AbortController();
  const continued = await harness.request('/ui/chat', {
    method: 'POST',
    json: {
      id: sessionId,
      messages: [userMessage('u1', 'Ship'), approvedMessage],
      trigger: 'submit-message',
    },
    signal: abort.signal,
  });
  expect(continued.status).toBe(200);
  await (continued.body as ReadableStream<Uint8Array>).getReader().read();
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
  expect(ran).toEqual([{ word: 'web' }]);
  // The client replaces its message with the replayed one (same id): it is the whole turn, what came before
  // the held call included, and it does not end at the suspension.
  expect(last?.id).toBe(first.message.id);
  expect(contentParts(last as UIMessage)).toEqual([
    expect.objectContaining({ type: 'reasoning', text: 'A deploy needs a yes.' }),
    expect.objectContaining({ type: 'text', text: 'Shipping it.' }),
    expect.objectContaining({ type: 'dynamic-tool', toolCallId: 'call_r', state: 'output-available' }),
    expect.objectContaining({ type: 'dynamic-tool', toolCallId: 'call_x', state: 'output-denied' }),
    expect.objectContaining({ type: 'text', text: 'Deploying done.' }),
  ]);
});

test('an approval sent after the approval window counts as a denial: the tool does not run and the turn goes on', async () => {
  const ran: unknown[] = [];
  harness = await startHarness({
    approvalWindowMs: 300,
    tools: [{ ...lookupTool(ran), name: 'deploy', isMutating: true, needsApproval: true }],
    responses: [
      [{ type: 'tool_call', toolName: 'deploy', arguments: { word: 'web' }, callId: 'call_late' }],
      [{ type: 'text', text: 'Not deployed.' }],
    ],
  });
  const sessionId = await createSession(harness);
  const chat = new TestChat(harness.url, sessionId);
  await chat.sendMessage({ text: 'Ship it' });
  await new Promise((resolve) => setTimeout(resolve, 400));
  await chat.addToolApprovalResponse({ id: 'call_late', approved: true });
  await eventually(() => chat.status === 'ready' && JSON.stringify(chat.messages).includes('Not deployed.'));
  expect(chat.error).toBeUndefined();
  expect(ran).toEqual([]);
  expect(JSON.stringify(harness.provider.requests.at(-1)?.messages.at(-1))).toContain('approval window');
});
