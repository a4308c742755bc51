import { afterEach, describe, expect, test } from 'vitest';
import type { HookPayload, HookResult, JsonSchema } from '../src/index.js';
import { ScriptedModelProvider } from '../src/testing/index.js';
import {
  buildAgent,
  ControllableSessionStorage,
  defineTool,
  hookPlugin,
  runTurn,
  shutdownAgents,
  storedPayloads,
} from './support/agent-fixtures.js';

afterEach(shutdownAgents);

const PATH_SCHEMA: JsonSchema = {
  type: 'object',
  properties: { path: { type: 'string' } },
  required: ['path'],
  additionalProperties: false,
};

/** Appends a section to the TurnStart data's dynamicSections. */
function addSection(section: string) {
  return (payload: HookPayload): HookResult => {
    const data = payload.data as { userInput: string; dynamicSections: string[] };
    return { type: 'continue_with', data: { ...data, dynamicSections: [...data.dynamicSections, section] } };
  };
}

function textAnswer(text = 'ok'): ScriptedModelProvider {
  return new ScriptedModelProvider({ responses: [[{ type: 'text', text }]] });
}

describe('TurnStart', () => {
  test('data is { userInput, dynamicSections: [] } with the turn and session ids', async () => {
    const seen: HookPayload[] = [];
    const plugin = hookPlugin({ id: 'watch', hooks: { TurnStart: (payload) => void seen.push(payload) } });
    const { agent } = await buildAgent({ provider: textAnswer(), plugins: [plugin] });
    const session = await agent.newSession();
    const turn = await session.sendMessage('hello there');
    for await (const _event of turn);

    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      event: 'TurnStart',
      sessionId: session.id,
      turnId: turn.turnId,
      pluginConfig: { from: 'watch' },
      data: { userInput: 'hello there', dynamicSections: [] },
    });
  });

  test('continue_with sections chain through two plugins and end the dynamic prompt, in order', async () => {
    const seenBySecond: unknown[] = [];
    const first = hookPlugin({ id: 'first', hooks: { TurnStart: addSection('Section A') } });
    const second = hookPlugin({
      id: 'second',
      hooks: {
        TurnStart: (payload) => {
          seenBySecond.push(structuredClone(payload.data));
          return addSection('Section B')(payload);
        },
      },
    });
    const provider = textAnswer();
    const { agent } = await buildAgent({
      provider,
      plugins: [first, second],
      config: { environmentContext: { cwd: '/repo' } },
    });
    const session = await agent.newSession();
    await runTurn(session, 'hi');

    expect(seenBySecond).toEqual([{ userInput: 'hi', dynamicSections: ['Section A'] }]);
    const dynamic = provider.requests[0]?.systemPromptParts.dynamic ?? '';
    expect(dynamic).toContain('/repo');
    expect(dynamic.endsWith('Section A\n\nSection B')).toBe(true);
    expect(provider.requests[0]?.systemPromptParts.stable).not.toContain('Section A');
  });

  test('abort: REQUEST_CANCELLED then turn_cancelled; no user message; TurnEnd cancelled; turn not counted', async () => {
    const turnEnds: unknown[] = [];
    const sessionEnds: unknown[] = [];
    const plugin = hookPlugin({
      id: 'gate',
      hooks: {
        TurnStart: () => ({ type: 'abort', reason: 'not today' }),
        TurnEnd: (payload) => void turnEnds.push(payload.data),
        SessionEnd: (payload) => void sessionEnds.push(payload.data),
      },
    });
    const storage = new ControllableSessionStorage();
    const provider = textAnswer();
    const { agent } = await buildAgent({ provider, plugins: [plugin], sessionStorage: storage });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'hello');

    expect(turn.types).toEqual(['error', 'turn_cancelled']);
    expect(turn.errors[0]?.code).toBe('REQUEST_CANCELLED');
    expect(turn.errors[0]?.message).toContain('not today');
    expect(provider.requests).toHaveLength(0);
    expect(session.messages()).toEqual([]);
    expect((await storedPayloads(storage, session.id)).map((payload) => payload.type)).toEqual(['metadata']);
    expect(turnEnds).toEqual([{ status: 'cancelled', toolCallCount: 0 }]);
    await session.close();
    expect(sessionEnds).toEqual([{ turnCount: 0 }]);
  });
});

