import { afterEach, describe, expect, test } from 'vitest';
import type { SessionEventPayload } from '../src/index.js';
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

const text = (value: string) => [{ type: 'text' as const, text: value }];

describe('write-ahead', () => {
  test('the session_config metadata is the first event, saved when the session is created', async () => {
    const storage = new ControllableSessionStorage();
    const { agent } = await buildAgent({ provider: new ScriptedModelProvider(), sessionStorage: storage });
    const session = await agent.newSession({ systemPromptOverride: 'Be terse.' });

    expect(await storedPayloads(storage, session.id)).toEqual([
      {
        type: 'metadata',
        key: 'session_config',
        value: { modelId: 'scripted-model', systemPromptOverride: 'Be terse.' },
      },
    ]);
  });

  test('the user message is saved before the model is called; tool calls before their tool runs', async () => {
    const storage = new ControllableSessionStorage();
    let sessionId = '';
    const seenByModel: Promise<SessionEventPayload[]>[] = [];
    const seenByTool: Promise<SessionEventPayload[]>[] = [];
    const look = defineTool({
      name: 'look',
      execute: () => {
        seenByTool.push(storedPayloads(storage, sessionId));
        return { content: 'seen', isError: false };
      },
    });
    const provider = new ScriptedModelProvider({
      responses: [
        () => {
          // loadSession copies the log synchronously, so this is the log as it is at the call.
          seenByModel.push(storedPayloads(storage, sessionId));
          return [{ type: 'tool_call', toolName: 'look', callId: 'l1' }];
        },
        [{ type: 'text', text: 'done' }],
      ],
    });
    const { agent } = await buildAgent({ provider, tools: [look], sessionStorage: storage });
    const session = await agent.newSession();
    sessionId = session.id;
    await runTurn(session, 'hello');

    expect((await seenByModel[0])?.at(-1)).toEqual({
      type: 'user_message',
      content: text('hello'),
      turnId: expect.any(String),
    });
    expect((await seenByTool[0])?.at(-1)).toEqual({
      type: 'tool_call',
      callId: 'l1',
      toolName: 'look',
      arguments: {},
    });
  });

  test('tool results are saved in call order even when the later call finishes first', async () => {
    const storage = new ControllableSessionStorage();
    const secondDone = deferred();
    const slow = defineTool({
      name: 'slow',
      execute: async () => {
        await secondDone.promise;
        return { content: 'slow result', isError: false };
      },
    });
    const fast = defineTool({
      name: 'fast',
      execute: () => {
        queueMicrotask(() => secondDone.resolve());
        return { content: 'fast result', isError: false };
      },
    });
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'tool_call', toolName: 'slow', callId: 'first' },
          { type: 'tool_call', toolName: 'fast', callId: 'second' },
        ],
        [{ type: 'text', text: 'done' }],
      ],
    });
    const { agent } = await buildAgent({ provider, tools: [slow, fast], sessionStorage: storage });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'both');

    const ends = turn.payloads.flatMap((payload) =>
      payload.type === 'tool_call_end' ? [payload.callId] : [],
    );
    expect(ends).toEqual(['second', 'first']);
    const saved = await storedPayloads(storage, session.id);
    expect(
      saved.filter((payload) => payload.type === 'tool_result').map((payload) => payload.callId),
    ).toEqual(['first', 'second']);
    expect(
      session
        .messages()
        .filter((message) => message.type === 'tool_result')
        .map((m) => m.callId),
    ).toEqual(['first', 'second']);
  });

  test('with a slow storage, a batch starts once all its calls are saved, and the model waits for all results', async () => {
    const storage = new ControllableSessionStorage();
    // Every write takes a few milliseconds, so that nothing is saved "by accident" before it is waited for.
    storage.beforeSave = () => new Promise((resolve) => setTimeout(resolve, 3));
    let sessionId = '';
    const seenByTools: Promise<SessionEventPayload[]>[] = [];
    const seenByModel: Promise<SessionEventPayload[]>[] = [];
    const look = defineTool({
      name: 'look',
      execute: async () => {
        seenByTools.push(storedPayloads(storage, sessionId));
        await new Promise((resolve) => setTimeout(resolve, 1));
        return { content: 'seen', isError: false };
      },
    });
    const provider = new ScriptedModelProvider({
      responses: [
        ['a', 'b', 'c'].map((callId) => ({ type: 'tool_call' as const, toolName: 'look', callId })),
        () => {
          seenByModel.push(storedPayloads(storage, sessionId));
          return [{ type: 'text', text: 'done' }];
        },
      ],
    });
    const { agent } = await buildAgent({ provider, tools: [look], sessionStorage: storage });
    const session = await agent.newSession();
    sessionId = session.id;
    await runTurn(session, 'look thrice');

    expect(seenByTools).toHaveLength(3);
    for (const seen of seenByTools) {
      expect((await seen).filter((payload) => payload.type === 'tool_call').map((p) => p.callId)).toEqual([
        'a',
        'b',
        'c',
      ]);
    }
    const beforeSecondCall = await seenByModel[0];
    expect(
      beforeSecondCall?.filter((payload) => payload.type === 'tool_result').map((p) => p.callId),
    ).toEqual(['a', 'b', 'c']);
  });

  test('a turn whose events nobody reads is persisted whole; resume rebuilds the same context', async () => {
    const storage = new ControllableSessionStorage();
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'text', text: 'Let me look.' },
          { type: 'tool_call', toolName: 'look' },
        ],
        [{ type: 'text', text: 'Done.' }],
      ],
    });
    const { agent } = await buildAgent({
      provider,
      tools: [defineTool({ name: 'look' })],
      sessionStorage: storage,
    });
    const session = await agent.newSession();
    const turn = await session.sendMessage('look');
    expect((await turn.done).status).toBe('completed');
    const live = session.messages();
    expect(live).toHaveLength(5);
    await session.close();

    const resumed = await agent.resumeSession(session.id);
    expect(resumed.messages()).toEqual(live);
  });
});

