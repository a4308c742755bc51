import { describe, expect, test } from 'vitest';
import type { HookPayload, Message } from '../src/index.js';

import {
  collect,
  harness,
  lastTurnRequest,
  NO_MEMORIES,
  NOTICE,
  readUntil,
  sessionHooksPlugin,
  userText,
  writeLog,
} from './support/resume-fixtures.js';

describe('the event → message mapping (0006 §8.1)', () => {
  test('a resumed session has the same context as the session that wrote the log', async () => {
    const { agent, storage } = await harness({
      script: {
        responses: [
          [
            { type: 'reasoning', text: 'I should look.', signature: 'sig-1' },
            { type: 'text', text: 'Let me look.' },
            { type: 'tool_call', toolName: 'lookup', arguments: { q: 'plan' }, callId: 'c1' },
            { type: 'tool_call', toolName: 'explode', callId: 'c2' },
          ],
          [{ type: 'text', text: 'All good.' }],
          [{ type: 'tool_call', toolName: 'lookup', arguments: '{not json', callId: 'c3' }],
          [{ type: 'text', text: 'Sorry.' }],
          [
            { type: 'text', text: 'Bro' },
            { type: 'error', error: new Error('socket closed') },
          ],
          [{ type: 'text', text: 'Half a th' }, { type: 'hang' }],
        ],
      },
    });
    const session = await agent.newSession();
    await collect(await session.sendMessage('/review the plan'));
    await collect(await session.sendMessage('and now?'));
    const failed = await collect(await session.sendMessage('fail please'));
    expect(failed.map((event) => event.payload.type)).toEqual(['text_delta', 'error', 'turn_complete']);
    const third = await session.sendMessage('tell me more');
    await readUntil(third, 'text_delta');
    third.cancel();
    expect((await third.done).status).toBe('cancelled');
    const original = session.messages();
    await session.close();

    expect(original.map((message) => message.type)).toEqual([
      'system',
      'user',
      'assistant',
      'tool_call',
      'tool_call',
      'tool_result',
      'tool_result',
      'assistant',
      'user',
      'tool_call',
      'tool_result',
      'assistant',
      'user',
      'assistant',
      'system',
      'user',
      'assistant',
      'system',
    ]);
    expect(original[0]).toMatchObject({
      type: 'system',
      content: expect.stringContaining('Review carefully.'),
    });
    expect(original[2]).toEqual({
      type: 'assistant',
      content: [
        { type: 'reasoning', text: 'I should look.', signature: 'sig-1' },
        { type: 'text', text: 'Let me look.' },
      ],
      status: 'complete',
    });
    expect(original[5]).toEqual({ type: 'tool_result', callId: 'c1', content: 'found plan', isError: false });
    expect(original[6]).toMatchObject({ type: 'tool_result', callId: 'c2', isError: true });
    expect(original[9]).toEqual({
      type: 'tool_call',
      callId: 'c3',
      toolName: 'lookup',
      arguments: '{not json',
    });
    expect(original[10]).toMatchObject({ type: 'tool_result', callId: 'c3', isError: true });
    expect(original.slice(13, 15)).toEqual([
      { type: 'assistant', content: [{ type: 'text', text: 'Bro' }], status: 'incomplete' },
      NOTICE,
    ]);
    expect(original.slice(-2)).toEqual([
      { type: 'assistant', content: [{ type: 'text', text: 'Half a th' }], status: 'incomplete' },
      NOTICE,
    ]);

    const resumed = await agent.resumeSession(session.id);
    expect(resumed.id).toBe(session.id);
    expect(resumed.messages()).toEqual(original);
    // Metadata is not a message, and the notice is derived, not saved.
    const log = (await storage.loadSession(session.id)) ?? [];
    expect(log.filter((event) => event.payload.type === 'system_message')).toHaveLength(1);
    await agent.shutdown();
  });

  test('the interrupted notice follows an incomplete message live and on resume, and the model sees it', async () => {
    const { agent, provider } = await harness({
      script: {
        responses: [
          [{ type: 'text', text: 'Half an ans' }, { type: 'hang' }],
          [{ type: 'text', text: 'Starting over.' }],
          [{ type: 'text', text: 'Resumed.' }],
        ],
      },
    });
    const session = await agent.newSession();
    const turn = await session.sendMessage('question');
    await readUntil(turn, 'text_delta');
    turn.cancel();
    await turn.done;
    const incomplete: Message = {
      type: 'assistant',
      content: [{ type: 'text', text: 'Half an ans' }],
      status: 'incomplete',
    };
    expect(session.messages().slice(1)).toEqual([incomplete, NOTICE]);
    await collect(await session.sendMessage('go on'));
    expect(lastTurnRequest(provider).messages.slice(1, 3)).toEqual([incomplete, NOTICE]);
    const live = session.messages();
    await session.close();

    const resumed = await agent.resumeSession(session.id);
    expect(resumed.messages()).toEqual(live);
    await collect(await resumed.sendMessage('again'));
    expect(lastTurnRequest(provider).messages.slice(1, 3)).toEqual([incomplete, NOTICE]);
    await agent.shutdown();
  });

  test('a tool_call left without a result gets a synthetic isError result, which is not saved', async () => {
    const { agent, storage, provider } = await harness({
      script: { responses: [[{ type: 'text', text: 'ok' }]] },
    });
    const id = 'crashed-session';
    await writeLog(storage, id, [
      { type: 'metadata', key: 'session_config', value: { modelId: 'scripted-model' } },
      userText('look two things up'),
      { type: 'tool_call', callId: 'a', toolName: 'lookup', arguments: { q: 'one' } },
      { type: 'tool_call', callId: 'b', toolName: 'lookup', arguments: { q: 'two' } },
      { type: 'tool_result', callId: 'a', content: 'found one', isError: false },
      userText('hello?'),
      { type: 'tool_call', callId: 'c', toolName: 'lookup', arguments: { q: 'three' } },
    ]);
    const before = await storage.loadSession(id);
    const session = await agent.resumeSession(id);
    const messages = session.messages();
    expect(messages.map((message) => message.type)).toEqual([
      'user',
      'tool_call',
      'tool_call',
      'tool_result',
      'tool_result',
      'user',
      'tool_call',
      'tool_result',
    ]);
    expect(messages[3]).toEqual({ type: 'tool_result', callId: 'a', content: 'found one', isError: false });
    expect(messages[4]).toMatchObject({ type: 'tool_result', callId: 'b', isError: true });
    expect(messages[7]).toMatchObject({ type: 'tool_result', callId: 'c', isError: true });
    expect(await storage.loadSession(id)).toEqual(before);

    await collect(await session.sendMessage('continue'));
    expect(lastTurnRequest(provider).messages.slice(0, 8)).toEqual(messages);
    await agent.shutdown();
  });
});

