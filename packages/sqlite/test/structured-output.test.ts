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

const SCHEMA = {
  type: 'object',
  properties: { word: { type: 'string' }, meaning: { type: 'string' } },
  required: ['word', 'meaning'],
  additionalProperties: false,
};

test('a session whose last turn had a structured answer and a repair round resumes from SQLite with the same context', async () => {
  const path = folder.file('structured.db');
  const first = await openSqliteStorage(path);
  const { agent } = await buildAgent({
    storage: first,
    responses: [
      [{ type: 'tool_call', toolName: 'lookup', arguments: { q: 'tea' } }],
      [{ type: 'text', text: '{"word":"tea"}' }],
      [{ type: 'json', value: { word: 'tea', meaning: 'a drink' } }],
    ],
  });
  const session = await agent.newSession();
  const turn = await session.sendMessage('Define tea', { output: { schema: SCHEMA } });
  const events = await eventsOf(turn);
  expect(events.at(-1)?.payload).toEqual({
    type: 'turn_complete',
    usage: expect.any(Object),
    output: { word: 'tea', meaning: 'a drink' },
  });
  const live = session.messages();
  await session.close();
  await agent.shutdown();
  await first.close();

  const second = await openSqliteStorage(path);
  try {
    const { agent: again, provider } = await buildAgent({
      storage: second,
      responses: [[{ type: 'text', text: 'It is a drink.' }]],
    });
    const resumed = await again.resumeSession(session.id);
    expect(resumed.messages()).toEqual(live);
    const log = describeLog(
      (await second.sessions.loadSession(session.id))?.map((event) => event.payload) ?? [],
    );
    expect(log.filter((line) => !line.startsWith('metadata'))).toEqual([
      'user_message: Define tea',
      expect.stringMatching(/^tool_call: lookup /),
      expect.stringMatching(/^tool_result/),
      'assistant_message: {"word":"tea"}',
      expect.stringMatching(/^system_message/),
      'assistant_message: {"word":"tea","meaning":"a drink"}',
    ]);
    await eventsOf(await resumed.sendMessage('And coffee?'));
    const request = provider.requests.find((sent) => sent.purpose === 'turn');
    expect(request?.messages.slice(0, live.length)).toEqual(live);
    expect(request?.responseFormat).toBeUndefined();
    await resumed.close();
    await again.shutdown();
  } finally {
    await second.close();
  }
});
