import { afterEach, beforeEach, expect, test } from 'vitest';
import {
  chatFinish,
  chatReasoningChunks,
  chatTextChunks,
  responsesCompleted,
  responsesFunctionCall,
  responsesOpening,
  responsesReasoning,
  responsesRequestProblems,
  responsesText,
  sseReply,
} from '../../../test-support/openai-wire.js';
import { startWireServer, type WireServer } from '../../../test-support/wire-server.js';
import { openaiResponsesProvider } from '../src/index.js';
import { collect, DIALECTS, lookupTool, startSession, typesOf } from './support/dialects.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await server.close();
});

type Json = Record<string, unknown>;
const responses = DIALECTS.find((dialect) => dialect.name === 'openai-responses')!;
const compatible = DIALECTS.find((dialect) => dialect.name === 'openai-compatible')!;

test('responses: reasoning summaries stream as reasoning_delta and the encrypted item goes back next turn', async () => {
  server.enqueue(
    sseReply([
      ...responsesOpening(),
      ...responsesReasoning({
        summary: [['Think', 'ing'], ['More']],
        encryptedContent: 'gAAAA-encrypted-1',
        itemId: 'rs_1',
      }),
      ...responsesText(['Answer'], { outputIndex: 1 }),
      responsesCompleted({ usage: { prompt: 50, completion: 30, reasoning: 20 } }),
    ]),
    responses.text(['Second']),
  );
  const { agent, session } = await startSession({
    provider: responses.provider({ server }),
    modelId: responses.modelId,
  });
  const events = await collect(await session.sendMessage('think'));

  expect(typesOf(events)).toEqual([
    'reasoning_delta',
    'reasoning_delta',
    'reasoning_delta',
    'reasoning_delta',
    'text_delta',
    'usage',
    'turn_complete',
  ]);
  const reasoningText = events.map((event) =>
    event.payload.type === 'reasoning_delta' ? event.payload.text : '',
  );
  expect(reasoningText.join('')).toBe('Thinking\n\nMore');
  const assistant = session.messages().at(-1);
  expect(assistant).toMatchObject({
    type: 'assistant',
    status: 'complete',
    content: [
      { type: 'reasoning', text: 'Thinking\n\nMore' },
      { type: 'text', text: 'Answer' },
    ],
  });
  const first = server.requests[0]!.body as Json;
  expect(first.include).toEqual(['reasoning.encrypted_content']);
  expect(first.reasoning).toEqual({ summary: 'auto' });
  expect(first.store).toBe(false);

  await collect(await session.sendMessage('again'));
  const second = server.requests[1]!.body as Json;
  expect(responsesRequestProblems(second)).toEqual([]);
  const input = second.input as Json[];
  const reasoningIndex = input.findIndex((item) => item.type === 'reasoning');
  expect(input[reasoningIndex]).toEqual({
    type: 'reasoning',
    id: 'rs_1',
    encrypted_content: 'gAAAA-encrypted-1',
    summary: [
      { type: 'summary_text', text: 'Thinking' },
      { type: 'summary_text', text: 'More' },
    ],
  });
  expect(input[reasoningIndex + 1]).toEqual({ type: 'message', role: 'assistant', content: 'Answer' });
  await agent.shutdown();
});

test('responses: reasoning before tool calls is sent back ahead of the calls in the tool round', async () => {
  server.enqueue(
    sseReply([
      ...responsesOpening(),
      ...responsesReasoning({ summary: [['Need a lookup']], encryptedContent: 'enc-2', itemId: 'rs_2' }),
      ...responsesFunctionCall(
        { id: 'call_1', name: 'lookup', fragments: ['{"q":', '"fig"}'] },
        { outputIndex: 1 },
      ),
      responsesCompleted(),
    ]),
    responses.text(['Fig found.']),
  );
  const { agent, session } = await startSession({
    provider: responses.provider({ server }),
    modelId: responses.modelId,
    tools: [lookupTool()],
  });
  const events = await collect(await session.sendMessage('find fig'));
  expect(typesOf(events)).toContain('tool_call_end');

  const input = (server.requests[1]!.body as Json).input as Json[];
  expect(responsesRequestProblems(server.requests[1]!.body)).toEqual([]);
  expect(input.slice(-3)).toEqual([
    {
      type: 'reasoning',
      id: 'rs_2',
      encrypted_content: 'enc-2',
      summary: [{ type: 'summary_text', text: 'Need a lookup' }],
    },
    { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"q":"fig"}' },
    { type: 'function_call_output', call_id: 'call_1', output: 'found:fig' },
  ]);
  await agent.shutdown();
});

test('responses: a non-reasoning model gets no reasoning settings and no reasoning items', async () => {
  server.enqueue(responses.text(['Plain']));
  const provider = openaiResponsesProvider({ apiKey: 'sk-test-key-123456', baseURL: `${server.url}/v1` });
  const stream = await provider.chat(
    {
      modelId: 'gpt-4.1',
      purpose: 'turn',
      systemPrompt: '',
      systemPromptParts: { stable: '', dynamic: '' },
      messages: [
        { type: 'user', content: [{ type: 'text', text: 'hi' }] },
        {
          type: 'assistant',
          status: 'complete',
          content: [
            {
              type: 'reasoning',
              text: 'from o3',
              signature: JSON.stringify({ id: 'rs_o3', encrypted_content: 'E' }),
            },
            { type: 'text', text: 'Hello' },
          ],
        },
        { type: 'user', content: [{ type: 'text', text: 'again' }] },
      ],
      tools: [],
    },
    new AbortController().signal,
  );
  for await (const _event of stream) {
    // Only the request matters.
  }
  const body = server.requests[0]!.body as Json;
  expect(body).not.toHaveProperty('include');
  expect(body).not.toHaveProperty('reasoning');
  expect(body.store).toBe(false);
  expect((body.input as Json[]).map((item) => item.type)).toEqual(['message', 'message', 'message']);
});

test('compatible: reasoning_content deltas become reasoning, which is not sent back', async () => {
  server.enqueue(
    sseReply([
      ...chatReasoningChunks(['Let me ', 'see.']),
      ...chatTextChunks(['It is 4.']),
      ...chatFinish({ usage: null }),
    ]),
    compatible.text(['Sure.']),
  );
  const { agent, session } = await startSession({
    provider: compatible.provider({ server }),
    modelId: compatible.modelId,
  });
  const events = await collect(await session.sendMessage('2+2?'));
  // The scripted reply has no usage chunk, so the turn has no usage event.
  expect(typesOf(events)).toEqual(['reasoning_delta', 'reasoning_delta', 'text_delta', 'turn_complete']);
  expect(session.messages().at(-1)).toEqual({
    type: 'assistant',
    status: 'complete',
    content: [
      { type: 'reasoning', text: 'Let me see.' },
      { type: 'text', text: 'It is 4.' },
    ],
  });

  await collect(await session.sendMessage('thanks'));
  const messages = (server.requests[1]!.body as Json).messages as Json[];
  expect(messages.slice(-2)).toEqual([
    { role: 'assistant', content: 'It is 4.' },
    { role: 'user', content: 'thanks' },
  ]);
  expect(server.requests[1]!.rawBody).not.toContain('Let me see.');
  await agent.shutdown();
});