describe('storage failures', () => {
  test('a failing saveEvent: STORAGE_ERROR then turn_complete; the queued events are written once it works again', async () => {
    const storage = new ControllableSessionStorage();
    let outage = false;
    storage.beforeSave = () => {
      if (outage) throw new Error('disk full');
    };
    const provider = new ScriptedModelProvider({
      responses: [
        [{ type: 'text', text: 'one' }],
        () => {
          // The outage starts mid-turn: the user message is saved, the answer is not.
          outage = true;
          return [{ type: 'text', text: 'two' }];
        },
        // The third turn fails on saving its user message: the model is not called.
        [{ type: 'text', text: 'four' }],
      ],
    });
    const { agent } = await buildAgent({ provider, sessionStorage: storage });
    const session = await agent.newSession();
    await runTurn(session, 'first');

    const second = await runTurn(session, 'second');
    expect(second.types).toEqual(['text_delta', 'error', 'turn_complete']);
    expect(second.errors[0]?.code).toBe('STORAGE_ERROR');
    expect(second.errors[0]?.sourceComponent).toBe('storage');

    const third = await runTurn(session, 'third');
    expect(third.types).toEqual(['error', 'turn_complete']);
    expect(third.errors[0]?.code).toBe('STORAGE_ERROR');
    expect(storage.failures).toBeGreaterThanOrEqual(2);

    outage = false;
    const fourth = await runTurn(session, 'fourth');
    expect(fourth.types).toEqual(['text_delta', 'turn_complete']);

    const expected = [
      userMessage('first'),
      assistantMessage('one'),
      userMessage('second'),
      assistantMessage('two'),
      userMessage('third'),
      userMessage('fourth'),
      assistantMessage('four'),
    ];
    expect(session.messages()).toEqual(expected);
    const saved = await storedPayloads(storage, session.id);
    expect(saved.map((payload) => payload.type)).toEqual([
      'metadata',
      'user_message',
      'assistant_message',
      'user_message',
      'assistant_message',
      'user_message',
      'user_message',
      'assistant_message',
    ]);
    await session.close();
    expect((await agent.resumeSession(session.id)).messages()).toEqual(expected);
  });

  test('a failed tool_result save still leaves every tool_call with its result', async () => {
    const storage = new ControllableSessionStorage();
    storage.beforeSave = (event) => {
      if (event.payload.type === 'tool_result' && storage.failures === 0) throw new Error('disk full');
    };
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'tool_call', toolName: 'look', callId: 'a' },
          { type: 'tool_call', toolName: 'look', callId: 'b' },
        ],
        [{ type: 'text', text: 'next turn' }],
      ],
    });
    const { agent } = await buildAgent({
      provider,
      tools: [defineTool({ name: 'look' })],
      sessionStorage: storage,
    });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'look twice');

    expect(turn.errors.map((error) => error.code)).toEqual(['STORAGE_ERROR']);
    expect(turn.types.at(-1)).toBe('turn_complete');
    const results = session.messages().filter((message) => message.type === 'tool_result');
    expect(results.map((result) => result.callId)).toEqual(['a', 'b']);

    await runTurn(session, 'again');
    const saved = await storedPayloads(storage, session.id);
    const savedResults = saved.filter((payload) => payload.type === 'tool_result');
    expect(savedResults.map((payload) => payload.callId)).toEqual(['a', 'b']);
  });
});

describe('without a session storage', () => {
  test('sessions live in memory and resumeSession rejects with SESSION_NOT_FOUND', async () => {
    const provider = new ScriptedModelProvider({ responses: [[{ type: 'text', text: 'hi there' }]] });
    const { agent } = await buildAgent({ provider });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'hello');

    expect(turn.types).toEqual(['text_delta', 'turn_complete']);
    expect(session.messages()).toEqual([userMessage('hello'), assistantMessage('hi there')]);
    await session.close();
    await expect(agent.resumeSession(session.id)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
  });
});
