import type { ToolHandler } from '@youyou/agent';
import { afterEach, expect, test } from 'vitest';
import { type HeldElicitationAnswer, HeldElicitations } from '../src/index.js';
import { createSession, type Harness, isTurnEnd, readUntil, startHarness } from './support/harness.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** A tool that holds one question for its session's client, as youyou serve's MCP client does. */
function askingTool(held: HeldElicitations, answers: HeldElicitationAnswer[]): ToolHandler {
  return {
    name: 'ask',
    description: 'asks the user',
    parametersSchema: { type: 'object' },
    isMutating: false,
    execute: async (input) => {
      const answer = await held.hold({
        sessionId: input.sessionId,
        server: 'docs',
        message: 'Which colour?',
        fields: [{ name: 'colour', type: 'string', required: true }],
        signal: input.signal,
        problemWith: (content) => (typeof content.colour === 'string' ? undefined : "'colour' is required"),
      });
      answers.push(answer);
      return { content: JSON.stringify(answer), isError: false };
    },
  };
}

type Listed = { elicitations: { id: string; server: string; message: string }[] };

test('a held question is listed for its session only, checked, answered once, and the call goes on', async () => {
  const held = new HeldElicitations({ windowMs: 60_000 });
  const answers: HeldElicitationAnswer[] = [];
  harness = await startHarness({
    elicitations: held,
    tools: [askingTool(held, answers)],
    responses: [
      [
        { type: 'tool_call', toolName: 'ask', callId: 'call_ask' },
        { type: 'done', stopReason: 'tool_use' },
      ],
      [{ type: 'text', text: 'ok' }],
    ],
  });
  const sessionId = await createSession(harness);
  const turn = await harness.request(`/sessions/${sessionId}/messages`, {
    method: 'POST',
    json: { content: 'ask me' },
  });
  let listed: Listed = { elicitations: [] };
  while (listed.elicitations.length === 0) {
    listed = (await (await harness.request(`/sessions/${sessionId}/elicitations`)).json()) as Listed;
  }
  const [question] = listed.elicitations;
  expect(question).toMatchObject({ server: 'docs', message: 'Which colour?' });
  const answerPath = `/sessions/${sessionId}/elicitations/${question?.id}`;

  expect((await harness.request(`/sessions/${sessionId}/elicitations`, { as: 'bob' })).status).toBe(404);
  const bad = [
    { action: 'maybe' },
    { action: 'accept' },
    { action: 'accept', content: { colour: ['red'] } },
    { action: 'decline', content: {} },
    { action: 'accept', content: { shade: 'red' } },
  ];
  for (const body of bad) {
    expect((await harness.request(answerPath, { method: 'POST', json: body })).status).toBe(400);
  }
  expect(answers).toEqual([]);

  const answered = await harness.request(answerPath, {
    method: 'POST',
    json: { action: 'accept', content: { colour: 'red' } },
  });
  expect(await answered.json()).toEqual({ answered: true });
  await readUntil(turn, isTurnEnd);
  expect(answers).toEqual([{ action: 'accept', content: { colour: 'red' } }]);
  const again = await harness.request(answerPath, { method: 'POST', json: { action: 'decline' } });
  expect(again.status).toBe(404);
  expect(((await again.json()) as { error: { code: string } }).error.code).toBe('ELICITATION_NOT_FOUND');
});

test('a field named __proto__ is answered like any other', async () => {
  const held = new HeldElicitations({ windowMs: 60_000 });
  const answers: HeldElicitationAnswer[] = [];
  harness = await startHarness({
    elicitations: held,
    tools: [askingTool(held, answers)],
    responses: [
      [
        { type: 'tool_call', toolName: 'ask', callId: 'call_ask' },
        { type: 'done', stopReason: 'tool_use' },
      ],
      [{ type: 'text', text: 'ok' }],
    ],
  });
  const sessionId = await createSession(harness);
  const turn = await harness.request(`/sessions/${sessionId}/messages`, {
    method: 'POST',
    json: { content: 'ask me' },
  });
  let listed: Listed = { elicitations: [] };
  while (listed.elicitations.length === 0) {
    listed = (await (await harness.request(`/sessions/${sessionId}/elicitations`)).json()) as Listed;
  }
  const answered = await harness.request(
    `/sessions/${sessionId}/elicitations/${listed.elicitations[0]?.id}`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      // Written out: an object literal's __proto__ would set its prototype, not a key.
      body: '{"action":"accept","content":{"colour":"red","__proto__":"odd"}}',
    },
  );
  expect(answered.status).toBe(200);
  await readUntil(turn, isTurnEnd);
  const [answer] = answers;
  expect(answer?.action === 'accept' && Object.entries(answer.content)).toEqual([
    ['colour', 'red'],
    ['__proto__', 'odd'],
  ]);
});

test('a question is declined when its window passes, and cancelled when its asker withdraws it', async () => {
  const held = new HeldElicitations({ windowMs: 50 });
  const withdrawn = new AbortController();
  const expired = held.hold({
    sessionId: 's1',
    server: 'docs',
    message: 'q',
    fields: [],
    signal: new AbortController().signal,
  });
  const cancelled = held.hold({
    sessionId: 's1',
    server: 'docs',
    message: 'q',
    fields: [],
    signal: withdrawn.signal,
  });
  withdrawn.abort();
  expect(await cancelled).toEqual({ action: 'cancel' });
  expect(await expired).toEqual({ action: 'decline' });
  expect(held.pending('s1')).toEqual([]);
});
