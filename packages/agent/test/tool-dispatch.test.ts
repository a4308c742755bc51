import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { type AgentError, isAgentError } from '../src/error.js';
import type { AgentEventPayload } from '../src/event.js';
import { HookRegistry } from '../src/hook.js';
import type { ToolHandler, ToolInput, ToolOutput } from '../src/ports/tool.js';
import {
  parseToolArguments,
  TOOL_OUTPUT_LIMIT_BYTES,
  type ToolCallOutcome,
  type ToolCallRequest,
  ToolDispatcher,
  truncateToolOutput,
} from '../src/tool-dispatch.js';
import type { JsonSchema } from '../src/types.js';

const NOTICE = '\n\n[output truncated at 1MB]';
const PATH_SCHEMA: JsonSchema = {
  type: 'object',
  properties: { path: { type: 'string' } },
  required: ['path'],
  additionalProperties: false,
};

interface Deferred<T> {
  promise: Promise<T>;
  resolve: (value: T) => void;
}

function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

function tool(options: {
  name: string;
  isMutating?: boolean;
  schema?: JsonSchema;
  execute?: (input: ToolInput) => Promise<ToolOutput>;
}): ToolHandler {
  return {
    name: options.name,
    description: `the ${options.name} tool`,
    parametersSchema: options.schema ?? { type: 'object' },
    isMutating: options.isMutating ?? false,
    execute: options.execute ?? (async () => ({ content: `${options.name} ran`, isError: false })),
  };
}

function call(toolName: string, args: unknown = {}, callId = `call-${toolName}`): ToolCallRequest {
  return { callId, toolName, arguments: args };
}

/** Runs a batch with recording sinks; any option can be replaced. */
async function runBatch(
  dispatcher: ToolDispatcher,
  calls: readonly ToolCallRequest[],
  overrides: Partial<Parameters<ToolDispatcher['executeBatch']>[0]> = {},
) {
  const events: AgentEventPayload[] = [];
  const errors: AgentError[] = [];
  const results: ToolCallOutcome[] = [];
  const outcomes = await dispatcher.executeBatch({
    calls,
    sessionId: 'session-1',
    turnId: 'turn-1',
    signal: new AbortController().signal,
    hooks: new HookRegistry(),
    runnable: calls.length,
    emit: (payload) => events.push(payload),
    reportError: (error) => errors.push(error),
    onResult: (outcome) => {
      results.push(outcome);
    },
    ...overrides,
  });
  return { outcomes, events, errors, results };
}

function contents(outcomes: readonly ToolCallOutcome[]): string[] {
  return outcomes.map((outcome) => outcome.output.content);
}

/** A read-only tool that records how many calls run at once and waits for `gate` before it answers. */
function inFlightTools(options: { names: string[]; mutating?: string[]; gate: () => Promise<void> }) {
  const stats = { inFlight: 0, max: 0, order: [] as string[] };
  const tools = options.names.map((name) =>
    tool({
      name,
      isMutating: options.mutating?.includes(name) ?? false,
      execute: async () => {
        stats.inFlight++;
        stats.max = Math.max(stats.max, stats.inFlight);
        stats.order.push(name);
        await options.gate();
        stats.inFlight--;
        return { content: name, isError: false };
      },
    }),
  );
  return { stats, tools };
}

