/**
 * MCP servers' questions announced on the session's streams: `server.elicitation_held` on the session's SSE
 * before anyone answers, `server.elicitation_settled` after, never on another tenant's stream; the AI SDK UI
 * stream carries them as `data-elicitation` parts.
 */
import type { ToolHandler } from '@youyou/agent';
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from 'ai';
import { afterEach, expect, test } from 'vitest';
import { type HeldElicitationAnswer, type HeldElicitationChange, HeldElicitations } from '../src/index.js';
import {
  createSession,
  type Harness,
  isTurnEnd,
  readSse,
  readUntil,
  type SseMessage,
  startHarness,
  TOKENS,
} from './support/harness.js';
import { userMessage } from './support/ui-chat.js';

let harness: Harness | undefined;
const streams: AbortController[] = [];

afterEach(async () => {
  for (const stream of streams.splice(0)) stream.abort();
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
        fields: [{ name: 'colour', title: 'Colour', type: 'string', required: true }],
        signal: input.signal,
      });
      answers.push(answer);
      return { content: JSON.stringify(answer), isError: false };
    },
  };
}

const ASK_THEN_OK = [
  [
    { type: 'tool_call' as const, toolName: 'ask', callId: 'call_ask' },
    { type: 'done' as const, stopReason: 'tool_use' as const },
  ],
  [{ type: 'text' as const, text: 'ok' }],
];

/** The session's event stream (a tail) from `after`, closed when the test ends. */
async function tail(sessionId: string, as: 'alice' | 'bob', after = 0): Promise<Response> {
  const stream = new AbortController();
  streams.push(stream);
  const response = await (harness as Harness).request(`/sessions/${sessionId}/events`, {
    as,
    headers: { 'last-event-id': String(after) },
    signal: stream.signal,
  });
  expect(response.status).toBe(200);
  return response;
}

const typeOf = (message: SseMessage) => message.data.payload.type;

/** Reads messages from a stream kept open (a `for await` would close it) up to the first `stop` holds for. */
async function nextUntil(
  messages: AsyncGenerator<SseMessage>,
  stop: (message: SseMessage) => boolean,
): Promise<SseMessage[]> {
  const read: SseMessage[] = [];
  for (;;) {
    const { value, done } = await messages.next();
    if (done === true) return read;
    read.push(value);
    if (stop(value)) return read;
  }
}

/** The turn of the agent's own events among `messages`. */
const turnIdOf = (messages: SseMessage[]) =>
  messages.find((message) => !typeOf(message).startsWith('server.'))?.data.turnId;

test("a held question is announced on its session's stream before the answer and settled after; no other tenant's stream carries it", async () => {
  const held = new HeldElicitations({ windowMs: 60_000 });
  const answers: HeldElicitationAnswer[] = [];
  harness = await startHarness({
    elicitations: held,
    tools: [askingTool(held, answers)],
    responses: [...ASK_THEN_OK, [{ type: 'text', text: 'bob done' }]],
  });
  const alice = await createSession(harness);
  const bob = await createSession(harness, 'bob');
  const aliceTail = readSse(await tail(alice, 'alice'));
  const bobTail = await tail(bob, 'bob');

  const turn = await harness.request(`/sessions/${alice}/messages`, {
    method: 'POST',
    json: { content: 'ask me' },
  });
  const seen = await nextUntil(aliceTail, (message) => typeOf(message) === 'server.elicitation_held');
  const announced = seen.at(-1) as SseMessage;
  expect(announced.event).toBe('server.elicitation_held');
  const question = announced.data.payload as { type: string; id?: unknown; [key: string]: unknown } & {
    id: string;
  };
  expect(question).toMatchObject({
    server: 'docs',
    message: 'Which colour?',
    fields: [{ name: 'colour', type: 'string', required: true }],
  });
  expect(question.expiresAt).toBeGreaterThan(Date.now());
  expect(held.pending(alice).map((each) => each.id)).toEqual([question.id]);
  // The question belongs to the turn whose call asked: the turn's own stream carries it too.
  const turnEvents = readSse(turn);
  let ownAnnouncement: SseMessage | undefined;
  for await (const message of turnEvents) {
    if (typeOf(message) !== 'server.elicitation_held') continue;
    ownAnnouncement = message;
    break;
  }
  expect(ownAnnouncement?.data).toEqual(announced.data);
  expect(answers).toEqual([]);

  const answered = await harness.request(`/sessions/${alice}/elicitations/${question.id}`, {
    method: 'POST',
    json: { action: 'accept', content: { colour: 'red' } },
  });
  expect(answered.status).toBe(200);
  const after = await nextUntil(aliceTail, isTurnEnd);
  const settledAt = after.findIndex((message) => typeOf(message) === 'server.elicitation_settled');
  expect(after[settledAt]?.data.payload).toEqual({
    type: 'server.elicitation_settled',
    id: question.id,
    reason: 'answered',
    action: 'accept',
  });
  expect(settledAt).toBeLessThan(after.findIndex((message) => typeOf(message) === 'tool_call_end'));
  expect(answers).toEqual([{ action: 'accept', content: { colour: 'red' } }]);
  expect(announced.data.turnId).toBe(turnIdOf([...seen, ...after]));

  // The cursor of the announcement resumes after it: its settling comes again, the question does not.
  const resumed = await readUntil(
    await tail(alice, 'alice', Number(announced.id)),
    (message) => typeOf(message) === 'server.elicitation_settled',
  );
  expect(resumed.map(typeOf)).not.toContain('server.elicitation_held');
  expect(resumed.at(-1)?.data).toEqual(after[settledAt]?.data);

  // Bob's stream was open all along; his own turn ends it, and nothing of Alice's question came on it.
  const bobTurn = await harness.request(`/sessions/${bob}/messages`, {
    method: 'POST',
    as: 'bob',
    json: { content: 'hello' },
  });
  await readUntil(bobTurn, isTurnEnd);
  const bobSaw = await readUntil(bobTail, isTurnEnd);
  expect(bobSaw.map(typeOf)).toContain('turn_complete');
  expect(bobSaw.filter((message) => typeOf(message).startsWith('server.'))).toEqual([]);
  expect(JSON.stringify(bobSaw)).not.toContain(question.id);
});

