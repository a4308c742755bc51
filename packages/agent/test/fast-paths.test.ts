import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isAgentError } from '../src/error.js';
import { HookRegistry } from '../src/hook.js';
import type { SessionEvent } from '../src/ports/storage.js';
import type { ToolInput } from '../src/ports/tool.js';
import { SessionLog } from '../src/session-log.js';
import { adoptEvent, copyOf } from '../src/storage/copy.js';
import { InMemorySessionStorage } from '../src/storage/in-memory.js';
import { ToolDispatcher } from '../src/tool-dispatch.js';
import { call, deferred, runBatch, tool } from './support/tool-dispatch-fixtures.js';

// The runtime's hot paths answer synchronously where they can; these tests pin that doing so changed
// nothing a host, a plugin or a tool can see.

describe('copyOf (the in-memory storages’ copy)', () => {
  const value = fc.letrec((tie) => ({
    node: fc.oneof(
      { depthSize: 'small' },
      fc.jsonValue(),
      fc.date({ noInvalidDate: true }),
      fc.array(tie('node'), { maxLength: 4 }),
      fc.dictionary(fc.string({ maxLength: 6 }), tie('node'), { maxKeys: 4 }),
    ),
  })).node;

  it('gives what structuredClone gives, never the same object', () => {
    fc.assert(
      fc.property(value, (input) => {
        const copy = copyOf(input, 'the value');
        expect(copy).toStrictEqual(structuredClone(input));
        if (typeof input === 'object' && input !== null) expect(copy).not.toBe(input);
      }),
    );
  });

  it('keeps shared objects shared and cycles whole, as structuredClone does', () => {
    const shared = { n: 1 };
    const copy = copyOf({ a: shared, b: shared }, 'the value');
    expect(copy.a).toBe(copy.b);
    const cyclic: { self?: unknown } = {};
    cyclic.self = cyclic;
    const cycleCopy = copyOf(cyclic, 'the value');
    expect(cycleCopy.self).toBe(cycleCopy);
  });

  it('copies a Map, a class instance and an own __proto__ key the way structuredClone does', () => {
    const input = { map: new Map([[1, 'a']]), ...JSON.parse('{"__proto__": {"x": 1}}') };
    expect(copyOf(input, 'the value')).toStrictEqual(structuredClone(input));
    expect(Object.keys(copyOf(input, 'the value'))).toEqual(['map', '__proto__']);
  });

  it('refuses a function as INVALID_INPUT, through structuredClone', () => {
    try {
      copyOf({ run: () => 1 }, 'the value');
      expect.unreachable();
    } catch (error) {
      expect(isAgentError(error) && error.code).toBe('INVALID_INPUT');
    }
  });

  it('gives what structuredClone gives for the payload the session log hands over (adoptEvent)', () => {
    const block = fc.oneof(
      fc.record({ type: fc.constant('text'), text: fc.string({ maxLength: 8 }) }),
      fc.record({ type: fc.constantFrom('text', 'image'), data: fc.string(), mediaType: fc.string() }),
      fc.record({ text: fc.string(), type: fc.constant('text') }),
      value,
    );
    const content = fc.oneof(fc.array(block, { maxLength: 4 }), fc.string(), value);
    const payload = fc.oneof(
      fc.record({ type: fc.constant('user_message'), content }),
      fc.record({ type: fc.constant('assistant_message'), content, status: fc.constant('complete') }),
      fc.record({
        type: fc.constant('tool_call'),
        callId: fc.string(),
        toolName: fc.string(),
        arguments: value,
      }),
      fc.record({ type: fc.constant('metadata'), key: fc.string(), value }),
    );
    fc.assert(
      fc.property(payload, (input) => {
        const event = { timestamp: new Date(0), payload: input } as SessionEvent;
        expect(adoptEvent(event).payload).toStrictEqual(structuredClone(input));
      }),
    );
    const holed = [{ type: 'text', text: 'a' }];
    holed[2] = { type: 'text', text: 'b' };
    const named = Object.assign([{ type: 'text', text: 'a' }], { extra: 1 });
    for (const odd of [holed, named]) {
      const event = {
        timestamp: new Date(0),
        payload: { type: 'user_message', content: odd },
      } as SessionEvent;
      expect(adoptEvent(event).payload).toStrictEqual(structuredClone(event.payload));
    }
  });

  it('keeps the extra fields of an event and of its payload', async () => {
    const storage = new InMemorySessionStorage();
    const event = {
      timestamp: new Date(1000),
      payload: { type: 'tool_call', callId: 'c', toolName: 't', arguments: { n: 1 }, extra: [1] },
      note: 'kept',
    };
    await storage.saveEvent('s', event as never);
    expect(await storage.loadSession('s')).toStrictEqual([structuredClone(event)]);
  });
});