describe('parseToolArguments', () => {
  it('parses JSON text', () => {
    expect(parseToolArguments('{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
  });

  it('treats an empty or white-space string as {}', () => {
    expect(parseToolArguments('')).toEqual({ ok: true, value: {} });
    expect(parseToolArguments('  \n')).toEqual({ ok: true, value: {} });
  });

  it('returns the parser message for text that is not JSON', () => {
    const result = parseToolArguments('{"a":');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/JSON/);
  });
});

describe('truncateToolOutput', () => {
  it('returns short and exactly-at-limit content unchanged', () => {
    expect(truncateToolOutput('hello')).toBe('hello');
    const exact = 'a'.repeat(TOOL_OUTPUT_LIMIT_BYTES);
    expect(truncateToolOutput(exact)).toBe(exact);
  });

  it('cuts ASCII content at exactly the limit and appends the notice', () => {
    const result = truncateToolOutput('a'.repeat(TOOL_OUTPUT_LIMIT_BYTES + 10));
    expect(result).toBe('a'.repeat(TOOL_OUTPUT_LIMIT_BYTES) + NOTICE);
  });

  it('never splits a 3-byte character that straddles the limit', () => {
    // 'a' x (limit - 1) then '€' (3 bytes): the euro would end 2 bytes past the limit.
    const prefix = 'a'.repeat(TOOL_OUTPUT_LIMIT_BYTES - 1);
    const result = truncateToolOutput(`${prefix}€tail`);
    expect(result).toBe(prefix + NOTICE);
    const kept = result.slice(0, -NOTICE.length);
    expect(Buffer.byteLength(kept, 'utf8')).toBeLessThanOrEqual(TOOL_OUTPUT_LIMIT_BYTES);
  });

  it('never splits a surrogate pair (4-byte emoji) that straddles the limit', () => {
    const prefix = 'a'.repeat(TOOL_OUTPUT_LIMIT_BYTES - 2);
    const result = truncateToolOutput(`${prefix}😀€`);
    expect(result).toBe(prefix + NOTICE);
    expect(result).not.toContain('\uFFFD');
  });

  it('keeps a multi-byte character that ends exactly on the limit', () => {
    const prefix = 'a'.repeat(TOOL_OUTPUT_LIMIT_BYTES - 4);
    const result = truncateToolOutput(`${prefix}😀x`);
    expect(result).toBe(`${prefix}😀${NOTICE}`);
  });
});

describe('ToolDispatcher construction', () => {
  it('lists specs in registration order and answers has / isMutating', () => {
    const dispatcher = new ToolDispatcher({
      tools: [tool({ name: 'read', schema: PATH_SCHEMA }), tool({ name: 'write', isMutating: true })],
      timeoutMs: 1000,
    });
    expect(dispatcher.specs).toEqual([
      { name: 'read', description: 'the read tool', parameters: PATH_SCHEMA },
      { name: 'write', description: 'the write tool', parameters: { type: 'object' } },
    ]);
    expect(dispatcher.has('read')).toBe(true);
    expect(dispatcher.has('nope')).toBe(false);
    expect(dispatcher.isMutating('write')).toBe(true);
    expect(dispatcher.isMutating('read')).toBe(false);
    expect(dispatcher.isMutating('nope')).toBe(false);
  });

  it.each([
    ['an array', [] as unknown as JsonSchema],
    ['a schema without type object', { type: 'string' }],
    ['a schema with no type', { properties: {} }],
    ['a schema that does not compile', { type: 'object', properties: { a: { type: 'strin' } } }],
  ])('rejects %s with INVALID_CONFIG', (_label, schema) => {
    let thrown: unknown;
    try {
      new ToolDispatcher({ tools: [tool({ name: 'bad', schema })], timeoutMs: 1000 });
    } catch (error) {
      thrown = error;
    }
    expect(isAgentError(thrown) && thrown.code === 'INVALID_CONFIG').toBe(true);
    expect((thrown as Error).message).toContain("'bad'");
  });

  it('rejects the same invalid schema object every time, not only the first', () => {
    const schema: JsonSchema = { type: 'object', properties: { a: { type: 'strin' } } };
    for (let attempt = 0; attempt < 2; attempt++) {
      expect(() => new ToolDispatcher({ tools: [tool({ name: 'bad', schema })], timeoutMs: 1000 })).toThrow(
        /INVALID_CONFIG/,
      );
    }
  });

  it('compiles a recursive schema ($ref to the root)', async () => {
    const tree: JsonSchema = {
      type: 'object',
      properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } },
    };
    const dispatcher = new ToolDispatcher({ tools: [tool({ name: 'tree', schema: tree })], timeoutMs: 1000 });
    const { outcomes } = await runBatch(dispatcher, [
      call('tree', { children: [{ name: 'ok', children: [] }] }, '1'),
      call('tree', { children: [{ name: 1 }] }, '2'),
    ]);
    expect(outcomes[0]!.output.isError).toBe(false);
    expect(outcomes[1]!.output.content).toContain('arguments/children/0/name must be string');
  });

  it('accepts draft 2020-12 schemas, unknown formats and an $id shared by two tools', async () => {
    const schema2020: JsonSchema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: 'https://example.com/args',
      type: 'object',
      properties: { url: { type: 'string', format: 'uri' } },
      required: ['url'],
    };
    const dispatcher = new ToolDispatcher({
      tools: [tool({ name: 'a', schema: schema2020 }), tool({ name: 'b', schema: { ...schema2020 } })],
      timeoutMs: 1000,
    });
    const { outcomes } = await runBatch(dispatcher, [call('a', { url: 'x' }), call('b', {})]);
    expect(outcomes[0]!.output).toEqual({ content: 'a ran', isError: false });
    expect(outcomes[1]!.output.isError).toBe(true);
  });
});

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
    const original = hooks.dispatch.bind(hooks);
    hooks.dispatch = (options) => {
      dispatched.push(options.event);
      return original(options);
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
