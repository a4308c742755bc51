import fc from 'fast-check';
import { afterEach, describe, expect, test } from 'vitest';
import { ContextManager, messageChars } from '../src/context/context.js';
import { replaySessionEvents } from '../src/context/replay.js';
import type { SessionEvent } from '../src/ports/storage.js';
import { ScriptedModelProvider, scriptedModel } from '../src/testing/index.js';
import { buildAgent, defineTool, runTurn, shutdownAgents } from './support/agent-fixtures.js';

afterEach(shutdownAgents);

describe('the tool-call limit counts every call the model made (SPEC §5.2)', () => {
  test('unknown and invalid calls count: a batch of one unknown, one unparsable and one valid call reaches a limit of 3', async () => {
    let runs = 0;
    const echo = defineTool({
      name: 'echo',
      execute: () => {
        runs += 1;
        return { content: 'echoed', isError: false };
      },
    });
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'tool_call', toolName: 'no_such_tool', callId: 'a' },
          { type: 'tool_call', toolName: 'echo', callId: 'b', arguments: '{broken' },
          { type: 'tool_call', toolName: 'echo', callId: 'c' },
        ],
        [{ type: 'text', text: 'never asked' }],
      ],
    });
    const { agent } = await buildAgent({ provider, tools: [echo], config: { maxToolCallsPerTurn: 3 } });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'go');

    expect(runs).toBe(1);
    expect(provider.requests).toHaveLength(1);
    expect(turn.errors.map((error) => error.code)).toEqual(['MAX_TOOL_CALLS_EXCEEDED']);
    expect(turn.types.at(-1)).toBe('turn_complete');
  });

  test('below the limit the same batch goes on to the next model call', async () => {
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'tool_call', toolName: 'no_such_tool', callId: 'a' },
          { type: 'tool_call', toolName: 'echo', callId: 'b', arguments: '{broken' },
        ],
        [{ type: 'text', text: 'done' }],
      ],
    });
    const { agent } = await buildAgent({
      provider,
      tools: [defineTool({ name: 'echo' })],
      config: { maxToolCallsPerTurn: 3 },
    });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'go');

    expect(provider.requests).toHaveLength(2);
    expect(turn.errors).toEqual([]);
  });
});