describe('TurnEnd', () => {
  test('data { status, toolCallCount } for completed, failed and cancelled turns', async () => {
    const turnEnds: unknown[] = [];
    const plugin = hookPlugin({
      id: 'watch',
      hooks: { TurnEnd: (payload) => void turnEnds.push(payload.data) },
    });
    const provider = new ScriptedModelProvider({
      responses: [
        [
          { type: 'tool_call', toolName: 'look' },
          { type: 'tool_call', toolName: 'look' },
        ],
        [{ type: 'text', text: 'looked twice' }],
        [{ type: 'error', error: new Error('down') }],
        [{ type: 'text', text: 'partial' }, { type: 'hang' }],
      ],
    });
    const { agent } = await buildAgent({
      provider,
      plugins: [plugin],
      tools: [defineTool({ name: 'look' })],
    });
    const session = await agent.newSession();
    await runTurn(session, 'look twice');
    await runTurn(session, 'fail');
    const turn = await session.sendMessage('cancel me');
    for await (const event of turn) if (event.payload.type === 'text_delta') turn.cancel();

    expect(turnEnds).toEqual([
      { status: 'completed', toolCallCount: 2 },
      { status: 'failed', toolCallCount: 0 },
      { status: 'cancelled', toolCallCount: 0 },
    ]);
  });
});

describe('BeforeToolUse and AfterToolUse', () => {
  function pathCall(path: unknown) {
    return new ScriptedModelProvider({
      responses: [
        [{ type: 'tool_call', toolName: 'read', arguments: { path }, callId: 'r1' }],
        [{ type: 'text', text: 'ok' }],
      ],
    });
  }

  test('continue_with changes the arguments the tool receives', async () => {
    const received: unknown[] = [];
    const read = defineTool({
      name: 'read',
      parametersSchema: PATH_SCHEMA,
      execute: (input) => {
        received.push(input.arguments);
        return { content: 'read', isError: false };
      },
    });
    const seen: unknown[] = [];
    const rewrite = hookPlugin({
      id: 'rewrite',
      hooks: {
        BeforeToolUse: (payload) => {
          seen.push(payload.data);
          const data = payload.data as { arguments: { path: string } };
          return {
            type: 'continue_with',
            data: { ...data, arguments: { path: `/safe${data.arguments.path}` } },
          };
        },
      },
    });
    const { agent } = await buildAgent({ provider: pathCall('/etc'), tools: [read], plugins: [rewrite] });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'read it');

    expect(seen).toEqual([{ callId: 'r1', toolName: 'read', arguments: { path: '/etc' } }]);
    expect(received).toEqual([{ path: '/safe/etc' }]);
    expect(turn.payloads.find((payload) => payload.type === 'tool_call_start')).toMatchObject({
      arguments: { path: '/safe/etc' },
    });
  });

  test('changed arguments that break the schema are rejected and the tool is not run', async () => {
    let runs = 0;
    const read = defineTool({
      name: 'read',
      parametersSchema: PATH_SCHEMA,
      execute: () => {
        runs += 1;
        return { content: 'read', isError: false };
      },
    });
    const breaker = hookPlugin({
      id: 'breaker',
      hooks: {
        BeforeToolUse: (payload) => ({
          type: 'continue_with',
          data: { ...(payload.data as object), arguments: { path: 42 } },
        }),
      },
    });
    const { agent } = await buildAgent({ provider: pathCall('/etc'), tools: [read], plugins: [breaker] });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'read it');

    expect(runs).toBe(0);
    const result = session.messages().find((message) => message.type === 'tool_result');
    expect(result).toMatchObject({ callId: 'r1', isError: true });
    expect(turn.payloads.find((payload) => payload.type === 'tool_call_end')).toMatchObject({
      success: false,
    });
  });

  test("abort: the tool is not run and its result is 'Tool aborted by hook: reason'", async () => {
    let runs = 0;
    const read = defineTool({
      name: 'read',
      parametersSchema: PATH_SCHEMA,
      execute: () => ({ content: String(++runs), isError: false }),
    });
    const guard = hookPlugin({
      id: 'guard',
      hooks: { BeforeToolUse: () => ({ type: 'abort', reason: 'path denied' }) },
    });
    const { agent } = await buildAgent({ provider: pathCall('/etc'), tools: [read], plugins: [guard] });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'read it');

    expect(runs).toBe(0);
    expect(session.messages().find((message) => message.type === 'tool_result')).toEqual({
      type: 'tool_result',
      callId: 'r1',
      content: 'Tool aborted by hook: path denied',
      isError: true,
    });
    expect(turn.types).toEqual(['tool_call_start', 'tool_call_end', 'text_delta', 'turn_complete']);
  });

  test('AfterToolUse data holds the call, its output and durationMs', async () => {
    const seen: unknown[] = [];
    const watch = hookPlugin({
      id: 'watch',
      hooks: { AfterToolUse: (payload) => void seen.push(payload.data) },
    });
    const read = defineTool({
      name: 'read',
      parametersSchema: PATH_SCHEMA,
      execute: () => ({ content: 'file text', isError: false }),
    });
    const { agent } = await buildAgent({ provider: pathCall('/a'), tools: [read], plugins: [watch] });
    const session = await agent.newSession();
    await runTurn(session, 'read it');

    expect(seen).toHaveLength(1);
    expect(seen[0]).toEqual({
      callId: 'r1',
      toolName: 'read',
      arguments: { path: '/a' },
      output: { content: 'file text', isError: false },
      durationMs: expect.any(Number),
    });
  });
});

