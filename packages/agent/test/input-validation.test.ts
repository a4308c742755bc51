import { describe, expect, test } from 'vitest';
import {
  type Agent,
  AgentBuilder,
  type AgentEvent,
  isAgentError,
  type Session,
  type UserInput,
} from '../src/index.js';
import { InMemorySessionStorage, ScriptedModelProvider, scriptedModel } from '../src/testing/index.js';

const PIXEL =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

interface Harness {
  agent: Agent;
  provider: ScriptedModelProvider;
  storage: InMemorySessionStorage;
}

/** An agent whose default model `blind` has no vision; `scripted-model` has every capability. */
async function harness(): Promise<Harness> {
  const provider = new ScriptedModelProvider({
    models: [
      scriptedModel({ id: 'blind', capabilities: { toolUse: true, vision: false, streaming: true } }),
      scriptedModel(),
    ],
    responses: [[{ type: 'text', text: 'first answer' }]],
  });
  const storage = new InMemorySessionStorage();
  const agent = await new AgentBuilder({ defaultModel: 'blind' })
    .registerModelProvider(provider)
    .registerSessionStorage(storage)
    .build();
  return { agent, provider, storage };
}

async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(isAgentError(error), `expected a rejection with ${code}`).toBe(true);
  expect(error).toMatchObject({ code });
  expect((error as Error).message.startsWith(`[${code}] `)).toBe(true);
}

async function completes(session: Session, input: UserInput | string): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of await session.sendMessage(input)) events.push(event);
  expect(events.at(-1)?.payload.type).toBe('turn_complete');
  return events;
}

/** Inputs that SPEC §5.1 (and the types) rule out; each is cast because the compiler would refuse most. */
const badInputs: [string, unknown][] = [
  ['an empty string', ''],
  ['a white-space string', ' \n\t '],
  ['no content blocks', { content: [] }],
  ['only white-space text', { content: [{ type: 'text', text: '   ' }] }],
  [
    'several white-space text blocks',
    {
      content: [
        { type: 'text', text: ' ' },
        { type: 'text', text: '\n' },
      ],
    },
  ],
  [
    'an image to a model without vision',
    { content: [{ type: 'image', data: PIXEL, mediaType: 'image/png' }] },
  ],
  [
    'text and an image to a model without vision',
    {
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'image', data: PIXEL, mediaType: 'image/png' },
      ],
    },
  ],
  ['a reasoning block', { content: [{ type: 'reasoning', text: 'I think so' }] }],
  [
    'text followed by a reasoning block',
    {
      content: [
        { type: 'text', text: 'hi' },
        { type: 'reasoning', text: 'hidden', signature: 'sig' },
      ],
    },
  ],
  ['an unknown block type', { content: [{ type: 'audio', data: 'AAAA' }] }],
  ['a block without a type', { content: [{ text: 'hi' }] }],
  ['a non-string text', { content: [{ type: 'text', text: 42 }] }],
  ['a null block', { content: [null] }],
  ['null', null],
  ['an object without content', {}],
  ['content that is not an array', { content: 'hi' }],
];

describe('sendMessage rejects bad input with INVALID_INPUT (SPEC §5.1)', () => {
  test.each(badInputs)('%s', async (_label, input) => {
    const { agent, provider, storage } = await harness();
    const session = await agent.newSession();
    await completes(session, 'hello');
    const savedBefore = await storage.loadSession(session.id);
    const messagesBefore = session.messages();
    const requestsBefore = provider.requests.length;

    await expectCode(session.sendMessage(input as UserInput), 'INVALID_INPUT');

    expect(await storage.loadSession(session.id)).toEqual(savedBefore);
    expect(session.messages()).toEqual(messagesBefore);
    expect(provider.requests).toHaveLength(requestsBefore);
    expect(session.isTurnRunning).toBe(false);

    provider.enqueue([{ type: 'text', text: 'still here' }]);
    await completes(session, 'are you still there?');
    expect(session.messages().at(-1)).toEqual({
      type: 'assistant',
      content: [{ type: 'text', text: 'still here' }],
      status: 'complete',
    });
    await agent.shutdown();
  });
});

describe('valid input is accepted and kept as the session’s own copy', () => {
  test('an image is accepted by a model with vision', async () => {
    const { agent, provider } = await harness();
    const session = await agent.newSession({ modelId: 'scripted-model' });
    await completes(session, {
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'image', data: PIXEL, mediaType: 'image/png' },
      ],
    });
    expect(provider.requests[0]?.messages[0]).toEqual({
      type: 'user',
      content: [
        { type: 'text', text: 'what is this?' },
        { type: 'image', data: PIXEL, mediaType: 'image/png' },
      ],
    });
    await agent.shutdown();
  });

  test('text with surrounding white space and an empty block beside real text are accepted', async () => {
    const { agent } = await harness();
    const session = await agent.newSession();
    await completes(session, {
      content: [
        { type: 'text', text: '' },
        { type: 'text', text: '  hi  ' },
      ],
    });
    await agent.shutdown();
  });

  test('changing the input object after sendMessage changes nothing in the session', async () => {
    const { agent, storage } = await harness();
    const session = await agent.newSession();
    const input: UserInput = { content: [{ type: 'text', text: 'original' }] };
    const turn = await session.sendMessage(input);
    const block = input.content[0];
    if (block?.type === 'text') block.text = 'changed';
    input.content.push({ type: 'text', text: 'added' });
    expect((await turn.done).status).toBe('completed');
    expect(session.messages()[0]).toEqual({ type: 'user', content: [{ type: 'text', text: 'original' }] });
    const saved = await storage.loadSession(session.id);
    expect(saved?.[1]?.payload).toEqual({
      type: 'user_message',
      content: [{ type: 'text', text: 'original' }],
      turnId: expect.any(String),
    });
    await agent.shutdown();
  });
});

describe('session calls reject bad arguments', () => {
  test('newSession with a model no provider offers → MODEL_NOT_SUPPORTED, and the slot stays free', async () => {
    const { agent } = await harness();
    await expectCode(agent.newSession({ modelId: 'gpt-unknown' }), 'MODEL_NOT_SUPPORTED');
    const session = await agent.newSession({ modelId: 'scripted-model' });
    expect(session.modelId).toBe('scripted-model');
    await agent.shutdown();
  });

  test("resumeSession('') → INVALID_INPUT, and the slot stays free", async () => {
    const { agent } = await harness();
    await expectCode(agent.resumeSession(''), 'INVALID_INPUT');
    await expectCode(agent.resumeSession(undefined as unknown as string), 'INVALID_INPUT');
    const session = await agent.newSession();
    expect(session.modelId).toBe('blind');
    await agent.shutdown();
  });
});
