import { describe, expect, test } from 'vitest';
import { type HookPayload, type ModelInfo, type SessionStorage, templates } from '../src/index.js';
import { InMemorySessionStorage } from '../src/testing/index.js';

import {
  assistantText,
  collect,
  expectCode,
  harness,
  lastTurnRequest,
  sessionHooksPlugin,
  userText,
  writeLog,
} from './support/resume-fixtures.js';

describe('the compaction marker', () => {
  test('a compaction event replaces what came before with the summary and the last keptMessages', async () => {
    const hookCalls: HookPayload[] = [];
    const { agent, storage } = await harness({ plugins: [sessionHooksPlugin(hookCalls)] });
    const id = 'compacted';
    await writeLog(storage, id, [
      { type: 'metadata', key: 'session_config', value: { modelId: 'scripted-model' } },
      userText('u1'),
      assistantText('a1'),
      userText('u2'),
      assistantText('a2'),
      { type: 'metadata', key: 'compaction', value: { summary: 'They said hello twice.', keptMessages: 2 } },
      userText('u3'),
      assistantText('a3'),
    ]);
    const session = await agent.resumeSession(id);
    expect(session.messages()).toEqual([
      { type: 'system', content: `${templates.COMPACT_SUMMARY_PREFIX}\n\nThey said hello twice.` },
      { type: 'user', content: [{ type: 'text', text: 'u2' }] },
      { type: 'assistant', content: [{ type: 'text', text: 'a2' }], status: 'complete' },
      { type: 'user', content: [{ type: 'text', text: 'u3' }] },
      { type: 'assistant', content: [{ type: 'text', text: 'a3' }], status: 'complete' },
    ]);
    // Turns before the compaction still count.
    await session.close();
    expect(hookCalls.map((call) => [call.event, call.data])).toEqual([['SessionEnd', { turnCount: 3 }]]);
    await agent.shutdown();
  });

  test('a compaction made by a live turn replays to the same context', async () => {
    const words = (n: number) => `${'word '.repeat(40)}${n}`;
    const { agent, storage } = await harness({
      models: [
        {
          id: 'scripted-model',
          displayName: 'small',
          contextWindow: 400,
          capabilities: { toolUse: true, vision: true, streaming: true },
        },
      ],
      config: { compactThreshold: 0.5 },
      script: {
        responses: [1, 2, 3, 4, 5].map((n) => [{ type: 'text' as const, text: `ok ${n}` }]),
        byPurpose: {
          compaction: [1, 2, 3, 4, 5].map((n) => [{ type: 'text' as const, text: `Summary number ${n}.` }]),
        },
      },
    });
    const session = await agent.newSession();
    const seen: string[] = [];
    for (const n of [1, 2, 3, 4, 5]) {
      for (const event of await collect(await session.sendMessage(words(n)))) seen.push(event.payload.type);
    }
    const compactions = seen.filter((type) => type === 'context_compacted').length;
    expect(compactions).toBeGreaterThan(0);
    expect(seen).not.toContain('error');
    const live = session.messages();
    expect(live[0]).toEqual({
      type: 'system',
      content: `${templates.COMPACT_SUMMARY_PREFIX}\n\nSummary number ${compactions}.`,
    });
    // The view holds more than the summary, so keptMessages counted real messages.
    expect(live.length).toBeGreaterThan(2);
    const log = (await storage.loadSession(session.id)) ?? [];
    expect(log.some((event) => event.payload.type === 'metadata' && event.payload.key === 'compaction')).toBe(
      true,
    );
    await session.close();
    const resumed = await agent.resumeSession(session.id);
    expect(resumed.messages()).toEqual(live);
    await agent.shutdown();
  });
});

