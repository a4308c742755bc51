import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  messageEvents,
  redactedThinkingBlock,
  sseReply,
  textBlock,
  textReply,
  thinkingBlock,
  toolUseBlock,
} from '../../../test-support/anthropic-wire.js';
import { messagesApiViolations } from '../../../test-support/anthropic-wire-rules.js';
import { startWireServer, type WireServer } from '../../../test-support/wire-server.js';
import { REDACTED_THINKING_PREFIX } from '../src/index.js';
import {
  API_KEY,
  agentFor,
  bodyOf,
  cacheMarks,
  collect,
  ENVIRONMENT_BLOCK,
  lookupTool,
  types,
  withoutCacheMarks,
} from './support/harness.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await server.close();
});

describe('an Agent turn over the Messages API', () => {
  test('plain text: deltas, the request the API wants, the system prompt split for caching', async () => {
    server.enqueue(textReply(['Hel', 'lo', '!'], { input_tokens: 12, cache_read_input_tokens: 30 }));
    const agent = await agentFor({ server });
    const session = await agent.newSession();
    const events = await collect(await session.sendMessage('hi'));

    expect(types(events)).toEqual(['text_delta', 'text_delta', 'text_delta', 'usage', 'turn_complete']);
    expect(session.messages().at(-1)).toEqual({
      type: 'assistant',
      content: [{ type: 'text', text: 'Hello!' }],
      status: 'complete',
    });
    const request = server.requests[0];
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/v1/messages');
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    const body = bodyOf(server, 0);
    expect(messagesApiViolations(body)).toEqual([]);
    expect(body).toMatchObject({ model: 'claude-sonnet-5-5', stream: true, max_tokens: 32_000 });
    // The dynamic part (the environment) opens the user message; the conversation's cache mark ends it.
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [ENVIRONMENT_BLOCK, { type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }],
      },
    ]);
    expect(body.system).toEqual([
      {
        type: 'text',
        text: expect.stringContaining('You are a test assistant.'),
        cache_control: { type: 'ephemeral' },
      },
    ]);
    expect(JSON.stringify(body.system)).not.toContain('/work');
    expect(body).not.toHaveProperty('tools'); // none registered
    expect(body).not.toHaveProperty('thinking'); // the model thinks by default; nothing to ask for
    await agent.shutdown();
  });

  test('thinking: reasoning deltas, the signature kept, and sent back as a thinking block first', async () => {
    server.enqueue(
      sseReply(
        messageEvents({
          blocks: [
            thinkingBlock(0, ['Let me ', 'think.'], 'sig-abc'),
            redactedThinkingBlock(1, 'opaque-data'),
            textBlock(2, ['Answer.']),
          ],
        }),
      ),
      textReply(['Again.']),
    );
    const agent = await agentFor({
      server,
      config: { defaultModel: 'claude-haiku-4-5' },
      provider: { thinking: { budgetTokens: 2048 } },
    });
    const session = await agent.newSession();
    const first = await collect(await session.sendMessage('why?'));
    expect(types(first)).toEqual([
      'reasoning_delta',
      'reasoning_delta',
      'text_delta',
      'usage',
      'turn_complete',
    ]);
    expect(session.messages().at(-1)).toEqual({
      type: 'assistant',
      content: [
        { type: 'reasoning', text: 'Let me think.', signature: 'sig-abc' },
        { type: 'reasoning', text: '', signature: `${REDACTED_THINKING_PREFIX}opaque-data` },
        { type: 'text', text: 'Answer.' },
      ],
      status: 'complete',
    });
    expect(bodyOf(server, 0)).toMatchObject({
      thinking: { type: 'enabled', budget_tokens: 2048 },
      max_tokens: 8192 + 2048,
    });

    await collect(await session.sendMessage('and?'));
    const second = bodyOf(server, 1);
    expect(messagesApiViolations(second)).toEqual([]);
    expect((second.messages as unknown[])[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Let me think.', signature: 'sig-abc' },
        { type: 'redacted_thinking', data: 'opaque-data' },
        // The end of the first turn carries the mark that turn boundaries get.
        { type: 'text', text: 'Answer.', cache_control: { type: 'ephemeral' } },
      ],
    });
    await agent.shutdown();
  });

  test('two parallel tool calls with split JSON: both run, and their results go back together', async () => {
    server.enqueue(
      sseReply(
        messageEvents({
          blocks: [
            textBlock(0, ['Checking.']),
            toolUseBlock(1, { id: 'toolu_1', name: 'lookup', jsonChunks: ['{"q"', ': "ap', 'ple"}'] }),
            toolUseBlock(2, { id: 'toolu_2', name: 'lookup', jsonChunks: ['{"q": "pe', 'ar"}'] }),
          ],
          stopReason: 'tool_use',
        }),
      ),
      textReply(['Both found.']),
    );
    const calls: unknown[] = [];
    const agent = await agentFor({ server, tools: [lookupTool(calls)] });
    const session = await agent.newSession();
    const events = await collect(await session.sendMessage('look up apple and pear'));

    expect(types(events)).toEqual([
      'text_delta',
      'usage',
      'tool_call_start',
      'tool_call_start',
      'tool_call_end',
      'tool_call_end',
      'text_delta',
      'usage',
      'turn_complete',
    ]);
    expect(calls).toEqual([{ q: 'apple' }, { q: 'pear' }]);
    expect(bodyOf(server, 0).tools).toEqual([
      {
        name: 'lookup',
        description: 'Looks a word up.',
        input_schema: {
          type: 'object',
          properties: { q: { type: 'string' } },
          required: ['q'],
          additionalProperties: false,
        },
      },
    ]);
    const second = bodyOf(server, 1);
    expect(messagesApiViolations(second)).toEqual([]);
    expect(cacheMarks(second)).toEqual(['messages.2.content.1', 'system.0']);
    expect(withoutCacheMarks(second.messages)).toEqual([
      { role: 'user', content: [ENVIRONMENT_BLOCK, { type: 'text', text: 'look up apple and pear' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'apple' } },
          { type: 'tool_use', id: 'toolu_2', name: 'lookup', input: { q: 'pear' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'found apple', is_error: false },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: 'found pear', is_error: false },
        ],
      },
    ]);
    await agent.shutdown();
  });

  test('an image input is sent as a base64 image block', async () => {
    server.enqueue(textReply(['A red dot.']));
    const agent = await agentFor({ server });
    const session = await agent.newSession();
    const events = await collect(
      await session.sendMessage({
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image', data: 'iVBORw0KGgo=', mediaType: 'image/png' },
        ],
      }),
    );
    expect(types(events)).toEqual(['text_delta', 'usage', 'turn_complete']);
    const body = bodyOf(server, 0);
    expect(messagesApiViolations(body)).toEqual([]);
    expect(withoutCacheMarks(body.messages)).toEqual([
      {
        role: 'user',
        content: [
          ENVIRONMENT_BLOCK,
          { type: 'text', text: 'What is this?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        ],
      },
    ]);
    await agent.shutdown();
  });
});
