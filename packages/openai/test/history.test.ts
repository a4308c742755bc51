import {
  AgentBuilder,
  type ChatRequest,
  InMemorySessionStorage,
  type Message,
  type SessionEventPayload,
  templates,
} from '@youyou/agent';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { startWireServer, type WireServer } from '../../../test-support/wire-server.js';
import { collect, DIALECTS, lookupTool, typesOf } from './support/dialects.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await server.close();
});

type Json = Record<string, unknown>;
const IMAGE = { type: 'image' as const, data: 'iVBORw0KGgo=', mediaType: 'image/png' };
const SIGNATURE = JSON.stringify({ id: 'rs_h', encrypted_content: 'enc-history' });
const SUMMARY = `${templates.COMPACT_SUMMARY_PREFIX}\n\nThe user asked about fruit.`;

/** Every kind of message, plus what a damaged log can hold: an orphan result and a call with no result. */
const HISTORY: Message[] = [
  { type: 'system', content: SUMMARY },
  { type: 'user', content: [{ type: 'text', text: 'Look at this' }, IMAGE] },
  {
    type: 'assistant',
    status: 'complete',
    content: [
      { type: 'reasoning', text: 'SECRET-THOUGHT one', signature: SIGNATURE },
      { type: 'text', text: 'Looking.' },
    ],
  },
  { type: 'tool_call', callId: 'c1', toolName: 'lookup', arguments: { q: 'apple' } },
  { type: 'tool_call', callId: 'c2', toolName: 'lookup', arguments: 'not json{' },
  { type: 'tool_result', callId: 'c1', content: 'found:apple', isError: false },
  { type: 'tool_result', callId: 'c2', content: 'bad arguments', isError: true },
  { type: 'system', content: 'A skill note.' },
  { type: 'assistant', status: 'incomplete', content: [{ type: 'text', text: 'Partial' }] },
  { type: 'system', content: templates.INTERRUPTED_MESSAGE_NOTICE },
  { type: 'tool_result', callId: 'ghost', content: 'orphan output', isError: false },
  { type: 'tool_call', callId: 'c3', toolName: 'lookup', arguments: { q: 'pear' } },
  { type: 'user', content: [{ type: 'text', text: 'continue' }] },
  {
    type: 'assistant',
    status: 'complete',
    content: [
      { type: 'reasoning', text: 'SECRET-THOUGHT two', signature: SIGNATURE.replace('rs_h', 'rs_last') },
    ],
  },
  { type: 'user', content: [{ type: 'text', text: 'last' }] },
];

function requestWith(modelId: string, messages: Message[]): ChatRequest {
  return {
    modelId,
    purpose: 'turn',
    systemPrompt: 'System prompt.',
    systemPromptParts: { stable: 'System prompt.', dynamic: '' },
    messages,
    tools: [{ name: 'lookup', description: 'Looks up.', parameters: { type: 'object' } }],
  };
}