describe('session_config', () => {
  test('modelId and systemPromptOverride are restored and used by the next request', async () => {
    const models: ModelInfo[] = [
      {
        id: 'scripted-model',
        displayName: 'A',
        contextWindow: 128_000,
        capabilities: { toolUse: true, vision: true, streaming: true },
      },
      {
        id: 'second-model',
        displayName: 'B',
        contextWindow: 128_000,
        capabilities: { toolUse: true, vision: true, streaming: true },
      },
    ];
    const { agent, provider } = await harness({
      models,
      config: { systemInstructions: ['Be kind.'] },
      script: { responses: [[{ type: 'text', text: 'Bonjour.' }], [{ type: 'text', text: 'Encore.' }]] },
    });
    const session = await agent.newSession({
      modelId: 'second-model',
      systemPromptOverride: 'Answer in French.',
    });
    await collect(await session.sendMessage('hello'));
    await session.close();
    const resumed = await agent.resumeSession(session.id);
    expect(resumed.modelId).toBe('second-model');
    await collect(await resumed.sendMessage('again'));
    const request = lastTurnRequest(provider);
    expect(request.modelId).toBe('second-model');
    expect(request.systemPromptParts.stable).toContain('Answer in French.');
    expect(request.systemPrompt.indexOf('Be kind.')).toBeLessThan(
      request.systemPrompt.indexOf('Answer in French.'),
    );
    await agent.shutdown();
  });

  test('a model no provider offers any more falls back to defaultModel and is reported', async () => {
    const { agent, storage, provider, background } = await harness({
      script: { responses: [[{ type: 'text', text: 'ok' }]] },
    });
    await writeLog(storage, 'old', [
      {
        type: 'metadata',
        key: 'session_config',
        value: { modelId: 'retired-model', systemPromptOverride: 'Keep it short.' },
      },
      userText('hi'),
      assistantText('hello'),
    ]);
    const session = await agent.resumeSession('old');
    expect(session.modelId).toBe('scripted-model');
    expect(background).toHaveLength(1);
    expect(background[0]?.message).toContain('retired-model');
    await collect(await session.sendMessage('still there?'));
    expect(lastTurnRequest(provider).modelId).toBe('scripted-model');
    expect(lastTurnRequest(provider).systemPrompt).toContain('Keep it short.');
    await agent.shutdown();
  });

  test('a log without session_config resumes with the defaults', async () => {
    const { agent, storage } = await harness();
    await writeLog(storage, 'bare', [userText('hi'), assistantText('hello')]);
    const session = await agent.resumeSession('bare');
    expect(session.modelId).toBe('scripted-model');
    expect(session.messages()).toHaveLength(2);
    await agent.shutdown();
  });
});

describe('resumeSession errors', () => {
  test('no session storage registered → SESSION_NOT_FOUND', async () => {
    const { agent } = await harness({ sessionStorage: null });
    const session = await agent.newSession();
    await session.close();
    await expectCode(agent.resumeSession(session.id), 'SESSION_NOT_FOUND');
    await agent.shutdown();
  });

  test('an unknown id → SESSION_NOT_FOUND, and the slot stays free', async () => {
    const { agent } = await harness();
    await expectCode(agent.resumeSession('no-such-session'), 'SESSION_NOT_FOUND');
    await (await agent.newSession()).close();
    await agent.shutdown();
  });

  test('loadSession throwing → STORAGE_ERROR, and the slot stays free', async () => {
    const inner = new InMemorySessionStorage();
    const broken: SessionStorage = {
      saveEvent: (sessionId, event) => inner.saveEvent(sessionId, event),
      loadSession: () => Promise.reject(new Error('database is locked')),
      listSessions: (cursor, limit) => inner.listSessions(cursor, limit),
      findSession: (query) => inner.findSession(query),
      deleteSession: (sessionId) => inner.deleteSession(sessionId),
    };
    const { agent } = await harness({ sessionStorage: broken });
    const session = await agent.newSession();
    await session.close();
    await expectCode(agent.resumeSession(session.id), 'STORAGE_ERROR');
    await (await agent.newSession()).close();
    await agent.shutdown();
  });

  test('SESSION_BUSY while another session is active, the same one included', async () => {
    const { agent } = await harness();
    const first = await agent.newSession();
    await first.close();
    const other = await agent.newSession();
    await expectCode(agent.resumeSession(first.id), 'SESSION_BUSY');
    await expectCode(agent.resumeSession(other.id), 'SESSION_BUSY');
    await other.close();
    const resumed = await agent.resumeSession(first.id);
    expect(resumed.id).toBe(first.id);
    await agent.shutdown();
  });
});
