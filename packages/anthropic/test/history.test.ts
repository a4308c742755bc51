import { InMemorySessionStorage, type Message, type SessionEventPayload } from '@youyou/agent';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { textReply } from '../../../test-support/anthropic-wire.js';
import { messagesApiViolations } from '../../../test-support/anthropic-wire-rules.js';
import { startWireServer, type WireServer } from '../../../test-support/wire-server.js';
import {
  CONTINUE_TEXT,
  HISTORY_START_TEXT,
  MISSING_RESULT_TEXT,
  REDACTED_THINKING_PREFIX,
  toAnthropicMessages,
} from '../src/messages.js';
import {
  agentFor,
  bodyOf,
  cacheMarks,
  chatRequest,
  collect,
  drain,
  lookupTool,
  providerFor,
  withoutCacheMarks,
} from './support/harness.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await server.close();
});

const user = (text: string): Message => ({ type: 'user', content: [{ type: 'text', text }] });
const assistant = (text: string, status: 'complete' | 'incomplete' = 'complete'): Message => ({
  type: 'assistant',
  content: [{ type: 'text', text }],
  status,
});
const call = (callId: string, args: unknown = { q: callId }): Message => ({
  type: 'tool_call',
  callId,
  toolName: 'lookup',
  arguments: args,
});
const result = (callId: string, content = `found ${callId}`, isError = false): Message => ({
  type: 'tool_result',
  callId,
  content,
  isError,
});
const rules = (messages: unknown) => messagesApiViolations({ max_tokens: 1, messages });

/** A log as a long session leaves it: every message type, a compaction, a crash mid-tool. */
const LOG: SessionEventPayload[] = [
  { type: 'metadata', key: 'session_config', value: { modelId: 'claude-sonnet-5-5' } },
  { type: 'user_message', content: [{ type: 'text', text: 'an old question' }] },
  { type: 'assistant_message', content: [{ type: 'text', text: 'an old answer' }], status: 'complete' },
  { type: 'metadata', key: 'compaction', value: { summary: 'We talked about fruit.', keptMessages: 0 } },
  { type: 'system_message', content: '<skill name="review">Review carefully.</skill>' },
  { type: 'user_message', content: [{ type: 'text', text: '/review look up apple and pear' }] },
  {
    type: 'assistant_message',
    content: [
      { type: 'reasoning', text: 'Two lookups.', signature: 'sig-1' },
      { type: 'reasoning', text: 'no signature, cannot be sent back' },
      { type: 'text', text: 'Looking.' },
    ],
    status: 'complete',
  },
  { type: 'tool_call', callId: 'toolu_a', toolName: 'lookup', arguments: { q: 'apple' } },
  { type: 'tool_call', callId: 'toolu_b', toolName: 'lookup', arguments: '{not json' },
  { type: 'tool_result', callId: 'toolu_b', content: 'arguments are not JSON', isError: true },
  { type: 'tool_result', callId: 'toolu_a', content: 'found apple', isError: false },
  { type: 'assistant_message', content: [{ type: 'text', text: 'Apple is a fr' }], status: 'incomplete' },
  {
    type: 'user_message',
    content: [
      { type: 'text', text: '   ' },
      { type: 'image', data: 'R0lGODlh', mediaType: 'image/gif' },
    ],
  },
  { type: 'assistant_message', content: [{ type: 'text', text: ' \n ' }], status: 'complete' },
  { type: 'tool_call', callId: 'toolu_c', toolName: 'lookup', arguments: { q: 'pear' } },
  { type: 'system_message', content: '[This turn reached its limit of 3 tool calls and was stopped.]' },
];

describe('a whole history sent through a resumed Agent', () => {
  test('every message type ends up in a request the Messages API accepts', async () => {
    const storage = new InMemorySessionStorage();
    for (const payload of LOG) await storage.saveEvent('s1', { timestamp: new Date(), payload });
    server.enqueue(textReply(['Done.']));
    const agent = await agentFor({ server, storage, tools: [lookupTool()] });
    const session = await agent.resumeSession('s1');
    await collect(await session.sendMessage('and now?'));

    const body = bodyOf(server, 0);
    expect(messagesApiViolations(body)).toEqual([]);
    const system = body.system as { cache_control?: unknown }[];
    expect(system).toHaveLength(1);
    expect(system[0]?.cache_control).toEqual({ type: 'ephemeral' });
    // System, the end of the history before each of the two latest user messages (the interrupted notice, and
    // the tool-limit notice before the dynamic part), and the last block.
    expect(cacheMarks(body)).toEqual([
      'messages.4.content.0',
      'messages.6.content.1',
      'messages.6.content.3',
      'system.0',
    ]);

    const messages = withoutCacheMarks(body.messages) as {
      role: string;
      content: Record<string, unknown>[];
    }[];
    expect(messages.map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
    ]);
    // The summary and the skill become <system> text before the user's words.
    expect(messages[0]?.content.map((block) => String(block.text).slice(0, 8))).toEqual([
      '<system>',
      '<system>',
      '/review ',
    ]);
    expect(messages[1]?.content).toEqual([
      { type: 'thinking', thinking: 'Two lookups.', signature: 'sig-1' },
      { type: 'text', text: 'Looking.' },
      { type: 'tool_use', id: 'toolu_a', name: 'lookup', input: { q: 'apple' } },
      { type: 'tool_use', id: 'toolu_b', name: 'lookup', input: {} },
    ]);
    // Results in call order, whatever order they were saved in.
    expect(messages[2]?.content.map((block) => block.tool_use_id)).toEqual(['toolu_a', 'toolu_b']);
    // The incomplete message is sent as text; the notice after it sits on the user side.
    expect(messages[3]?.content).toEqual([{ type: 'text', text: 'Apple is a fr' }]);
    expect(messages[4]?.content.map((block) => block.type)).toEqual(['text', 'image']);
    // The blank answer is gone; the call left open by the crash got its synthetic error result.
    expect(messages[5]?.content).toEqual([
      { type: 'tool_use', id: 'toolu_c', name: 'lookup', input: { q: 'pear' } },
    ]);
    expect(messages[6]?.content[0]).toMatchObject({
      type: 'tool_result',
      tool_use_id: 'toolu_c',
      is_error: true,
    });
    expect(messages[6]?.content.at(-1)).toEqual({ type: 'text', text: 'and now?' });
    await agent.shutdown();
  });
});

