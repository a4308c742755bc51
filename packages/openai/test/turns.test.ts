import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { startWireServer, type WireServer } from '../../../test-support/wire-server.js';
import { collect, DIALECTS, lookupTool, startSession, typesOf } from './support/dialects.js';

let server: WireServer;
beforeEach(async () => {
  server = await startWireServer();
});
afterEach(async () => {
  await server.close();
});

type Json = Record<string, unknown>;

describe.each(DIALECTS)('$name through an Agent turn', (dialect) => {
  test('streams plain text to a complete assistant message', async () => {
    server.enqueue(dialect.text(['Hello', ', ', 'world']));
    const { agent, session } = await startSession({
      provider: dialect.provider({ server }),
      modelId: dialect.modelId,
    });
    const events = await collect(await session.sendMessage('hi'));

    expect(typesOf(events)).toEqual(['text_delta', 'text_delta', 'text_delta', 'usage', 'turn_complete']);
    expect(session.messages().at(-1)).toEqual({
      type: 'assistant',
      content: [{ type: 'text', text: 'Hello, world' }],
      status: 'complete',
    });
    expect(server.requests).toHaveLength(1);
    const request = server.requests[0]!;
    expect(request.method).toBe('POST');
    expect(request.path).toBe(dialect.path);
    const body = request.body as Json;
    expect(body.model).toBe(dialect.modelId);
    expect(body.stream).toBe(true);
    expect(dialect.problems(body)).toEqual([]);
    if (dialect.api === 'chat') {
      expect(body.stream_options).toEqual({ include_usage: true });
      const messages = body.messages as Json[];
      expect(messages[0]?.role).toBe('system');
      expect(messages.at(-1)).toEqual({ role: 'user', content: 'hi' });
    } else {
      const input = body.input as Json[];
      expect(input[0]).toMatchObject({ type: 'message', role: 'developer' });
      expect(input.at(-1)).toEqual({ type: 'message', role: 'user', content: 'hi' });
      expect(body.store).toBe(false);
    }
    await agent.shutdown();
  });

  test('two parallel tool calls with split arguments run, and the next request pairs their results', async () => {
    server.enqueue(
      dialect.toolCalls([
        { id: 'call_a', name: 'lookup', fragments: ['{"q"', ':"ap', 'ple"}'] },
        { id: 'call_b', name: 'lookup', fragments: ['{"q":', '"pe', 'ar', '"}'] },
      ]),
      dialect.text(['Both found.']),
    );
    const { agent, session } = await startSession({
      provider: dialect.provider({ server }),
      modelId: dialect.modelId,
      tools: [lookupTool()],
    });
    const events = await collect(await session.sendMessage('look up apple and pear'));

    const starts = events.flatMap((event) =>
      event.payload.type === 'tool_call_start' ? [event.payload] : [],
    );
    expect(starts.map((start) => [start.callId, start.arguments])).toEqual([
      ['call_a', { q: 'apple' }],
      ['call_b', { q: 'pear' }],
    ]);
    const ends = events.flatMap((event) => (event.payload.type === 'tool_call_end' ? [event.payload] : []));
    expect(ends.map((end) => [end.callId, end.success, end.output.content]).sort()).toEqual([
      ['call_a', true, 'found:apple'],
      ['call_b', true, 'found:pear'],
    ]);
    expect(typesOf(events).at(-1)).toBe('turn_complete');
    expect(server.requests).toHaveLength(2);

    const second = server.requests[1]!.body as Json;
    expect(dialect.problems(second)).toEqual([]);
    if (dialect.api === 'chat') {
      const messages = second.messages as Json[];
      const tail = messages.slice(-3);
      expect(tail[0]).toEqual({
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'lookup', arguments: '{"q":"apple"}' } },
          { id: 'call_b', type: 'function', function: { name: 'lookup', arguments: '{"q":"pear"}' } },
        ],
      });
      expect(tail.slice(1)).toEqual([
        { role: 'tool', tool_call_id: 'call_a', content: 'found:apple' },
        { role: 'tool', tool_call_id: 'call_b', content: 'found:pear' },
      ]);
      const tools = (second.tools as Json[]).map((tool) => (tool.function as Json).name);
      expect(tools).toContain('lookup');
    } else {
      const input = second.input as Json[];
      expect(input.slice(-4)).toEqual([
        { type: 'function_call', call_id: 'call_a', name: 'lookup', arguments: '{"q":"apple"}' },
        { type: 'function_call', call_id: 'call_b', name: 'lookup', arguments: '{"q":"pear"}' },
        { type: 'function_call_output', call_id: 'call_a', output: 'found:apple' },
        { type: 'function_call_output', call_id: 'call_b', output: 'found:pear' },
      ]);
      expect((second.tools as Json[]).map((tool) => tool.name)).toContain('lookup');
    }
    await agent.shutdown();
  });

  test('an image input travels as a data URL', async () => {
    server.enqueue(dialect.text(['A red dot.']));
    const { agent, session } = await startSession({
      provider: dialect.provider({ server }),
      modelId: dialect.modelId,
    });
    const events = await collect(
      await session.sendMessage({
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image', data: 'iVBORw0KGgo=', mediaType: 'image/png' },
        ],
      }),
    );
    expect(typesOf(events).at(-1)).toBe('turn_complete');
    const body = server.requests[0]!.body as Json;
    expect(dialect.problems(body)).toEqual([]);
    if (dialect.api === 'chat') {
      expect((body.messages as Json[]).at(-1)).toEqual({
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      });
    } else {
      expect((body.input as Json[]).at(-1)).toEqual({
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'What is this?' },
          { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
        ],
      });
    }
    await agent.shutdown();
  });
});
