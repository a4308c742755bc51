import { describe, expect, test } from 'vitest';
import {
  type Agent,
  AgentBuilder,
  type AgentConfig,
  type AgentError,
  type AgentEvent,
  type ChatRequest,
  type HookEvent,
  type HookPayload,
  isAgentError,
  type Message,
  type ModelInfo,
  type Plugin,
  type RunningTurn,
  type SessionEventPayload,
  type SessionStorage,
  type SkillDefinition,
  type ToolHandler,
  templates,
} from '../src/index.js';
import {
  InMemoryMemoryStorage,
  InMemorySessionStorage,
  ScriptedModelProvider,
  type ScriptedModelProviderOptions,
} from '../src/testing/index.js';

const NO_MEMORIES = [{ type: 'text', text: '{"memories":[]}' }] as const;

const lookup: ToolHandler = {
  name: 'lookup',
  description: 'looks a word up',
  parametersSchema: {
    type: 'object',
    properties: { q: { type: 'string' } },
    required: ['q'],
    additionalProperties: false,
  },
  isMutating: false,
  execute: async (input) => ({ content: `found ${(input.arguments as { q: string }).q}`, isError: false }),
};

const explode: ToolHandler = {
  name: 'explode',
  description: 'always fails',
  parametersSchema: { type: 'object' },
  isMutating: true,
  execute: async () => {
    throw new Error('boom');
  },
};

const review: SkillDefinition = {
  name: 'review',
  description: 'reviews a plan',
  prompt: 'Review carefully.',
};

/** A plugin that records which session hooks ran, with their payloads. */
function sessionHooksPlugin(calls: HookPayload[]): Plugin {
  const events: HookEvent[] = ['SessionStart', 'SessionEnd'];
  return {
    id: 'recorder',
    displayName: 'Recorder',
    description: 'records session hooks',
    async initialize() {},
    apply(context) {
      for (const event of events) context.tap(event, (payload) => void calls.push(payload));
    },
    async shutdown() {},
  };
}

interface Harness {
  agent: Agent;
  provider: ScriptedModelProvider;
  storage: InMemorySessionStorage;
  memory: InMemoryMemoryStorage;
  background: AgentError[];
}

async function harness(
  options: {
    script?: ScriptedModelProviderOptions;
    config?: Partial<AgentConfig>;
    models?: ModelInfo[];
    withMemory?: boolean;
    sessionStorage?: SessionStorage | null;
    plugins?: Plugin[];
  } = {},
): Promise<Harness> {
  const provider = new ScriptedModelProvider({
    ...options.script,
    ...(options.models === undefined ? {} : { models: options.models }),
  });
  const storage = new InMemorySessionStorage();
  const memory = new InMemoryMemoryStorage();
  const background: AgentError[] = [];
  const builder = new AgentBuilder({
    defaultModel: 'scripted-model',
    onBackgroundError: (error) => background.push(error),
    ...options.config,
  })
    .registerModelProvider(provider)
    .registerTool(lookup)
    .registerTool(explode)
    .registerSkill(review);
  if (options.sessionStorage !== null) builder.registerSessionStorage(options.sessionStorage ?? storage);
  if (options.withMemory) builder.registerMemoryStorage(memory);
  for (const plugin of options.plugins ?? []) builder.registerPlugin(plugin);
  return { agent: await builder.build(), provider, storage, memory, background };
}

async function collect(turn: RunningTurn): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  for await (const event of turn) events.push(event);
  return events;
}

async function readUntil(turn: RunningTurn, type: AgentEvent['payload']['type']): Promise<void> {
  for await (const event of turn) if (event.payload.type === type) return;
  throw new Error(`the turn ended without a ${type} event`);
}

/** Writes a log by hand, as another process (or a crash) would have left it. */
async function writeLog(
  storage: SessionStorage,
  sessionId: string,
  payloads: SessionEventPayload[],
): Promise<void> {
  for (const payload of payloads) await storage.saveEvent(sessionId, { timestamp: new Date(), payload });
}

function userText(text: string): SessionEventPayload {
  return { type: 'user_message', content: [{ type: 'text', text }] };
}

function assistantText(text: string): SessionEventPayload {
  return { type: 'assistant_message', content: [{ type: 'text', text }], status: 'complete' };
}

function turnRequests(provider: ScriptedModelProvider): ChatRequest[] {
  return provider.requests.filter((request) => request.purpose === 'turn');
}

function lastTurnRequest(provider: ScriptedModelProvider): ChatRequest {
  const request = turnRequests(provider).at(-1);
  if (request === undefined) throw new Error('no turn request was made');
  return request;
}

async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(isAgentError(error), `expected a rejection with ${code}`).toBe(true);
  expect(error).toMatchObject({ code });
}

const NOTICE: Message = { type: 'system', content: templates.INTERRUPTED_MESSAGE_NOTICE };

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
    expect(await third.done).toBe('cancelled');
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
    expect(lastTurnRequest(provider).systemPrompt).not.toContain('metric units');
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
    expect(lastTurnRequest(provider).systemPrompt).toContain('The user prefers metric units');
    expect(lastTurnRequest(provider).systemPromptParts.dynamic).toContain('The user prefers metric units');
    await agent.shutdown();
  });
});

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