describe('ToolInput.signal, made on first read', () => {
  it('is an own enumerable property: a spread copy carries the signal, and it can be assigned', async () => {
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
    expect(Object.keys(seen!)).toEqual(['callId', 'arguments', 'sessionId', 'turnId', 'signal']);
    const copy = { ...seen! };
    expect(copy.signal).toBeInstanceOf(AbortSignal);
    expect(copy.signal).toBe(seen!.signal);
    const replacement = new AbortController().signal;
    seen!.signal = replacement;
    expect(seen!.signal).toBe(replacement);
  });

  it('read after a turn cancel that came while the tool ran: aborted, with the turn’s reason', async () => {
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

  it('read after a turn cancel that came once the call had ended: not aborted', async () => {
    const turn = new AbortController();
    let input: ToolInput | undefined;
    const dispatcher = new ToolDispatcher({
      tools: [
        {
          name: 't',
          description: 't',
          parametersSchema: { type: 'object' },
          isMutating: false,
          execute: ((given: ToolInput) => {
            input = given;
            return { content: 'ok', isError: false };
          }) as never,
        },
      ],
      timeoutMs: 5000,
    });
    await runBatch(dispatcher, [call('t')], { signal: turn.signal });
    turn.abort('too late');
    expect(input!.signal.aborted).toBe(false);
  });

  it('read after a time-out and a later turn cancel: aborted by the time-out', async () => {
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
});

describe('ToolDispatcher: the order of hooks, tools and events', () => {
  async function order(options: { mutating: boolean; asyncTool: boolean; asyncHook: boolean }) {
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
    const execute = ({ callId }: ToolInput) => {
      log.push(`exec:${callId}`);
      const output = { content: 'ok', isError: false };
      return options.asyncTool ? Promise.resolve(output) : output;
    };
    const dispatcher = new ToolDispatcher({
      tools: [
        {
          name: 't',
          description: 't',
          parametersSchema: { type: 'object' },
          isMutating: options.mutating,
          execute: execute as never,
        },
      ],
      timeoutMs: 5000,
    });
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
    for (const asyncTool of [false, true]) {
      for (const asyncHook of [false, true]) {
        expect(await order({ mutating: false, asyncTool, asyncHook })).toBe(expected);
      }
    }
  });

  it('runs each call to its result before the next one starts in a serial batch', async () => {
    const expected =
      'before:c0 start:c0 exec:c0 end:c0 after:c0 result:c0 before:c1 start:c1 exec:c1 end:c1 after:c1 result:c1';
    for (const asyncTool of [false, true]) {
      expect(await order({ mutating: true, asyncTool, asyncHook: false })).toBe(expected);
    }
  });
});

describe('HookRegistry.dispatch', () => {
  it('answers at once when every handler did, and with a promise when one did not', async () => {
    const hooks = new HookRegistry();
    hooks.tap('TurnEnd', { pluginId: 'p', pluginConfig: undefined, handler: () => undefined });
    const options = { event: 'TurnEnd' as const, sessionId: 's', data: 1, timeoutMs: 1000 };
    expect(hooks.dispatch(options)).not.toBeInstanceOf(Promise);
    hooks.tap('TurnEnd', {
      pluginId: 'q',
      pluginConfig: undefined,
      handler: async () => ({ type: 'continue_with', data: 2 }),
    });
    const later = hooks.dispatch(options);
    expect(later).toBeInstanceOf(Promise);
    expect((await later).data).toBe(2);
  });
});

describe('SessionLog', () => {
  it('writes events appended while a write is under way after it, in order, each once', async () => {
    const saved: string[] = [];
    const gate = deferred();
    const storage = new InMemorySessionStorage();
    const save = storage.saveEvent.bind(storage);
    storage.saveEvent = async (sessionId, event) => {
      if (saved.length === 0) await gate.promise;
      saved.push((event.payload as { content: string }).content);
      return save(sessionId, event);
    };
    const log = new SessionLog({ storage, sessionId: 's' });
    const writes = ['a', 'b', 'c'].map((content) => log.append({ type: 'system_message', content }));
    gate.resolve();
    await Promise.all(writes);
    expect(saved).toEqual(['a', 'b', 'c']);
    expect(log.pendingCount).toBe(0);
  });

  it('saves into the in-memory storage at once, and nothing the caller keeps can change what was saved', async () => {
    const storage = new InMemorySessionStorage();
    const log = new SessionLog({ storage, sessionId: 's' });
    const args = { path: 'a.txt', lines: [1, 2] };
    const blocks = [{ type: 'text' as const, text: 'hello' }];
    const value = { nested: { n: 1 } };
    const payloads = [
      { type: 'user_message' as const, content: blocks },
      { type: 'assistant_message' as const, content: blocks, status: 'complete' as const },
      { type: 'tool_call' as const, callId: 'c1', toolName: 'read', arguments: args },
      { type: 'tool_result' as const, callId: 'c1', content: 'done', isError: false },
      { type: 'system_message' as const, content: 'note' },
      { type: 'metadata' as const, key: 'k', value },
    ];
    for (const payload of payloads) expect(log.append(payload)).toBeUndefined();
    const expected = structuredClone(payloads);
    args.lines.push(3);
    blocks[0]!.text = 'changed';
    value.nested.n = 2;
    for (const payload of payloads) (payload as { callId?: string }).callId = 'changed';
    const events = (await storage.loadSession('s')) ?? [];
    expect(events.map((event) => event.payload)).toEqual(expected);
    expect(events.every((event) => event.timestamp instanceof Date)).toBe(true);
  });

  it('refuses through the port what the storage cannot copy, and keeps it queued', async () => {
    const storage = new InMemorySessionStorage();
    const log = new SessionLog({ storage, sessionId: 's' });
    const written = log.append({ type: 'metadata', key: 'k', value: { run: () => 1 } });
    await expect(written).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
    expect(log.pendingCount).toBe(1);
    expect(await storage.loadSession('s')).toBeNull();
  });
});
