import { describe, expect, test } from 'vitest';
import type { AgentEvent, Message } from '../src/index.js';
import { ScriptedModelProvider, scriptedModel } from '../src/testing/index.js';
import {
  collect,
  deferred,
  expectCode,
  gateTool,
  harness,
  payloadTypes,
  readUntil,
} from './support/session-fixtures.js';
import {
  checkPairsIntact,
  pauseAt,
  pausingProvider,
  readAllTurns,
  textOf,
} from './support/steering-fixtures.js';

function types(events: readonly AgentEvent[]): string[] {
  return events.map((event) => event.payload.type);
}

function shapeOf(messages: readonly Message[]): string[] {
  return messages.map((message) => (message.type === 'user' ? `user:${textOf(message)}` : message.type));
}

describe('steer(): the message enters at the next step boundary', () => {
  test('mid-stream: after the answer, the model is called again with the steered message', async () => {
    const scripted = new ScriptedModelProvider({
      responses: [
        [
          { type: 'text', text: 'first ' },
          { type: 'text', text: 'answer' },
        ],
        [{ type: 'text', text: 'second answer' }],
      ],
    });
    const pause = pauseAt(1);
    const { agent, storage } = await harness({ provider: pausingProvider(scripted, { 0: pause }) });
    const session = await agent.newSession();
    const turn = await session.sendMessage('start');
    await pause.reached.promise;
    expect(await session.steer('also this')).toBe(turn);
    pause.release();
    const events = await collect(turn);
    expect(types(events)).toEqual(['text_delta', 'text_delta', 'steered', 'text_delta', 'turn_complete']);
    expect(events[2]?.payload).toEqual({ type: 'steered', content: [{ type: 'text', text: 'also this' }] });
    expect(shapeOf(scripted.requests[1]?.messages ?? [])).toEqual([
      'user:start',
      'assistant',
      'user:also this',
    ]);
    expect(payloadTypes(await storage.loadSession(session.id))).toEqual([
      'metadata',
      'user_message',
      'assistant_message',
      'user_message',
      'assistant_message',
    ]);
    const live = session.messages();
    await session.close();
    expect((await agent.resumeSession(session.id)).messages()).toEqual(live);
    await agent.shutdown();
  });

  test('mid-tool-batch: it comes after every result of the batch, never between a call and its result', async () => {
    const gate = deferred();
    const signals: AbortSignal[] = [];
    const { agent, provider } = await harness({
      script: {
        responses: [
          [
            { type: 'tool_call', toolName: 'wait', callId: 'c1' },
            { type: 'tool_call', toolName: 'wait', callId: 'c2' },
          ],
          [{ type: 'text', text: 'done' }],
        ],
      },
      tools: [gateTool({ gate: gate.promise, signals })],
    });
    const session = await agent.newSession();
    const turn = await session.sendMessage('go');
    for (let round = 0; round < 100 && signals.length < 2; round += 1) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(signals).toHaveLength(2);
    await session.steer('one more thing');
    gate.resolve();
    const events = await collect(turn);
    expect(types(events)).toEqual([
      'tool_call_start',
      'tool_call_start',
      'tool_call_end',
      'tool_call_end',
      'steered',
      'text_delta',
      'turn_complete',
    ]);
    expect(shapeOf(provider.requests[1]?.messages ?? [])).toEqual([
      'user:go',
      'tool_call',
      'tool_call',
      'tool_result',
      'tool_result',
      'user:one more thing',
    ]);
    checkPairsIntact(session.messages());
    await agent.shutdown();
  });

  test('during compaction: it enters after the compaction, before the model call', async () => {
    const text400 = (label: string): string => label.padEnd(400, '.');
    const scripted = new ScriptedModelProvider({
      models: [scriptedModel({ contextWindow: 2_000 })],
      responses: Array.from({ length: 6 }, (_, index) => [
        { type: 'text', text: text400(`answer ${index}`) },
      ]),
      byPurpose: { compaction: [[{ type: 'text', text: 'SUMMARY' }]] },
    });
    // Turns fill the window past the threshold, until one compacts before its model call.
    const pause = pauseAt(0);
    const { agent, storage } = await harness({
      provider: pausingProvider(scripted, (request) =>
        request.purpose === 'compaction' ? pause : undefined,
      ),
      config: { compactThreshold: 0.5 },
    });
    const session = await agent.newSession();
    let turn = await session.sendMessage(text400('q0'));
    for (let index = 1; index < 6; index += 1) {
      const reached = await Promise.race([
        pause.reached.promise.then(() => true),
        turn.done.then(() => false),
      ]);
      if (reached) break;
      turn = await session.sendMessage(text400(`q${index}`));
    }
    await pause.reached.promise;
    expect(scripted.requests.at(-1)?.purpose).toBe('compaction');
    await session.steer('steered during compaction');
    pause.release();
    const events = await collect(turn);
    expect(types(events)).toEqual(['context_compacted', 'steered', 'text_delta', 'turn_complete']);
    const request = scripted.requests.at(-1);
    expect(request?.purpose).toBe('turn');
    expect(textOf(request?.messages.at(-1))).toBe('steered during compaction');
    const live = session.messages();
    await session.close();
    expect((await agent.resumeSession(session.id)).messages()).toEqual(live);
    expect(payloadTypes(await storage.loadSession(session.id)).slice(-3)).toEqual([
      'metadata',
      'user_message',
      'assistant_message',
    ]);
    await agent.shutdown();
  });

  test('a turn cancelled before taking a steered message hands it to a new turn', async () => {
    const { agent, provider } = await harness({
      script: {
        responses: [
          [{ type: 'text', text: 'working' }, { type: 'hang' }],
          [{ type: 'text', text: 'redirected' }],
        ],
      },
    });
    const session = await agent.newSession();
    const turn = await session.sendMessage('long job');
    await readUntil(turn, 'text_delta');
    await session.steer('stop and do this instead');
    turn.cancel();
    const [first, second] = await readAllTurns(session, turn);
    expect(types(first ?? [])).toEqual(['turn_cancelled']);
    expect(types(second ?? [])).toEqual(['text_delta', 'turn_complete']);
    expect(textOf(provider.requests[1]?.messages.at(-1))).toBe('stop and do this instead');
    checkPairsIntact(session.messages());
    await agent.shutdown();
  });

  test('with no turn running, steer starts one; bad input is INVALID_INPUT, a closed session SESSION_CLOSED', async () => {
    const { agent } = await harness({ script: { responses: [[{ type: 'text', text: 'hi' }]] } });
    const session = await agent.newSession();
    await expectCode(session.steer('   '), 'INVALID_INPUT');
    const turn = await session.steer('hello');
    expect(types(await collect(turn))).toEqual(['text_delta', 'turn_complete']);
    await session.close();
    await expectCode(session.steer('late'), 'SESSION_CLOSED');
    await expectCode(session.followUp('late'), 'SESSION_CLOSED');
    await agent.shutdown();
  });
});

