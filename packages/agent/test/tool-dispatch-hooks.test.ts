import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { HookRegistry } from '../src/hooks/hook.js';
import { isAgentError } from '../src/kernel/error.js';
import type { ToolInput, ToolOutput } from '../src/ports/tool.js';
import { TOOL_OUTPUT_LIMIT_BYTES, ToolDispatcher } from '../src/tools/tool-dispatch.js';

import { call, NOTICE, PATH_SCHEMA, runBatch, tool } from './support/tool-dispatch-fixtures.js';

describe('ToolDispatcher.executeBatch: hooks', () => {
  function recordingTool() {
    const received: unknown[] = [];
    const handler = tool({
      name: 'read',
      schema: PATH_SCHEMA,
      execute: async (input) => {
        received.push(input.arguments);
        return { content: 'read', isError: false };
      },
    });
    return { received, dispatcher: new ToolDispatcher({ tools: [handler], timeoutMs: 5000 }) };
  }

  function hooksWith(
    event: 'BeforeToolUse' | 'AfterToolUse',
    handler: Parameters<HookRegistry['tap']>[1]['handler'],
  ) {
    const hooks = new HookRegistry();
    hooks.tap(event, { pluginId: 'guard', pluginConfig: undefined, handler });
    return hooks;
  }

  it('does not run a tool a BeforeToolUse hook aborted', async () => {
    const { received, dispatcher } = recordingTool();
    const hooks = hooksWith('BeforeToolUse', () => ({ type: 'abort', reason: 'not allowed' }));
    const { outcomes, events } = await runBatch(dispatcher, [call('read', { path: 'a' })], { hooks });
    expect(received).toEqual([]);
    expect(outcomes[0]!.output).toEqual({ content: 'Tool aborted by hook: not allowed', isError: true });
    expect(events.map((event) => event.type)).toEqual(['tool_call_start', 'tool_call_end']);
  });

  it('gives the tool the arguments a continue_with produced, after checking them again', async () => {
    const { received, dispatcher } = recordingTool();
    const hooks = hooksWith('BeforeToolUse', (payload) => {
      const data = payload.data as { arguments: { path: string } };
      return {
        type: 'continue_with',
        data: { ...data, arguments: { path: `/safe/${data.arguments.path}` } },
      };
    });
    const { outcomes, events } = await runBatch(dispatcher, [call('read', { path: 'a' })], { hooks });
    expect(received).toEqual([{ path: '/safe/a' }]);
    expect(outcomes[0]!.arguments).toEqual({ path: '/safe/a' });
    expect(events[0]).toMatchObject({ type: 'tool_call_start', arguments: { path: '/safe/a' } });
  });

  it('does not run a tool whose hook-changed arguments fail the schema', async () => {
    const { received, dispatcher } = recordingTool();
    const hooks = hooksWith('BeforeToolUse', () => ({
      type: 'continue_with',
      data: { callId: 'x', toolName: 'read', arguments: { path: 42 } },
    }));
    const { outcomes } = await runBatch(dispatcher, [call('read', { path: 'a' })], { hooks });
    expect(received).toEqual([]);
    expect(outcomes[0]!.output.isError).toBe(true);
    expect(outcomes[0]!.output.content).toContain('arguments/path must be string');
  });

  it('reports a failing hook handler and still runs the tool', async () => {
    const { received, dispatcher } = recordingTool();
    const hooks = hooksWith('BeforeToolUse', () => {
      throw new Error('plugin broke');
    });
    const { outcomes, errors } = await runBatch(dispatcher, [call('read', { path: 'a' })], { hooks });
    expect(received).toEqual([{ path: 'a' }]);
    expect(outcomes[0]!.output.isError).toBe(false);
    expect(errors.map((error) => error.code)).toEqual(['PLUGIN_ERROR']);
    expect(errors[0]!.message).toContain('plugin broke');
  });

  it('runs AfterToolUse with the call, its output and its duration', async () => {
    const { dispatcher } = recordingTool();
    const seen: unknown[] = [];
    const hooks = hooksWith('AfterToolUse', (payload) => {
      seen.push(payload.data);
    });
    await runBatch(dispatcher, [call('read', { path: 'a' }, 'c9')], { hooks });
    expect(seen).toEqual([
      {
        callId: 'c9',
        toolName: 'read',
        arguments: { path: 'a' },
        output: { content: 'read', isError: false },
        durationMs: expect.any(Number),
      },
    ]);
  });

  it('does not dispatch a hook event nobody tapped', async () => {
    const { dispatcher } = recordingTool();
    const hooks = new HookRegistry();
    const dispatched: string[] = [];
    // `run` is where every dispatch goes, the hook runners' and `dispatch`'s.
    const original = hooks.run.bind(hooks);
    hooks.run = (site, data) => {
      dispatched.push(site.event);
      return original(site, data);
    };
    await runBatch(dispatcher, [call('read', { path: 'a' })], { hooks });
    expect(dispatched).toEqual([]);
    hooks.tap('AfterToolUse', { pluginId: 'p', pluginConfig: undefined, handler: () => undefined });
    await runBatch(dispatcher, [call('read', { path: 'a' })], { hooks });
    expect(dispatched).toEqual(['AfterToolUse']);
  });
});

