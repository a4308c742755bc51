import { afterEach, beforeEach, expect, test } from 'vitest';
import { openSqliteStorage } from '../src/index.js';
import { buildAgent, describeLog, eventsOf } from './support/agent.js';
import { makeTempFolder, type TempFolder } from './support/temp-folder.js';

let folder: TempFolder;

beforeEach(async () => {
  folder = await makeTempFolder();
});

afterEach(async () => {
  await folder.remove();
});

test('an Agent session on SQLite is resumed, with its memories, after the storage is reopened', async () => {
  const path = folder.file('agent.db');
  const first = await openSqliteStorage(path);
  const { agent, background } = await buildAgent({
    storage: first,
    responses: [
      [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_call', toolName: 'lookup', arguments: { q: 'tea' } },
      ],
      [{ type: 'text', text: 'Tea is a drink.' }],
    ],
    memoryAnswers: [
      [
        {
          type: 'text',
          text: '{"memories":[{"content":"The user drinks green tea","category":"preference"}]}',
        },
      ],
    ],
  });
  const session = await agent.newSession();
  const events = await eventsOf(await session.sendMessage('Tell me about tea'));
  expect(events.map((event) => event.payload.type).at(-1)).toBe('turn_complete');
  expect(events.some((event) => event.payload.type === 'error')).toBe(false);
  const messagesBefore = session.messages();
  await session.close();
  await agent.shutdown();
  await first.close();
  expect(background).toEqual([]);

  const second = await openSqliteStorage(path);
  try {
    const { agent: again, provider } = await buildAgent({
      storage: second,
      responses: [[{ type: 'text', text: 'You asked about tea.' }]],
    });
    const resumed = await again.resumeSession(session.id);
    expect(resumed.messages()).toStrictEqual(messagesBefore);
    const next = await eventsOf(await resumed.sendMessage('What did I ask?'));
    expect(next.at(-1)?.payload.type).toBe('turn_complete');
    const request = provider.requests[0];
    expect(request?.messages.slice(0, messagesBefore.length)).toStrictEqual(messagesBefore);
    // Memories are in the dynamic prompt part, the system message before the new user message.
    expect(request?.systemPromptParts.dynamic).toContain('The user drinks green tea');
    expect(request?.messages.at(-2)).toStrictEqual({
      type: 'system',
      content: request?.systemPromptParts.dynamic,
    });
    await resumed.close();
    await again.shutdown();

    const log = await second.sessions.loadSession(session.id);
    expect(describeLog(log?.map((event) => event.payload) ?? [])).toEqual([
      'metadata: session_config',
      'user_message: Tell me about tea',
      'assistant_message: Let me look.',
      'tool_call: lookup call_1',
      'tool_result: call_1 ok',
      'assistant_message: Tea is a drink.',
      'user_message: What did I ask?',
      'assistant_message: You asked about tea.',
    ]);
    const [summary] = await second.sessions.findSession('about tea');
    expect(summary).toMatchObject({ sessionId: session.id, title: 'Tell me about tea', messageCount: 7 });
    const memories = await second.memories.search('default', 'tea', 10);
    expect(memories.map((memory) => [memory.content, memory.category, memory.sourceSessionId])).toEqual([
      ['The user drinks green tea', 'preference', session.id],
    ]);
  } finally {
    await second.close();
  }
});