describe('the history mapping on its own', () => {
  test('a history that starts and ends with the assistant gets user turns around it', () => {
    const mapped = toAnthropicMessages([assistant('I was saying…')], { replayThinking: false });
    expect(mapped).toEqual([
      { role: 'user', content: [{ type: 'text', text: HISTORY_START_TEXT }] },
      { role: 'assistant', content: [{ type: 'text', text: 'I was saying…' }] },
      { role: 'user', content: [{ type: 'text', text: CONTINUE_TEXT }] },
    ]);
    expect(rules(mapped)).toEqual([]);
    expect(toAnthropicMessages([], { replayThinking: false })).toEqual([
      { role: 'user', content: [{ type: 'text', text: CONTINUE_TEXT }] },
    ]);
  });

  test('a result without its call becomes a note; a call without a result gets an error result', () => {
    const mapped = toAnthropicMessages([user('go'), result('ghost', 'lost output', true), call('c1')], {
      replayThinking: false,
    });
    expect(rules(mapped)).toEqual([]);
    expect(mapped[0]?.content).toEqual([
      { type: 'text', text: 'go' },
      { type: 'text', text: expect.stringContaining('ghost') },
    ]);
    expect(JSON.stringify(mapped[0])).toContain('lost output');
    expect(mapped[2]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'c1', content: MISSING_RESULT_TEXT, is_error: true }],
    });
  });

  test('text between a call and its result moves after the result; a second result is a note', () => {
    const mapped = toAnthropicMessages(
      [user('go'), call('c1'), user('hurry'), result('c1'), result('c1', 'again'), assistant('ok')],
      { replayThinking: false },
    );
    expect(rules(mapped)).toEqual([]);
    const third = mapped[2]?.content as { type: string }[];
    expect(third.map((block) => block.type)).toEqual(['tool_result', 'text', 'text']);
    expect(JSON.stringify(third[2])).toContain('again');
  });

  test('text after a call in the same reply opens a new assistant message after the results', () => {
    const mapped = toAnthropicMessages([user('go'), call('c1'), assistant('meanwhile'), result('c1')], {
      replayThinking: false,
    });
    expect(rules(mapped)).toEqual([]);
    expect(mapped.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
  });

  test('reasoning: dropped when thinking is off, redacted blocks sent back as they came', () => {
    const history: Message[] = [
      user('q'),
      {
        type: 'assistant',
        content: [
          { type: 'reasoning', text: 'hmm', signature: 'sig' },
          { type: 'reasoning', text: '', signature: `${REDACTED_THINKING_PREFIX}blob` },
          { type: 'text', text: 'a' },
        ],
        status: 'complete',
      },
      assistant('b'),
      user('r'),
    ];
    expect(toAnthropicMessages(history, { replayThinking: false })[1]?.content).toEqual([
      { type: 'text', text: 'a' },
      { type: 'text', text: 'b' },
    ]);
    const kept = toAnthropicMessages(history, { replayThinking: true });
    expect(rules(kept)).toEqual([]);
    expect(kept[1]?.content.slice(0, 2)).toEqual([
      { type: 'thinking', thinking: 'hmm', signature: 'sig' },
      { type: 'redacted_thinking', data: 'blob' },
    ]);
  });

  test('an empty tool result has no content; a user reasoning block and blank text are dropped', () => {
    const mapped = toAnthropicMessages(
      [
        {
          type: 'user',
          content: [
            { type: 'reasoning', text: 'no' },
            { type: 'text', text: 'yes' },
          ],
        },
        call('c1'),
        result('c1', ''),
        { type: 'system', content: '  ' },
      ],
      { replayThinking: true },
    );
    expect(rules(mapped)).toEqual([]);
    expect(mapped[0]?.content).toEqual([{ type: 'text', text: 'yes' }]);
    expect(mapped[2]?.content).toEqual([{ type: 'tool_result', tool_use_id: 'c1', is_error: false }]);
  });

  test('an image type the API does not take is refused before any request', async () => {
    const provider = providerFor(server);
    const request = chatRequest({
      messages: [{ type: 'user', content: [{ type: 'image', data: 'Qk0=', mediaType: 'image/bmp' }] }],
    });
    const outcome = await drain((async () => provider.chat(request, new AbortController().signal))());
    expect(outcome.error).toMatchObject({ code: 'PROVIDER_ERROR', retryable: false });
    expect(String((outcome.error as Error).message)).toContain('image/bmp');
    expect(server.requests).toHaveLength(0);
  });
});