describe('ToolDispatcher.executeBatch: failures of the tool', () => {
  function runOne(execute: (input: ToolInput) => Promise<ToolOutput>, timeoutMs = 5000) {
    const dispatcher = new ToolDispatcher({ tools: [tool({ name: 't', execute })], timeoutMs });
    return runBatch(dispatcher, [call('t')]);
  }

  it('turns a thrown error into an isError result with its message', async () => {
    const { outcomes, events } = await runOne(async () => {
      throw new Error('no such file');
    });
    expect(outcomes[0]!.output).toEqual({ content: 'no such file', isError: true });
    expect(events[1]).toMatchObject({ type: 'tool_call_end', success: false });
  });

  it('turns a synchronous throw into an isError result', async () => {
    const { outcomes } = await runOne((() => {
      throw new Error('sync boom');
    }) as unknown as () => Promise<ToolOutput>);
    expect(outcomes[0]!.output).toEqual({ content: 'sync boom', isError: true });
  });

  it.each([
    ['undefined', undefined],
    ['a string', 'done'],
    ['a wrong shape', { content: 1, isError: false }],
  ])('turns a return value of %s into an isError result', async (_label, value) => {
    const { outcomes } = await runOne(async () => value as unknown as ToolOutput);
    expect(outcomes[0]!.output.isError).toBe(true);
    expect(outcomes[0]!.output.content).toContain('invalid result');
  });

  it('times out a tool, fires its signal with TOOL_TIMEOUT, and leaves no listener', async () => {
    let toolSignal: AbortSignal | undefined;
    const turn = new AbortController();
    const dispatcher = new ToolDispatcher({
      tools: [
        tool({
          name: 't',
          execute: (input) => {
            toolSignal = input.signal;
            // Answers only after its signal fired: too late, the timeout result stands.
            return new Promise((resolve) => {
              input.signal.addEventListener('abort', () => resolve({ content: 'late', isError: false }));
            });
          },
        }),
      ],
      timeoutMs: 50,
    });
    const { outcomes, events } = await runBatch(dispatcher, [call('t')], { signal: turn.signal });
    expect(outcomes[0]!.output).toEqual({ content: 'Tool timed out after 50ms', isError: true });
    expect(events[1]).toMatchObject({ type: 'tool_call_end', success: false });
    expect(toolSignal?.aborted).toBe(true);
    const reason: unknown = toolSignal?.reason;
    expect(isAgentError(reason) && reason.code === 'TOOL_TIMEOUT').toBe(true);
    expect(getEventListeners(turn.signal, 'abort')).toHaveLength(0);
  });

  it('truncates a large output before tool_call_end, so events and results agree', async () => {
    const big = `${'a'.repeat(TOOL_OUTPUT_LIMIT_BYTES - 1)}€rest`;
    const { outcomes, events } = await runOne(async () => ({ content: big, isError: false }));
    const expected = 'a'.repeat(TOOL_OUTPUT_LIMIT_BYTES - 1) + NOTICE;
    expect(outcomes[0]!.output.content).toBe(expected);
    const end = events[1];
    expect(end?.type === 'tool_call_end' && end.output.content).toBe(expected);
  });
});
