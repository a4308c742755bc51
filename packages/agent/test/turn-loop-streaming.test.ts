import { afterEach, describe, expect, test } from 'vitest';
import { templates } from '../src/index.js';
import { ScriptedModelProvider } from '../src/testing/index.js';
import {
  assistantMessage,
  buildAgent,
  ControllableSessionStorage,
  deferred,
  defineTool,
  runTurn,
  shutdownAgents,
  storedPayloads,
  userMessage,
} from './support/agent-fixtures.js';

afterEach(shutdownAgents);

describe('streaming', () => {
  test('text and reasoning are streamed; reasoning blocks come first in the message, signature kept', async () => {
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'text', text: 'The answer ' },
          { type: 'reasoning', text: 'Let me think.', signature: 'sig-1' },
          { type: 'reasoning', text: 'Second thought' },
          { type: 'text', text: 'is 42.' },
        ],
      ],
    });
    const storage = new ControllableSessionStorage();
    const { agent } = await buildAgent({ provider, sessionStorage: storage });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'question');

    expect(turn.payloads).toEqual([
      { type: 'text_delta', text: 'The answer ' },
      { type: 'reasoning_delta', text: 'Let me think.' },
      { type: 'reasoning_delta', text: 'Second thought' },
      { type: 'text_delta', text: 'is 42.' },
      { type: 'turn_complete', usage: expect.objectContaining({ modelCalls: 0 }) },
    ]);
    const content = [
      { type: 'reasoning', text: 'Let me think.', signature: 'sig-1' },
      { type: 'reasoning', text: 'Second thought' },
      { type: 'text', text: 'The answer is 42.' },
    ];
    expect(session.messages()).toEqual([
      userMessage('question'),
      { type: 'assistant', content, status: 'complete' },
    ]);
    expect((await storedPayloads(storage, session.id)).at(-1)).toEqual({
      type: 'assistant_message',
      content,
      status: 'complete',
    });
  });
});