describe('failing handlers', () => {
  test('a throwing handler is reported as PLUGIN_ERROR and the turn goes on', async () => {
    const plugin = hookPlugin({
      id: 'broken',
      hooks: {
        TurnStart: () => {
          throw new Error('handler bug');
        },
      },
    });
    const provider = textAnswer('still here');
    const { agent } = await buildAgent({ provider, plugins: [plugin] });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'hello');

    expect(turn.types).toEqual(['error', 'text_delta', 'turn_complete']);
    expect(turn.errors[0]?.code).toBe('PLUGIN_ERROR');
    expect(turn.errors[0]?.sourceComponent).toBe('plugin');
    expect(turn.errors[0]?.message).toContain('handler bug');
    expect(provider.requests).toHaveLength(1);
  });

  test('a handler that never answers times out (toolTimeoutMs) as PLUGIN_ERROR and the tool still runs', async () => {
    let runs = 0;
    const plugin = hookPlugin({
      id: 'stuck',
      hooks: { BeforeToolUse: () => new Promise<undefined>(() => undefined) },
    });
    const look = defineTool({ name: 'look', execute: () => ({ content: `run ${++runs}`, isError: false }) });
    const provider = new ScriptedModelProvider({
      responses: [[{ type: 'tool_call', toolName: 'look' }], [{ type: 'text', text: 'done' }]],
    });
    const { agent } = await buildAgent({
      provider,
      plugins: [plugin],
      tools: [look],
      config: { toolTimeoutMs: 50 },
    });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'look');

    expect(turn.errors.map((error) => error.code)).toEqual(['PLUGIN_ERROR']);
    expect(runs).toBe(1);
    expect(turn.types.at(-1)).toBe('turn_complete');
  });
});

describe('session hooks and ignored results', () => {
  test('SessionStart data is { modelId }', async () => {
    const seen: HookPayload[] = [];
    const plugin = hookPlugin({ id: 'watch', hooks: { SessionStart: (payload) => void seen.push(payload) } });
    const { agent } = await buildAgent({ provider: textAnswer(), plugins: [plugin] });
    const session = await agent.newSession();

    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      event: 'SessionStart',
      sessionId: session.id,
      data: { modelId: 'scripted-model' },
    });
    expect(seen[0]?.turnId).toBeUndefined();
  });

  test('continue_with in SessionStart, SessionEnd, TurnEnd and AfterToolUse is ignored without error', async () => {
    const replace: () => HookResult = () => ({ type: 'continue_with', data: { garbage: true } });
    const plugin = hookPlugin({
      id: 'meddler',
      hooks: { SessionStart: replace, SessionEnd: replace, TurnEnd: replace, AfterToolUse: replace },
    });
    const provider = new ScriptedModelProvider({
      responses: [[{ type: 'tool_call', toolName: 'look', callId: 'l1' }], [{ type: 'text', text: 'done' }]],
    });
    const { agent, backgroundErrors } = await buildAgent({
      provider,
      plugins: [plugin],
      tools: [defineTool({ name: 'look' })],
    });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'look');
    await session.close();

    expect(turn.types).toEqual(['tool_call_start', 'tool_call_end', 'text_delta', 'turn_complete']);
    expect(turn.payloads[1]).toMatchObject({ output: { content: 'look ok', isError: false }, success: true });
    expect(session.messages().find((message) => message.type === 'tool_result')).toMatchObject({
      content: 'look ok',
      isError: false,
    });
    expect(backgroundErrors).toEqual([]);
  });
});
