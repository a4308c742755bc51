import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { ToolDispatcher } from '../src/tools/tool-dispatch.js';

import { call, contents, deferred, runBatch, tool } from './support/tool-dispatch-fixtures.js';

describe('ToolDispatcher.executeBatch: cancellation', () => {
  it('gives a serial call not started because of cancellation a cancelled result', async () => {
    const turn = new AbortController();
    let secondRan = false;
    const first = tool({
      name: 'first',
      isMutating: true,
      execute: async () => {
        turn.abort();
        return { content: 'first', isError: false };
      },
    });
    const second = tool({
      name: 'second',
      isMutating: true,
      execute: async () => {
        secondRan = true;
        return { content: 'second', isError: false };
      },
    });
    const dispatcher = new ToolDispatcher({ tools: [first, second], timeoutMs: 5000 });
    const { outcomes, events, results } = await runBatch(dispatcher, [call('first'), call('second')], {
      signal: turn.signal,
    });
    expect(secondRan).toBe(false);
    expect(contents(outcomes)).toEqual(['first', 'Tool call cancelled before it ran']);
    expect(outcomes[1]!.output.isError).toBe(true);
    expect(results).toHaveLength(2);
    expect(events.slice(2)).toMatchObject([
      { type: 'tool_call_start', toolName: 'second' },
      { type: 'tool_call_end', toolName: 'second', success: false },
    ]);
  });

  it('does not start any call of a batch whose turn is already cancelled', async () => {
    const turn = new AbortController();
    turn.abort();
    let ran = false;
    const readOnly = tool({
      name: 'r',
      execute: async () => {
        ran = true;
        return { content: '', isError: false };
      },
    });
    const dispatcher = new ToolDispatcher({ tools: [readOnly], timeoutMs: 5000 });
    const { outcomes } = await runBatch(dispatcher, [call('r', {}, '1'), call('r', {}, '2')], {
      signal: turn.signal,
    });
    expect(ran).toBe(false);
    expect(contents(outcomes)).toEqual([
      'Tool call cancelled before it ran',
      'Tool call cancelled before it ran',
    ]);
  });

  it('fires the signal of a running tool on cancel and waits for its answer', async () => {
    const turn = new AbortController();
    const started = deferred();
    const dispatcher = new ToolDispatcher({
      tools: [
        tool({
          name: 't',
          execute: (input) => {
            started.resolve();
            return new Promise((resolve) => {
              input.signal.addEventListener('abort', () => {
                setImmediate(() =>
                  resolve({ content: `stopped: ${String(input.signal.reason)}`, isError: true }),
                );
              });
            });
          },
        }),
      ],
      timeoutMs: 5000,
    });
    const batch = runBatch(dispatcher, [call('t')], { signal: turn.signal });
    await started.promise;
    expect(getEventListeners(turn.signal, 'abort')).toHaveLength(1);
    turn.abort('user cancelled');
    const { outcomes } = await batch;
    expect(outcomes[0]!.output).toEqual({ content: 'stopped: user cancelled', isError: true });
    expect(getEventListeners(turn.signal, 'abort')).toHaveLength(0);
  });

  it('waits for a cancelled tool that ignores its signal no longer than the timeout', async () => {
    const turn = new AbortController();
    const started = deferred();
    const dispatcher = new ToolDispatcher({
      tools: [
        tool({
          name: 't',
          execute: () => {
            started.resolve();
            return new Promise(() => {});
          },
        }),
      ],
      timeoutMs: 50,
    });
    const batch = runBatch(dispatcher, [call('t')], { signal: turn.signal });
    await started.promise;
    turn.abort();
    const { outcomes } = await batch;
    expect(outcomes[0]!.output).toEqual({ content: 'Tool timed out after 50ms', isError: true });
  });

  it('leaves no abort listener on the turn signal after a concurrent batch of many calls', async () => {
    const turn = new AbortController();
    const dispatcher = new ToolDispatcher({ tools: [tool({ name: 'r' })], timeoutMs: 5000 });
    const calls = Array.from({ length: 20 }, (_, index) => call('r', {}, `c${index}`));
    let listenersDuringRun = -1;
    await runBatch(dispatcher, calls, {
      signal: turn.signal,
      onResult: () => {
        listenersDuringRun = Math.max(listenersDuringRun, getEventListeners(turn.signal, 'abort').length);
      },
    });
    expect(listenersDuringRun).toBe(1);
    expect(getEventListeners(turn.signal, 'abort')).toHaveLength(0);
  });
});