test('a question that expires, is withdrawn or is left when the server stops is settled with that reason', async () => {
  const held = new HeldElicitations({ windowMs: 60_000 });
  const short = new HeldElicitations({ windowMs: 20 });
  const changes: HeldElicitationChange[] = [];
  held.onChange((change) => changes.push(change));
  short.onChange((change) => changes.push(change));
  const ask = (on: HeldElicitations, signal = new AbortController().signal) =>
    on.hold({ sessionId: 's1', server: 'docs', message: 'q', fields: [], signal, turnId: 't1' });
  expect(await ask(short)).toEqual({ action: 'decline' });
  const withdrawn = new AbortController();
  const cancelled = ask(held, withdrawn.signal);
  withdrawn.abort();
  expect(await cancelled).toEqual({ action: 'cancel' });
  const left = ask(held);
  held.close();
  expect(await left).toEqual({ action: 'decline' });
  const settled = changes.filter((change) => change.kind === 'settled');
  expect(settled.map(({ reason, action }) => ({ reason, action }))).toEqual([
    { reason: 'expired', action: 'decline' },
    { reason: 'withdrawn', action: 'cancel' },
    { reason: 'closed', action: 'decline' },
  ]);
  expect(changes.map((change) => change.kind)).toEqual([
    'held',
    'settled',
    'held',
    'settled',
    'held',
    'settled',
  ]);
  expect(new Set(changes.map((change) => change.turnId))).toEqual(new Set(['t1']));
});

test('the AI SDK UI stream carries the question as a data-elicitation part that its settling replaces', async () => {
  const held = new HeldElicitations({ windowMs: 60_000 });
  const answers: HeldElicitationAnswer[] = [];
  harness = await startHarness({
    elicitations: held,
    tools: [askingTool(held, answers)],
    responses: ASK_THEN_OK,
  });
  const sessionId = await createSession(harness);
  const transport = new DefaultChatTransport<UIMessage>({
    api: `${harness.url}/ui/chat`,
    headers: { authorization: `Bearer ${TOKENS.alice}` },
  });
  const stream = await transport.sendMessages({
    chatId: sessionId,
    messages: [userMessage('u1', 'ask me')],
    trigger: 'submit-message',
    messageId: undefined,
    abortSignal: undefined,
  });
  const dataParts = (message: UIMessage) =>
    message.parts.filter((part) => part.type === 'data-elicitation') as {
      id: string;
      data: Record<string, unknown>;
    }[];
  const errors: unknown[] = [];
  let answeredId: string | undefined;
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream, onError: (error) => errors.push(error) })) {
    last = message;
    const [part] = dataParts(message);
    if (part?.data.state !== 'held' || answeredId !== undefined) continue;
    expect(part.data).toMatchObject({ id: part.id, server: 'docs', message: 'Which colour?' });
    expect(answers).toEqual([]);
    answeredId = part.id;
    const answered = await harness.request(`/sessions/${sessionId}/elicitations/${part.id}`, {
      method: 'POST',
      json: { action: 'decline' },
    });
    expect(answered.status).toBe(200);
  }
  expect(errors).toEqual([]);
  expect(answeredId).toBeDefined();
  expect(dataParts(last as UIMessage)).toEqual([
    {
      type: 'data-elicitation',
      id: answeredId,
      data: { id: answeredId, state: 'settled', reason: 'answered', action: 'decline' },
    },
  ]);
  expect(answers).toEqual([{ action: 'decline' }]);
});