describe('counters, hooks and memories on resume', () => {
  test('the turn count is rebuilt: the checkpoint interval goes on, SessionStart does not run again', async () => {
    const hookCalls: HookPayload[] = [];
    const { agent, provider } = await harness({
      config: { memoryCheckpointInterval: 2 },
      withMemory: true,
      plugins: [sessionHooksPlugin(hookCalls)],
      script: {
        responses: [[{ type: 'text', text: 'Tea it is.' }], [{ type: 'text', text: 'Vim it is.' }]],
        byPurpose: { memory_extraction: [NO_MEMORIES, NO_MEMORIES, NO_MEMORIES] },
      },
    });
    const extractions = () => provider.requests.filter((request) => request.purpose === 'memory_extraction');
    const session = await agent.newSession();
    await collect(await session.sendMessage('I like tea'));
    expect(extractions()).toHaveLength(0);
    await session.close();
    expect(extractions()).toHaveLength(1); // at close

    const resumed = await agent.resumeSession(session.id);
    const turn = await resumed.sendMessage('I use vim');
    let extractionsAtEnd = -1;
    for await (const event of turn) {
      if (event.payload.type === 'turn_complete') extractionsAtEnd = extractions().length;
    }
    expect(extractionsAtEnd).toBe(2);
    const transcript = JSON.stringify(extractions()[1]?.messages);
    expect(transcript).toContain('I use vim');
    expect(transcript).not.toContain('I like tea');
    await resumed.close();

    expect(hookCalls.map((call) => [call.event, call.data])).toEqual([
      ['SessionStart', { modelId: 'scripted-model' }],
      ['SessionEnd', { turnCount: 1 }],
      ['SessionEnd', { turnCount: 2 }],
    ]);
    await agent.shutdown();
  });

  test('memories saved between close and resume are in the next request', async () => {
    const { agent, provider, memory } = await harness({
      withMemory: true,
      script: {
        responses: [[{ type: 'text', text: 'one' }], [{ type: 'text', text: 'two' }]],
        byPurpose: { memory_extraction: [NO_MEMORIES] },
      },
    });
    const session = await agent.newSession();
    await collect(await session.sendMessage('hello'));
    expect(JSON.stringify(lastTurnRequest(provider))).not.toContain('metric units');
    await session.close();
    const now = new Date();
    await memory.save({
      id: 'm1',
      namespace: 'default',
      content: 'The user prefers metric units',
      createdAt: now,
      updatedAt: now,
    });
    const resumed = await agent.resumeSession(session.id);
    await collect(await resumed.sendMessage('how far is it?'));
    const request = lastTurnRequest(provider);
    expect(request.systemPromptParts.dynamic).toContain('The user prefers metric units');
    // The dynamic part reaches the model as the system message right before the new user message.
    expect(request.messages.at(-2)).toEqual({ type: 'system', content: request.systemPromptParts.dynamic });
    await agent.shutdown();
  });
});
