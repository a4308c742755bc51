import { describe, expect, it } from 'vitest';
import { type AgentEventPayload, agentTool, type ToolHandler, type ToolInput } from '../src/index.js';
import { ToolDispatcher } from '../src/tools/tool-dispatch.js';
import { collect, deferred, harness } from './support/session-fixtures.js';
import { call, runBatch, tool } from './support/tool-dispatch-fixtures.js';
import { expectTurnInvariants } from './support/well-typed.js';

/** A tool that reports each of `lines` through onOutput, then answers with them joined. */
function reporter(name: string, lines: readonly string[]): ToolHandler {
  return tool({
    name,
    execute: async (input) => {
      for (const line of lines) input.onOutput?.(line);
      return { content: lines.join(''), isError: false };
    },
  });
}

/** The delta texts of one call, in order. */
function deltasOf(events: readonly AgentEventPayload[], callId: string): string[] {
  return events.flatMap((event) =>
    event.type === 'tool_output_delta' && event.callId === callId ? [event.text] : [],
  );
}

describe('tool_output_delta (ToolInput.onOutput)', () => {
  it('comes between the call’s start and end, and is not saved; the end carries the whole output', async () => {
    const { agent, storage } = await harness({
      script: {
        responses: [
          [{ type: 'tool_call', toolName: 'build', arguments: {}, callId: 'b1' }],
          [{ type: 'text', text: 'built' }],
        ],
      },
      tools: [reporter('build', ['compiling\n', 'linking\n'])],
    });
    const session = await agent.newSession();
    const turn = await collect(await session.sendMessage('build it'));
    expectTurnInvariants(turn);
    const events = turn.map((event) => event.payload);
    const types = events.map((payload) => payload.type);
    expect(types.slice(0, 4)).toEqual([
      'tool_call_start',
      'tool_output_delta',
      'tool_output_delta',
      'tool_call_end',
    ]);
    expect(deltasOf(events, 'b1')).toEqual(['compiling\n', 'linking\n']);
    expect(events[3]).toMatchObject({ type: 'tool_call_end', output: { content: 'compiling\nlinking\n' } });
    const saved = JSON.stringify(await storage.loadSession(session.id));
    expect(saved).not.toContain('tool_output_delta');
    expect(saved).toContain('compiling\\nlinking\\n');
  });

  it('drops output reported after the call ended or timed out', async () => {
    let kept: ToolInput['onOutput'];
    const released = deferred();
    const late = tool({
      name: 'late',
      execute: async (input) => {
        kept = input.onOutput;
        input.onOutput?.('during');
        return { content: 'done', isError: false };
      },
    });
    const slow = tool({
      name: 'slow',
      execute: async (input) => {
        await released.promise;
        input.onOutput?.('after the timeout');
        return { content: 'too late', isError: false };
      },
    });
    const dispatcher = new ToolDispatcher({ tools: [late, slow], timeoutMs: 50 });
    const { events } = await runBatch(dispatcher, [call('late'), call('slow')]);
    kept?.('after the end');
    released.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(deltasOf(events, 'call-late')).toEqual(['during']);
    expect(deltasOf(events, 'call-slow')).toEqual([]);
    const lastOfLate = events.map((event) => event.type).lastIndexOf('tool_call_end');
    expect(events.length).toBe(lastOfLate + 1);
  });

  it('ignores what is not a non-empty string and bounds what one call emits', async () => {
    const hostile = tool({
      name: 'hostile',
      execute: async (input) => {
        const report = input.onOutput as unknown as (value: unknown) => void;
        for (const value of [undefined, null, 42, { text: 'x' }, ['x'], '', Symbol('s')]) report(value);
        report('ok');
        report('a'.repeat(2_000_000));
        report('more');
        return { content: 'survived', isError: false };
      },
    });
    const chatty = tool({
      name: 'chatty',
      execute: async (input) => {
        for (let index = 0; index < 10_000; index += 1) input.onOutput?.('.');
        return { content: 'chatted', isError: false };
      },
    });
    const dispatcher = new ToolDispatcher({ tools: [hostile, chatty], timeoutMs: 5000 });
    const { outcomes, events } = await runBatch(dispatcher, [call('hostile'), call('chatty')]);
    expect(outcomes.map((outcome) => outcome.output.content)).toEqual(['survived', 'chatted']);

    const hostileDeltas = deltasOf(events, 'call-hostile');
    expect(hostileDeltas[0]).toBe('ok');
    const emitted = hostileDeltas.slice(0, 2).join('');
    expect(emitted.length).toBe(1_048_576);
    // One notice after the cut, then nothing: 'more' never comes.
    expect(hostileDeltas).toHaveLength(3);
    expect(hostileDeltas.join('')).not.toContain('more');

    const chattyDeltas = deltasOf(events, 'call-chatty');
    expect(chattyDeltas.filter((text) => text === '.')).toHaveLength(4096);
    expect(chattyDeltas).toHaveLength(4097);
  });

  it('never splits a surrogate pair at the cut', async () => {
    const emoji = tool({
      name: 'emoji',
      execute: async (input) => {
        input.onOutput?.(`${'a'.repeat(1_048_575)}😀tail`);
        return { content: 'ok', isError: false };
      },
    });
    const dispatcher = new ToolDispatcher({ tools: [emoji], timeoutMs: 5000 });
    const { events } = await runBatch(dispatcher, [call('emoji')]);
    const first = deltasOf(events, 'call-emoji')[0] ?? '';
    expect(first).toBe('a'.repeat(1_048_575));
  });

  it('a sub-agent’s tool output reaches the caller wrapped, between the sub-agent call’s start and end', async () => {
    const { agent } = await harness({
      script: {
        responses: [
          [{ type: 'tool_call', toolName: 'helper', arguments: { task: 'go' }, callId: 'h1' }],
          [{ type: 'tool_call', toolName: 'build', arguments: {}, callId: 'k1' }],
          [{ type: 'text', text: 'child done' }],
          [{ type: 'text', text: 'parent done' }],
        ],
      },
      tools: [
        reporter('build', ['step 1\n']),
        agentTool({ name: 'helper', description: 'helps', instructions: 'Help.', tools: ['build'] }),
      ],
    });
    const session = await agent.newSession();
    const turn = await collect(await session.sendMessage('go'));
    expectTurnInvariants(turn);
    const payloads = turn.map((event) => event.payload);
    const shapes = payloads.map((payload) =>
      payload.type === 'subagent' ? `subagent>${payload.event.type}` : payload.type,
    );
    const start = shapes.indexOf('tool_call_start');
    const delta = shapes.indexOf('subagent>tool_output_delta');
    const end = shapes.indexOf('tool_call_end');
    expect(start).toBeGreaterThanOrEqual(0);
    expect(delta).toBeGreaterThan(start);
    expect(end).toBeGreaterThan(delta);
    const wrapped = payloads[delta];
    expect(wrapped).toMatchObject({
      type: 'subagent',
      callId: 'h1',
      event: { type: 'tool_output_delta', callId: 'k1', text: 'step 1\n' },
    });
  });
});