describe('tools', () => {
  test('a tool round trip: events, then the next request holds assistant, tool_call and tool_result in order', async () => {
    const received: unknown[] = [];
    const echo = defineTool({
      name: 'echo',
      execute: (input) => {
        received.push(input.arguments);
        return { content: 'echoed: hi', isError: false };
      },
    });
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'text', text: 'Calling echo.' },
          { type: 'tool_call', toolName: 'echo', arguments: { text: 'hi' }, callId: 'c1' },
        ],
        [{ type: 'text', text: 'Done.' }],
      ],
    });
    const { agent } = await buildAgent({ provider, tools: [echo] });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'please echo');

    expect(received).toEqual([{ text: 'hi' }]);
    expect(turn.types).toEqual([
      'text_delta',
      'tool_call_start',
      'tool_call_end',
      'text_delta',
      'turn_complete',
    ]);
    expect(turn.payloads[1]).toEqual({
      type: 'tool_call_start',
      callId: 'c1',
      toolName: 'echo',
      arguments: { text: 'hi' },
    });
    expect(turn.payloads[2]).toMatchObject({
      type: 'tool_call_end',
      callId: 'c1',
      toolName: 'echo',
      output: { content: 'echoed: hi', isError: false },
      success: true,
    });
    expect(provider.requests).toHaveLength(2);
    expect(provider.requests[1]?.messages).toEqual([
      userMessage('please echo'),
      assistantMessage('Calling echo.'),
      { type: 'tool_call', callId: 'c1', toolName: 'echo', arguments: { text: 'hi' } },
      { type: 'tool_result', callId: 'c1', content: 'echoed: hi', isError: false },
    ]);
    expect(session.messages().at(-1)).toEqual(assistantMessage('Done.'));
  });

  test('two read-only tools of one batch run at the same time', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    const secondStarted = deferred();
    const track = (name: string, wait: () => Promise<void>) =>
      defineTool({
        name,
        execute: async () => {
          inFlight += 1;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await wait();
          inFlight -= 1;
          return { content: `${name} done`, isError: false };
        },
      });
    // `first` can only finish once `second` has started; run serially, it would time out instead.
    const first = track('first', () => secondStarted.promise);
    const second = track('second', async () => secondStarted.resolve());
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'tool_call', toolName: 'first' },
          { type: 'tool_call', toolName: 'second' },
        ],
        [{ type: 'text', text: 'both done' }],
      ],
    });
    const { agent } = await buildAgent({
      provider,
      tools: [first, second],
      config: { toolTimeoutMs: 2_000 },
    });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'go');

    expect(maxInFlight).toBe(2);
    expect(turn.types.at(-1)).toBe('turn_complete');
    expect(session.messages().filter((message) => message.type === 'tool_result')).toEqual([
      { type: 'tool_result', callId: 'call_1', content: 'first done', isError: false },
      { type: 'tool_result', callId: 'call_2', content: 'second done', isError: false },
    ]);
  });

  test('a batch with a mutating tool runs one call after another', async () => {
    const log: string[] = [];
    const track = (name: string, isMutating: boolean) =>
      defineTool({
        name,
        isMutating,
        execute: async () => {
          log.push(`start ${name}`);
          await new Promise((resolve) => setImmediate(resolve));
          log.push(`end ${name}`);
          return { content: name, isError: false };
        },
      });
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'tool_call', toolName: 'read' },
          { type: 'tool_call', toolName: 'write' },
          { type: 'tool_call', toolName: 'read' },
        ],
        [{ type: 'text', text: 'ok' }],
      ],
    });
    const { agent } = await buildAgent({ provider, tools: [track('read', false), track('write', true)] });
    const session = await agent.newSession();
    await runTurn(session, 'go');

    // Concurrently, the three would all start before any ends.
    expect(log).toEqual(['start read', 'end read', 'start write', 'end write', 'start read', 'end read']);
  });

  test('an answer with tool calls and no text adds no empty assistant message (SPEC §5.12)', async () => {
    const storage = new ControllableSessionStorage();
    const provider = new ScriptedModelProvider({
      responses: [[{ type: 'tool_call', toolName: 'look', callId: 'c1' }], [{ type: 'text', text: 'seen' }]],
    });
    const { agent } = await buildAgent({
      provider,
      tools: [defineTool({ name: 'look' })],
      sessionStorage: storage,
    });
    const session = await agent.newSession();
    await runTurn(session, 'look');

    expect(session.messages()).toEqual([
      userMessage('look'),
      { type: 'tool_call', callId: 'c1', toolName: 'look', arguments: {} },
      { type: 'tool_result', callId: 'c1', content: 'look ok', isError: false },
      assistantMessage('seen'),
    ]);
    const saved = await storedPayloads(storage, session.id);
    expect(saved.filter((payload) => payload.type === 'assistant_message')).toHaveLength(1);
  });

  test('the tool-call limit: 3 of 5 calls run, 2 get errors, a notice, MAX_TOOL_CALLS_EXCEEDED, turn_complete', async () => {
    let runs = 0;
    const count = defineTool({
      name: 'count',
      execute: () => {
        runs += 1;
        return { content: `run ${runs}`, isError: false };
      },
    });
    const calls = [1, 2, 3, 4, 5].map((n) => ({
      type: 'tool_call' as const,
      toolName: 'count',
      callId: `c${n}`,
    }));
    const provider = new ScriptedModelProvider({ responses: [calls, [{ type: 'text', text: 'never' }]] });
    const { agent } = await buildAgent({ provider, tools: [count], config: { maxToolCallsPerTurn: 3 } });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'count to five');

    expect(runs).toBe(3);
    expect(provider.requests).toHaveLength(1);
    const results = session.messages().filter((message) => message.type === 'tool_result');
    expect(results.map((result) => result.isError)).toEqual([false, false, false, true, true]);
    const notice = templates.fillTemplate(templates.TOOL_LIMIT_NOTICE, { limit: 3 });
    expect(notice).toContain('3');
    expect(session.messages().at(-1)).toEqual({ type: 'system', content: notice });
    expect(turn.types.slice(-2)).toEqual(['error', 'turn_complete']);
    expect(turn.errors.map((error) => error.code)).toEqual(['MAX_TOOL_CALLS_EXCEEDED']);
  });
});