describe('the token estimate (SPEC §4 Compaction, §5.11)', () => {
  test('an image counts as 1,000 tokens', () => {
    const withImage = messageChars({
      type: 'user',
      content: [
        { type: 'text', text: 'abcd' },
        { type: 'image', data: 'x'.repeat(50_000), mediaType: 'image/png' },
      ],
    });
    expect(withImage).toBe(4 + 4_000);
    const context = new ContextManager();
    context.push({ type: 'user', content: [{ type: 'image', data: 'AAAA', mediaType: 'image/png' }] });
    expect(context.estimateTokens({ promptChars: 0, toolsChars: 0 })).toBe(1_000);
  });

  test('the estimate adds each message once, and prompt and tools on top, at four characters a token', () => {
    const context = new ContextManager();
    context.push({ type: 'user', content: [{ type: 'text', text: 'x'.repeat(400) }] });
    expect(context.estimateTokens({ promptChars: 40, toolsChars: 0 })).toBe(110);
    context.push({ type: 'tool_result', callId: 'a', content: 'y'.repeat(800), isError: false });
    expect(context.estimateTokens({ promptChars: 40, toolsChars: 80 })).toBe(330);
  });

  test('a reported prompt size replaces the estimate; only what was added since is estimated on top', () => {
    const context = new ContextManager();
    context.push({ type: 'user', content: [{ type: 'text', text: 'x'.repeat(4_000) }] });
    context.recordReportedInput(50);
    expect(context.estimateTokens({ promptChars: 10_000, toolsChars: 10_000 })).toBe(50);
    context.push({
      type: 'assistant',
      content: [{ type: 'text', text: 'z'.repeat(40) }],
      status: 'complete',
    });
    expect(context.estimateTokens({ promptChars: 10_000, toolsChars: 10_000 })).toBe(60);
  });

  test('a model with a small window sees its compaction threshold from the estimate of images too', async () => {
    const provider = new ScriptedModelProvider({
      models: [scriptedModel({ contextWindow: 2_000 })],
      responses: [[{ type: 'text', text: 'seen' }], [{ type: 'text', text: 'again' }]],
      byPurpose: { compaction: [[{ type: 'text', text: 'a summary' }]] },
    });
    const { agent } = await buildAgent({ provider, config: { compactThreshold: 0.5 } });
    const session = await agent.newSession();
    // The eight bytes of a PNG signature: the smallest data the input check accepts as a PNG.
    const png = 'iVBORw0KGgo=';
    await runTurn(session, { content: [{ type: 'image', data: png, mediaType: 'image/png' }] });
    const second = await runTurn(session, {
      content: [{ type: 'image', data: png, mediaType: 'image/png' }],
    });
    // Two images are 2,000 estimated tokens, over half of the 2,000-token window: the second turn compacts.
    expect(second.types).toContain('context_compacted');
  });

  test("a tool call's arguments count as many characters as their JSON text has, for any JSON value", () => {
    const toolName = 'lookup';
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ unit: 'binary' }), (value, text) => {
        // A string is the model's unparsed argument text: counted as it is.
        for (const args of [{ value }, { text, value }, [text, value, undefined]]) {
          const chars = messageChars({ type: 'tool_call', callId: 'c', toolName, arguments: args });
          expect(chars).toBe(toolName.length + (JSON.stringify(args)?.length ?? 0));
        }
      }),
    );
    // Values JSON writes its own way: a Date, toJSON, -0, NaN, skipped members, a null prototype.
    const odd: unknown[] = [
      { at: new Date(0) },
      { toJSON: () => 'short' },
      [-0, Number.NaN, Number.POSITIVE_INFINITY, 1e21, 0.1],
      [0, 7, -7, 10, -10, 99, 100, 1e15, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 53],
      { skipped: undefined, fn: () => 1, kept: 'yes' },
      Object.assign(Object.create(null) as object, { a: 1 }),
      ['lone \ud800 surrogate "quoted"\n'],
    ];
    for (const args of odd) {
      const chars = messageChars({ type: 'tool_call', callId: 'c', toolName, arguments: args });
      expect(chars).toBe(toolName.length + (JSON.stringify(args)?.length ?? 0));
    }
  });

  test('a replay gives exactly its messages, with no empty slot, whether the log has more events or fewer', () => {
    const at = new Date(0);
    const cut = (index: number): SessionEvent => ({
      timestamp: at,
      payload: {
        type: 'assistant_message',
        content: [{ type: 'text', text: `cut ${index}` }],
        status: 'incomplete',
      },
    });
    const note = (index: number): SessionEvent => ({
      timestamp: at,
      payload: { type: 'metadata', key: 'note', value: index },
    });
    // Every cut answer adds a notice: twice as many messages as events. Every note adds none.
    for (const events of [
      Array.from({ length: 100 }, (_, index) => cut(index)),
      [...Array.from({ length: 100 }, (_, index) => note(index)), cut(0)],
    ]) {
      const { messages } = replaySessionEvents(events.map((event) => event.payload));
      const cuts = events.filter((event) => event.payload.type === 'assistant_message').length;
      expect(messages).toHaveLength(cuts * 2);
      expect(Object.keys(messages)).toHaveLength(messages.length);
      expect(messages.every((message) => message !== undefined)).toBe(true);
    }
  });

  test('a replayed log is measured as it is rebuilt: the same size as measuring its messages one by one', () => {
    const at = new Date(0);
    const events: SessionEvent[] = [
      { timestamp: at, payload: { type: 'user_message', content: [{ type: 'text', text: 'read it' }] } },
      {
        timestamp: at,
        payload: { type: 'tool_call', callId: 'a', toolName: 'read', arguments: { p: 'x"y' } },
      },
      { timestamp: at, payload: { type: 'tool_result', callId: 'a', content: 'contents', isError: false } },
      { timestamp: at, payload: { type: 'tool_call', callId: 'b', toolName: 'read', arguments: [1, null] } },
      {
        timestamp: at,
        payload: {
          type: 'assistant_message',
          content: [{ type: 'text', text: 'cut' }],
          status: 'incomplete',
        },
      },
      { timestamp: at, payload: { type: 'system_message', content: 'a note' } },
      {
        timestamp: at,
        payload: { type: 'metadata', key: 'compaction', value: { summary: 's', keptMessages: 3 } },
      },
      { timestamp: at, payload: { type: 'user_message', content: [{ type: 'text', text: 'and now?' }] } },
    ];
    for (let end = 1; end <= events.length; end++) {
      const replayed = replaySessionEvents(events.slice(0, end).map((event) => event.payload));
      let measured = 0;
      for (const message of replayed.messages) measured += messageChars(message);
      expect(replayed.chars).toBe(measured);
    }
  });
});
