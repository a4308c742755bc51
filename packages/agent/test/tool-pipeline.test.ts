import { describe, expect, it } from 'vitest';
import { HookRegistry } from '../src/hooks/hook.js';
import type { ToolHandler, ToolInput, ToolOutput } from '../src/ports/tool.js';
import { ToolDispatcher } from '../src/tools/tool-dispatch.js';
import { call, deferred, runBatch, tool } from './support/tool-dispatch-fixtures.js';

describe('ToolInput.signal', () => {
  it('is an own enumerable property: a spread copy of the input carries the same signal', async () => {
    let seen: ToolInput | undefined;
    const dispatcher = new ToolDispatcher({
      tools: [
        tool({
          name: 't',
          execute: async (input) => {
            seen = input;
            return { content: 'ok', isError: false };
          },
        }),
      ],
      timeoutMs: 5000,
    });
    await runBatch(dispatcher, [call('t')]);
    expect(Object.keys(seen!)).toEqual(['callId', 'arguments', 'sessionId', 'turnId', 'signal', 'onOutput']);
    const copy = { ...seen! };
    expect(copy.signal).toBeInstanceOf(AbortSignal);
    expect(copy.signal).toBe(seen!.signal);
    expect(copy.onOutput).toBeTypeOf('function');
    expect(copy.onOutput).toBe(seen!.onOutput);
    expect(Object.getOwnPropertyDescriptor(seen!, 'signal')?.enumerable).toBe(true);
  });

  it('first read after a turn cancel that came while the tool ran: aborted, with the turn’s reason', async () => {
    const turn = new AbortController();
    const running = deferred<ToolInput>();
    const release = deferred();
    const dispatcher = new ToolDispatcher({
      tools: [
        tool({
          name: 't',
          execute: async (input) => {
            running.resolve(input);
            await release.promise;
            return { content: 'ok', isError: false };
          },
        }),
      ],
      timeoutMs: 5000,
    });
    const batch = runBatch(dispatcher, [call('t')], { signal: turn.signal });
    const input = await running.promise;
    turn.abort('stop');
    release.resolve();
    await batch;
    expect(input.signal.aborted).toBe(true);
    expect(input.signal.reason).toBe('stop');
  });

  it('first read after a turn cancel that came once the call had ended: not aborted', async () => {
    const turn = new AbortController();
    let input: ToolInput | undefined;
    const dispatcher = new ToolDispatcher({
      tools: [
        tool({
          name: 't',
          execute: async (given) => {
            input = given;
            return { content: 'ok', isError: false };
          },
        }),
      ],
      timeoutMs: 5000,
    });
    await runBatch(dispatcher, [call('t')], { signal: turn.signal });
    turn.abort('too late');
    expect(input!.signal.aborted).toBe(false);
  });

  it('first read after a time-out and a later turn cancel: aborted by the time-out', async () => {
    const turn = new AbortController();
    let input: ToolInput | undefined;
    const dispatcher = new ToolDispatcher({
      tools: [
        tool({
          name: 't',
          execute: (given) => {
            input = given;
            return new Promise(() => {});
          },
        }),
      ],
      timeoutMs: 20,
    });
    await runBatch(dispatcher, [call('t')], { signal: turn.signal });
    turn.abort('later');
    expect(input!.signal.aborted).toBe(true);
    expect((input!.signal.reason as { code?: string }).code).toBe('TOOL_TIMEOUT');
  });

  it('gives each call of a concurrent batch its own signal: one call timing out does not abort another', async () => {
    const signals = new Map<string, AbortSignal>();
    const dispatcher = new ToolDispatcher({
      tools: [
        tool({
          name: 'stuck',
          execute: (input) => {
            signals.set('stuck', input.signal);
            return new Promise(() => {});
          },
        }),
        tool({
          name: 'quick',
          execute: async (input) => {
            signals.set('quick', input.signal);
            return { content: 'quick', isError: false };
          },
        }),
      ],
      timeoutMs: 30,
    });
    const { outcomes } = await runBatch(dispatcher, [call('stuck'), call('quick')]);
    expect(outcomes.map((outcome) => outcome.output.content)).toEqual(['Tool timed out after 30ms', 'quick']);
    expect(signals.get('stuck')?.aborted).toBe(true);
    expect(signals.get('quick')?.aborted).toBe(false);
  });
});

describe('ToolDispatcher: the order of hooks, tools, events and results', () => {
  async function order(options: { mutating: boolean; asyncHook: boolean }) {
    const log: string[] = [];
    const hooks = new HookRegistry();
    hooks.tap('BeforeToolUse', {
      pluginId: 'p',
      pluginConfig: undefined,
      handler: (payload) => {
        log.push(`before:${(payload.data as { callId: string }).callId}`);
        return options.asyncHook ? Promise.resolve(undefined) : undefined;
      },
    });
    hooks.tap('AfterToolUse', {
      pluginId: 'p',
      pluginConfig: undefined,
      handler: (payload) => {
        log.push(`after:${(payload.data as { callId: string }).callId}`);
      },
    });
    const handler = tool({
      name: 't',
      isMutating: options.mutating,
      execute: async ({ callId }) => {
        log.push(`exec:${callId}`);
        return { content: 'ok', isError: false };
      },
    });
    const dispatcher = new ToolDispatcher({ tools: [handler], timeoutMs: 5000 });
    await runBatch(dispatcher, [call('t', {}, 'c0'), call('t', {}, 'c1')], {
      hooks,
      emit: (payload) => {
        if (payload.type === 'tool_call_start') log.push(`start:${payload.callId}`);
        if (payload.type === 'tool_call_end') log.push(`end:${payload.callId}`);
      },
      onResult: (outcome) => {
        log.push(`result:${outcome.callId}`);
      },
    });
    return log.join(' ');
  }

  it('runs every BeforeToolUse, then starts every tool, then ends them, in a concurrent batch', async () => {
    const expected =
      'before:c0 before:c1 start:c0 exec:c0 start:c1 exec:c1 end:c0 after:c0 end:c1 after:c1 result:c0 result:c1';
    expect(await order({ mutating: false, asyncHook: false })).toBe(expected);
    expect(await order({ mutating: false, asyncHook: true })).toBe(expected);
  });

  it('runs each call to its result before the next one starts in a serial batch', async () => {
    const expected =
      'before:c0 start:c0 exec:c0 end:c0 after:c0 result:c0 before:c1 start:c1 exec:c1 end:c1 after:c1 result:c1';
    expect(await order({ mutating: true, asyncHook: false })).toBe(expected);
    expect(await order({ mutating: true, asyncHook: true })).toBe(expected);
  });
});

describe('ToolHandler.execute', () => {
  it('is awaited the same way when a tool breaks its type and answers a plain value', async () => {
    const plain = {
      name: 'plain',
      description: 'answers without a promise',
      parametersSchema: { type: 'object' },
      isMutating: false,
      execute: (() => ({ content: 'plain', isError: false })) as unknown as () => Promise<ToolOutput>,
    } satisfies ToolHandler;
    const dispatcher = new ToolDispatcher({ tools: [plain], timeoutMs: 5000 });
    const { outcomes, events } = await runBatch(dispatcher, [call('plain')]);
    expect(outcomes[0]!.output).toEqual({ content: 'plain', isError: false });
    expect(events.map((event) => event.type)).toEqual(['tool_call_start', 'tool_call_end']);
  });
});
