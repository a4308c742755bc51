import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { AgentEventPayload } from '../src/kernel/event.js';
import { parseToolArguments, type ToolCallRequest, ToolDispatcher } from '../src/tools/tool-dispatch.js';

import {
  call,
  contents,
  deferred,
  inFlightTools,
  PATH_SCHEMA,
  runBatch,
  tool,
} from './support/tool-dispatch-fixtures.js';

describe('ToolDispatcher.executeBatch: scheduling', () => {
  it('runs an all-read-only batch concurrently', async () => {
    const bothStarted = deferred();
    let started = 0;
    const { stats, tools } = inFlightTools({
      names: ['a', 'b', 'c'],
      gate: async () => {
        started++;
        if (started === 3) bothStarted.resolve();
        // Deadlocks (and the test times out) unless all three run at once.
        await bothStarted.promise;
      },
    });
    const dispatcher = new ToolDispatcher({ tools, timeoutMs: 5000 });
    const { outcomes } = await runBatch(dispatcher, [call('a'), call('b'), call('c')]);
    expect(stats.max).toBe(3);
    expect(contents(outcomes)).toEqual(['a', 'b', 'c']);
  });

  it('runs a batch with a mutating tool serially in call order', async () => {
    const { stats, tools } = inFlightTools({
      names: ['a', 'write', 'c'],
      mutating: ['write'],
      gate: () => new Promise((resolve) => setImmediate(resolve)),
    });
    const dispatcher = new ToolDispatcher({ tools, timeoutMs: 5000 });
    const { outcomes } = await runBatch(dispatcher, [call('c'), call('write'), call('a')]);
    expect(stats.max).toBe(1);
    expect(stats.order).toEqual(['c', 'write', 'a']);
    expect(contents(outcomes)).toEqual(['c', 'write', 'a']);
  });

  it('does not make a batch serial for a mutating call that will not run', async () => {
    const { stats, tools } = inFlightTools({
      names: ['a', 'b'],
      gate: () => new Promise((resolve) => setImmediate(resolve)),
    });
    const write = tool({ name: 'write', isMutating: true, schema: PATH_SCHEMA });
    const dispatcher = new ToolDispatcher({ tools: [...tools, write], timeoutMs: 5000 });
    const { outcomes } = await runBatch(dispatcher, [call('a'), call('write', { path: 3 }), call('b')]);
    expect(stats.max).toBe(2);
    expect(outcomes[1]!.output.isError).toBe(true);
  });

  it('returns outcomes in call order when a later call finishes first', async () => {
    const releaseFirst = deferred();
    const slow = tool({
      name: 'slow',
      execute: async () => {
        await releaseFirst.promise;
        return { content: 'slow', isError: false };
      },
    });
    const fast = tool({
      name: 'fast',
      execute: async () => {
        setImmediate(() => releaseFirst.resolve());
        return { content: 'fast', isError: false };
      },
    });
    const dispatcher = new ToolDispatcher({ tools: [slow, fast], timeoutMs: 5000 });
    const { outcomes, results, events } = await runBatch(dispatcher, [call('slow'), call('fast')]);
    const ends = events.filter((event) => event.type === 'tool_call_end').map((event) => event.toolName);
    expect(ends).toEqual(['fast', 'slow']);
    expect(contents(outcomes)).toEqual(['slow', 'fast']);
    expect(contents(results)).toEqual(['slow', 'fast']);
  });

  it('calls onResult in call order, each only after the previous returned and as soon as it is ready', async () => {
    const gates = [deferred(), deferred(), deferred()];
    const tools = ['a', 'b', 'c'].map((name, index) =>
      tool({
        name,
        execute: async () => {
          await gates[index]!.promise;
          return { content: name, isError: false };
        },
      }),
    );
    const dispatcher = new ToolDispatcher({ tools, timeoutMs: 5000 });
    const log: string[] = [];
    const firstSaved = deferred();
    const saveA = deferred();
    const batch = runBatch(dispatcher, [call('a'), call('b'), call('c')], {
      onResult: async (outcome) => {
        log.push(`start ${outcome.output.content}`);
        if (outcome.output.content === 'a') {
          firstSaved.resolve();
          await saveA.promise;
        }
        log.push(`end ${outcome.output.content}`);
      },
    });
    gates[2]!.resolve(); // c finishes first: it must wait for a and b
    gates[0]!.resolve();
    await firstSaved.promise; // a is delivered while b is still running
    expect(log).toEqual(['start a']);
    gates[1]!.resolve();
    saveA.resolve();
    await batch;
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it('rejects with the onResult error after running calls settled, and skips calls not yet started', async () => {
    let secondRan = false;
    const write = tool({ name: 'write', isMutating: true });
    const other = tool({
      name: 'other',
      isMutating: true,
      execute: async () => {
        secondRan = true;
        return { content: '', isError: false };
      },
    });
    const dispatcher = new ToolDispatcher({ tools: [write, other], timeoutMs: 5000 });
    const failure = new Error('disk full');
    const signal = new AbortController().signal;
    await expect(
      runBatch(dispatcher, [call('write'), call('other')], {
        signal,
        onResult: () => {
          throw failure;
        },
      }),
    ).rejects.toBe(failure);
    expect(secondRan).toBe(false);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('in a concurrent batch, rejects with the first onResult rejection once every call settled, and hands over nothing after it', async () => {
    const settled: string[] = [];
    const tools = ['a', 'b', 'c'].map((name) =>
      tool({
        name,
        execute: async () => {
          await new Promise((resolve) => setTimeout(resolve, 1));
          settled.push(name);
          return { content: name, isError: false };
        },
      }),
    );
    const dispatcher = new ToolDispatcher({ tools, timeoutMs: 5000 });
    const failure = new Error('disk full');
    const delivered: string[] = [];
    await expect(
      runBatch(dispatcher, [call('a'), call('b'), call('c')], {
        onResult: async (outcome) => {
          delivered.push(outcome.output.content);
          if (outcome.output.content === 'b') throw failure;
        },
      }),
    ).rejects.toBe(failure);
    expect(delivered).toEqual(['a', 'b']);
    expect(settled.sort()).toEqual(['a', 'b', 'c']);
  });

  it('does not run calls at or past `runnable`, giving them a tool-call-limit result', async () => {
    let runs = 0;
    const counted = tool({
      name: 'counted',
      execute: async () => {
        runs++;
        return { content: 'ok', isError: false };
      },
    });
    const dispatcher = new ToolDispatcher({ tools: [counted], timeoutMs: 5000 });
    const calls = [call('counted', {}, '1'), call('counted', {}, '2'), call('counted', {}, '3')];
    const { outcomes, events } = await runBatch(dispatcher, calls, { runnable: 1 });
    expect(runs).toBe(1);
    expect(outcomes[0]!.output.isError).toBe(false);
    for (const outcome of outcomes.slice(1)) {
      expect(outcome.output.isError).toBe(true);
      expect(outcome.output.content).toMatch(/tool-call limit/);
    }
    expect(events.filter((event) => event.type === 'tool_call_end')).toHaveLength(3);
  });
});

describe('ToolDispatcher.executeBatch: calls that do not run', () => {
  const dispatcher = new ToolDispatcher({
    tools: [tool({ name: 'read', schema: PATH_SCHEMA })],
    timeoutMs: 5000,
  });

  function startAndEnd(events: AgentEventPayload[]) {
    expect(events.map((event) => event.type)).toEqual(['tool_call_start', 'tool_call_end']);
    const end = events[1];
    expect(end?.type === 'tool_call_end' && end.success).toBe(false);
    return events[0] as Extract<AgentEventPayload, { type: 'tool_call_start' }>;
  }

  it('answers an unknown tool with [TOOL_NOT_FOUND]', async () => {
    const { outcomes, events } = await runBatch(dispatcher, [call('nope', { a: 1 })]);
    expect(outcomes[0]!.output).toEqual({ content: "[TOOL_NOT_FOUND] tool 'nope'", isError: true });
    expect(startAndEnd(events).arguments).toEqual({ a: 1 });
  });

  it('answers unparsable arguments quoting the parser message, showing the raw text', async () => {
    const parsed = parseToolArguments('{"path": ');
    if (parsed.ok) throw new Error('expected a parse failure');
    const request: ToolCallRequest = {
      callId: 'c1',
      toolName: 'read',
      arguments: '{"path": ',
      parseError: parsed.error,
    };
    const { outcomes, events } = await runBatch(dispatcher, [request]);
    expect(outcomes[0]!.output.isError).toBe(true);
    expect(outcomes[0]!.output.content).toContain('not valid JSON');
    expect(outcomes[0]!.output.content).toContain(parsed.error);
    expect(startAndEnd(events).arguments).toBe('{"path": ');
  });

  it('runs a tool whose arguments were an empty string as {}', async () => {
    let received: unknown;
    const noArgs = tool({
      name: 'now',
      schema: { type: 'object', properties: {}, additionalProperties: false },
      execute: async (input) => {
        received = input.arguments;
        return { content: 'ok', isError: false };
      },
    });
    const parsed = parseToolArguments('');
    if (!parsed.ok) throw new Error('expected {}');
    const only = new ToolDispatcher({ tools: [noArgs], timeoutMs: 5000 });
    const { outcomes } = await runBatch(only, [call('now', parsed.value)]);
    expect(received).toEqual({});
    expect(outcomes[0]!.output).toEqual({ content: 'ok', isError: false });
  });

  it('answers schema-invalid arguments naming what failed', async () => {
    const { outcomes, events } = await runBatch(dispatcher, [call('read', { path: 7, extra: true })]);
    const { content, isError } = outcomes[0]!.output;
    expect(isError).toBe(true);
    expect(content).toContain('arguments/path must be string');
    expect(content).toContain("must NOT have additional properties ('extra')");
    startAndEnd(events);
  });
});