describe('followUp(): queued messages start the next turns, in order', () => {
  test('each follow-up is announced on the running turn and starts its own turn after it', async () => {
    const gate = deferred();
    const { agent, storage } = await harness({
      script: {
        responses: [
          [{ type: 'tool_call', toolName: 'wait' }],
          [{ type: 'text', text: 'first done' }],
          [{ type: 'text', text: 'answer a' }],
          [{ type: 'text', text: 'answer b' }],
        ],
      },
      tools: [gateTool({ gate: gate.promise })],
    });
    const session = await agent.newSession();
    const turn = await session.sendMessage('first');
    await readUntil(turn, 'tool_call_start');
    const followA = session.followUp('a');
    const followB = session.followUp('b');
    gate.resolve();
    const rest = await collect(turn);
    expect(types(rest)).toEqual([
      'follow_up_queued',
      'follow_up_queued',
      'tool_call_end',
      'text_delta',
      'turn_complete',
    ]);
    const turnA = await followA;
    expect(types(await collect(turnA))).toEqual(['text_delta', 'turn_complete']);
    const turnB = await followB;
    expect(types(await collect(turnB))).toEqual(['text_delta', 'turn_complete']);
    expect(new Set([turn.turnId, turnA.turnId, turnB.turnId]).size).toBe(3);
    const log = (await storage.loadSession(session.id)) ?? [];
    const users = log.flatMap((event) =>
      event.payload.type === 'user_message' ? [textOf({ type: 'user', content: event.payload.content })] : [],
    );
    expect(users).toEqual(['first', 'a', 'b']);
    await agent.shutdown();
  });

  test('with no turn running, followUp starts the turn at once', async () => {
    const { agent } = await harness({ script: { responses: [[{ type: 'text', text: 'now' }]] } });
    const session = await agent.newSession();
    const turn = await session.followUp('go');
    expect(session.currentTurn).toBe(turn);
    expect(types(await collect(turn))).toEqual(['text_delta', 'turn_complete']);
    expect(session.currentTurn).toBeUndefined();
    await agent.shutdown();
  });

  test('close() lets the running turn end and refuses the queued follow-ups with SESSION_CLOSED', async () => {
    const gate = deferred();
    const { agent, provider } = await harness({
      script: { responses: [[{ type: 'tool_call', toolName: 'wait' }], [{ type: 'text', text: 'done' }]] },
      tools: [gateTool({ gate: gate.promise })],
    });
    const session = await agent.newSession();
    const turn = await session.sendMessage('first');
    await readUntil(turn, 'tool_call_start');
    const follow = session.followUp('never sent');
    const closing = session.close();
    gate.resolve();
    await closing;
    expect((await turn.done).status).toBe('completed');
    await expectCode(follow, 'SESSION_CLOSED');
    expect(provider.requests.filter((request) => request.purpose === 'turn')).toHaveLength(2);
    await agent.shutdown();
  });
});