describe.each(DIALECTS)('$name history mapping', (dialect) => {
  test('a history with every message type meets the API rules', async () => {
    server.enqueue(dialect.text(['ok']));
    const provider = dialect.provider({ server });
    const stream = await provider.chat(requestWith(dialect.modelId, HISTORY), new AbortController().signal);
    for await (const _event of stream) {
      // The request body is what is checked.
    }
    const body = server.requests[0]!.body as Json;
    expect(dialect.problems(body)).toEqual([]);
    const raw = server.requests[0]!.rawBody;
    expect(raw).toContain('data:image/png;base64,iVBORw0KGgo=');
    expect(raw).toContain('orphan output');

    if (dialect.api === 'chat') {
      const messages = body.messages as Json[];
      expect(raw).not.toContain('SECRET-THOUGHT');
      expect(messages.map((message) => message.role)).toEqual([
        'system', // the system prompt
        'system', // the summary
        'user',
        'assistant',
        'tool',
        'tool',
        'system',
        'assistant', // the incomplete message, as normal text
        'system',
        'user', // the orphan result as a note
        'assistant', // c3 with no assistant message before it
        'tool', // its synthetic result
        'user',
        'user', // the reasoning-only reply is dropped
      ]);
      expect(messages[3]).toMatchObject({ content: 'Looking.', tool_calls: [{ id: 'c1' }, { id: 'c2' }] });
      expect((messages[3]!.tool_calls as Json[])[1]).toMatchObject({ function: { arguments: 'not json{' } });
      expect(messages[7]).toEqual({ role: 'assistant', content: 'Partial' });
      expect(messages[10]).toMatchObject({ role: 'assistant', content: null, tool_calls: [{ id: 'c3' }] });
      expect(messages[11]).toMatchObject({ role: 'tool', tool_call_id: 'c3' });
      expect(String(messages[11]!.content)).toMatch(/No result was recorded/);
    } else {
      const input = body.input as Json[];
      const kinds = input.map((item) =>
        item.type === 'message' ? `message:${String(item.role)}` : item.type,
      );
      expect(kinds).toEqual([
        'message:developer', // the system prompt
        'message:developer', // the summary
        'message:user',
        'reasoning',
        'message:assistant',
        'function_call',
        'function_call',
        'function_call_output',
        'function_call_output',
        'message:developer',
        'message:assistant',
        'message:developer',
        'message:user',
        'function_call',
        'function_call_output',
        'message:user',
        'message:user', // the trailing reasoning item is dropped: nothing follows it
      ]);
      expect(input[3]).toEqual({
        type: 'reasoning',
        id: 'rs_h',
        encrypted_content: 'enc-history',
        summary: [{ type: 'summary_text', text: 'SECRET-THOUGHT one' }],
      });
      expect(raw).not.toContain('rs_last');
    }
  });

  test('a resumed session with every kind of logged event sends a valid request', async () => {
    const storage = new InMemorySessionStorage();
    const sessionId = 'resumed-session';
    const log: SessionEventPayload[] = [
      { type: 'metadata', key: 'session_config', value: { modelId: dialect.modelId } },
      { type: 'user_message', content: [{ type: 'text', text: 'old question' }] },
      { type: 'assistant_message', content: [{ type: 'text', text: 'old answer' }], status: 'complete' },
      { type: 'metadata', key: 'compaction', value: { summary: 'Fruit was discussed.', keptMessages: 0 } },
      { type: 'user_message', content: [{ type: 'text', text: 'Look' }, IMAGE] },
      {
        type: 'assistant_message',
        status: 'complete',
        content: [
          { type: 'reasoning', text: 'hmm', signature: SIGNATURE },
          { type: 'text', text: 'Calling.' },
        ],
      },
      { type: 'tool_call', callId: 'r1', toolName: 'lookup', arguments: { q: 'kiwi' } },
      { type: 'tool_result', callId: 'r1', content: 'found:kiwi', isError: false },
      { type: 'tool_call', callId: 'r2', toolName: 'lookup', arguments: { q: 'lime' } },
      { type: 'system_message', content: 'Skill injected.' },
      { type: 'assistant_message', content: [{ type: 'text', text: 'Interrupted' }], status: 'incomplete' },
    ];
    for (const payload of log) await storage.saveEvent(sessionId, { timestamp: new Date(), payload });
    server.enqueue(dialect.text(['Welcome back']));
    const agent = await new AgentBuilder({ defaultModel: dialect.modelId })
      .registerModelProvider(dialect.provider({ server }))
      .registerTool(lookupTool())
      .registerSessionStorage(storage)
      .build();
    const session = await agent.resumeSession(sessionId);
    const events = await collect(await session.sendMessage('next'));

    expect(typesOf(events)).toEqual(['text_delta', 'usage', 'turn_complete']);
    const body = server.requests[0]!.body as Json;
    expect(dialect.problems(body)).toEqual([]);
    const raw = server.requests[0]!.rawBody;
    expect(raw).toContain('Fruit was discussed.');
    expect(raw).not.toContain('old question');
    expect(raw).toContain('Interrupted');
    expect(raw).toContain('data:image/png;base64,iVBORw0KGgo=');
    await agent.shutdown();
  });
});
