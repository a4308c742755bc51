import { afterEach, describe, expect, test } from 'vitest';
import { AgentError, type HookPayload, type Session, type TokenUsage, templates } from '../src/index.js';
import { ScriptedModelProvider, type ScriptedResponse, scriptedModel } from '../src/testing/index.js';
import {
  assistantMessage,
  buildAgent,
  ControllableSessionStorage,
  defineTool,
  expectToolPairsWhole,
  hookPlugin,
  requestsOf,
  requestText,
  runTurn,
  shutdownAgents,
  storedPayloads,
  summaryOf,
  type TurnRecord,
  textChars,
  textOf,
  userMessage,
} from './support/agent-fixtures.js';

afterEach(shutdownAgents);

const WINDOW = 2_000;
/** Compaction keeps the recent messages worth about 20% of the window. */
const KEEP_TOKENS = WINDOW * 0.2;
const config = { compactThreshold: 0.5 };

/** A 400-character text: 100 tokens by the chars/4 estimate. */
const text400 = (label: string): string => label.padEnd(400, '.');

/** A model with a 2,000-token window answering every turn with 400 characters, and the given compactions. */
function growingProvider(compactions: ScriptedResponse[]): ScriptedModelProvider {
  return new ScriptedModelProvider({
    models: [scriptedModel({ contextWindow: WINDOW })],
    responses: Array.from({ length: 12 }, (_, index) => [
      { type: 'text', text: text400(`answer ${index + 1}`) },
    ]),
    byPurpose: { compaction: compactions },
  });
}

/** Runs turns `from`..`to`, each asking a 400-character question. */
async function grow(session: Session, from: number, to: number): Promise<TurnRecord[]> {
  const turns: TurnRecord[] = [];
  for (let index = from; index <= to; index += 1)
    turns.push(await runTurn(session, text400(`question ${index}`)));
  return turns;
}

describe('compaction of a grown history', () => {
  test('compacts before the model call, keeps ~20% of the window, saves the marker, resume rebuilds it', async () => {
    const storage = new ControllableSessionStorage();
    const provider = growingProvider([[{ type: 'text', text: 'SUMMARY-1' }]]);
    const { agent } = await buildAgent({ provider, config, sessionStorage: storage });
    const session = await agent.newSession();
    const early = await grow(session, 1, 5);
    expect(early.flatMap((turn) => turn.types)).not.toContain('context_compacted');
    const before = session.messages();
    const [sixth] = await grow(session, 6, 6);

    expect(sixth?.types).toEqual(['context_compacted', 'text_delta', 'turn_complete']);
    expect(provider.requests.map((request) => request.purpose)).toEqual([
      ...Array(5).fill('turn'),
      'compaction',
      'turn',
    ]);
    const [compaction] = requestsOf(provider, 'compaction');
    expect(compaction?.tools).toEqual([]);
    expect(compaction?.systemPrompt).toBe(templates.COMPACT_PROMPT);
    expect(requestText(compaction)).toContain('question 1');

    // The turn request: the summary, then the most recent messages worth about 20% of the window.
    const history = [...before, userMessage(text400('question 6'))];
    const sent = provider.requests.at(-1)?.messages ?? [];
    expect(sent[0]).toEqual(summaryOf('SUMMARY-1'));
    const kept = sent.slice(1);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept).toEqual(history.slice(-kept.length));
    expect(textChars(kept) / 4).toBeLessThanOrEqual(KEEP_TOKENS);
    expect(textChars(history.slice(-kept.length - 1)) / 4).toBeGreaterThan(KEEP_TOKENS);
    // What is kept is not summarised; everything before it is.
    const transcript = requestText(compaction);
    for (const message of kept) expect(transcript).not.toContain(textOf(message));
    for (const message of history.slice(0, -kept.length)) expect(transcript).toContain(textOf(message));

    // The marker is saved after the messages it covers, before the answer.
    const saved = await storedPayloads(storage, session.id);
    const marker = saved.findIndex((payload) => payload.type === 'metadata' && payload.key === 'compaction');
    expect(saved[marker]).toEqual({
      type: 'metadata',
      key: 'compaction',
      value: { summary: 'SUMMARY-1', keptMessages: kept.length },
    });
    expect(saved[marker - 1]).toEqual({
      type: 'user_message',
      content: [{ type: 'text', text: text400('question 6') }],
      turnId: expect.any(String),
    });
    expect(saved[marker + 1]).toMatchObject({ type: 'assistant_message' });

    const live = session.messages();
    expect(live[0]).toEqual(summaryOf('SUMMARY-1'));
    await session.close();
    const resumed = await agent.resumeSession(session.id);
    expect(resumed.messages()).toEqual(live);
  });

  test('an earlier summary is summarised again, never kept beside the new one', async () => {
    const provider = growingProvider([
      [{ type: 'text', text: 'SUMMARY-1' }],
      [{ type: 'text', text: 'SUMMARY-2' }],
    ]);
    const { agent } = await buildAgent({ provider, config });
    const session = await agent.newSession();
    const turns = await grow(session, 1, 9);

    const compactions = requestsOf(provider, 'compaction');
    expect(compactions).toHaveLength(2);
    expect(requestText(compactions[1])).toContain('SUMMARY-1');
    expect(turns.flatMap((turn) => turn.types).filter((type) => type === 'context_compacted')).toHaveLength(
      2,
    );
    const summaries = session
      .messages()
      .filter(
        (message) =>
          message.type === 'system' && message.content.startsWith(templates.COMPACT_SUMMARY_PREFIX),
      );
    expect(summaries).toEqual([summaryOf('SUMMARY-2')]);
    expect(session.messages()[0]).toEqual(summaryOf('SUMMARY-2'));
  });

  test('a tool_call is never separated from its tool_result', async () => {
    const lookup = defineTool({
      name: 'lookup',
      execute: () => ({ content: 'r'.repeat(1_200), isError: false }),
    });
    const provider = new ScriptedModelProvider({
      models: [scriptedModel({ contextWindow: WINDOW })],
      responses: [
        ...[1, 2, 3].map((index) => [{ type: 'text' as const, text: text400(`answer ${index}`) }]),
        [{ type: 'tool_call', toolName: 'lookup', callId: 'k1' }],
        [{ type: 'text', text: 'a'.repeat(200) }],
        [{ type: 'text', text: 'final' }],
      ],
      byPurpose: { compaction: [[{ type: 'text', text: 'SUMMARY-1' }]] },
    });
    const { agent } = await buildAgent({ provider, config, tools: [lookup] });
    const session = await agent.newSession();
    await grow(session, 1, 3);
    await runTurn(session, 'q'.repeat(100));
    const last = await runTurn(session, 'z'.repeat(195));

    expect(last.types[0]).toBe('context_compacted');
    const sent = provider.requests.at(-1)?.messages ?? [];
    expect(sent[0]).toEqual(summaryOf('SUMMARY-1'));
    expectToolPairsWhole(sent);
    expectToolPairsWhole(session.messages());
    // The sizes put the 20% boundary between tool_call k1 and its 1,200-character result: the pair is
    // either kept whole or summarised whole.
    const transcript = requestText(requestsOf(provider, 'compaction')[0]);
    const pairKept = sent.some((message) => message.type === 'tool_call');
    expect(transcript.includes('[tool call lookup #k1]')).toBe(!pairKept);
    expect(transcript.includes('[tool result #k1]')).toBe(!pairKept);
    expect(sent.slice(-2)).toEqual([assistantMessage('a'.repeat(200)), userMessage('z'.repeat(195))]);
  });
});

describe('compaction between tool rounds (SPEC §5.11)', () => {
  /** Three 400-character turns, then a turn whose tool returns `resultChars` characters. */
  async function toolRoundCompaction(resultChars: number) {
    const lookup = defineTool({
      name: 'lookup',
      execute: () => ({ content: 'r'.repeat(resultChars), isError: false }),
    });
    const provider = new ScriptedModelProvider({
      models: [scriptedModel({ contextWindow: WINDOW })],
      responses: [
        ...[1, 2, 3].map((index) => [{ type: 'text' as const, text: text400(`answer ${index}`) }]),
        [{ type: 'tool_call', toolName: 'lookup', callId: 'k1' }],
        [{ type: 'text', text: 'final' }],
      ],
      byPurpose: { compaction: [[{ type: 'text', text: 'SUMMARY-1' }]] },
    });
    const { agent } = await buildAgent({ provider, config, tools: [lookup] });
    const session = await agent.newSession();
    await grow(session, 1, 3);
    const turn = await runTurn(session, text400('question 4'));
    return { provider, turn, sent: provider.requests.at(-1)?.messages ?? [] };
  }

  test('the check runs before the second call of a turn; the tool pair is kept whole', async () => {
    const { provider, turn, sent } = await toolRoundCompaction(1_200);

    expect(turn.types).toEqual([
      'tool_call_start',
      'tool_call_end',
      'context_compacted',
      'text_delta',
      'turn_complete',
    ]);
    expect(provider.requests.map((request) => request.purpose)).toEqual([
      ...Array(4).fill('turn'),
      'compaction',
      'turn',
    ]);
    expect(sent[0]).toEqual(summaryOf('SUMMARY-1'));
    expect(sent.slice(-2)).toMatchObject([
      { type: 'tool_call', callId: 'k1' },
      { type: 'tool_result', callId: 'k1' },
    ]);
  });

  test('a tool result larger than the kept share does not leave the model with the summary alone', async () => {
    const { turn, sent } = await toolRoundCompaction(2_400);

    expect(turn.types).toContain('context_compacted');
    expect(sent[0]).toEqual(summaryOf('SUMMARY-1'));
    // A request of one system message has nothing to answer (and an empty message list is refused by
    // the Messages APIs); the latest tool pair, or at least the turn's user message, should follow it.
    expect(sent.filter((message) => message.type !== 'system').length).toBeGreaterThan(0);
    expectToolPairsWhole(sent);
  });
});

describe('BeforeCompact', () => {
  test('data is { messageCount, estimatedTokens, contextWindow }; abort skips the compaction', async () => {
    const seen: HookPayload[] = [];
    const plugin = hookPlugin({
      id: 'keeper',
      hooks: {
        BeforeCompact: (payload) => {
          seen.push(payload);
          return { type: 'abort', reason: 'keep it all' };
        },
      },
    });
    const provider = growingProvider([[{ type: 'text', text: 'SUMMARY-1' }]]);
    const { agent } = await buildAgent({ provider, config, plugins: [plugin] });
    const session = await agent.newSession();
    const turns = await grow(session, 1, 6);

    expect(seen).toHaveLength(1);
    const data = seen[0]?.data as { messageCount: number; estimatedTokens: number; contextWindow: number };
    expect(data.contextWindow).toBe(WINDOW);
    expect(data.messageCount).toBe(11);
    expect(data.estimatedTokens).toBeGreaterThan(WINDOW * 0.5);
    expect(data.estimatedTokens).toBeGreaterThanOrEqual(Math.ceil(11 * 400) / 4);
    expect(requestsOf(provider, 'compaction')).toHaveLength(0);
    expect(turns.flatMap((turn) => turn.types)).not.toContain('context_compacted');
    expect(provider.requests.at(-1)?.messages).toHaveLength(11);
    expect(turns.at(-1)?.types.at(-1)).toBe('turn_complete');
  });
});

describe('failures and retries', () => {
  test('a failing compaction request: COMPACT_ERROR and the turn goes on with the full history', async () => {
    const provider = growingProvider([[{ type: 'error', error: new Error('compactor down') }]]);
    const { agent } = await buildAgent({ provider, config });
    const session = await agent.newSession();
    const turns = await grow(session, 1, 6);
    const sixth = turns.at(-1);

    expect(sixth?.types).toEqual(['error', 'text_delta', 'turn_complete']);
    expect(sixth?.errors[0]?.code).toBe('COMPACT_ERROR');
    expect(provider.requests.at(-1)?.purpose).toBe('turn');
    expect(provider.requests.at(-1)?.messages).toHaveLength(11);
  });

  test('a context-length error from the turn call: compaction, then the call is sent once more', async () => {
    const tooLong = new AgentError({
      code: 'PROVIDER_ERROR',
      message: 'prompt too long',
      contextLengthExceeded: true,
    });
    const provider = new ScriptedModelProvider({
      responses: [
        [{ type: 'text', text: 'hello' }],
        [{ type: 'error', error: tooLong }],
        [{ type: 'text', text: 'ok' }],
      ],
      byPurpose: { compaction: [[{ type: 'text', text: 'SUMMARY-1' }]] },
    });
    const { agent } = await buildAgent({ provider });
    const session = await agent.newSession();
    await runTurn(session, 'hi');
    const turn = await runTurn(session, 'again');

    expect(provider.requests.map((request) => request.purpose)).toEqual([
      'turn',
      'turn',
      'compaction',
      'turn',
    ]);
    expect(turn.types).toEqual(['context_compacted', 'text_delta', 'turn_complete']);
    expect(provider.requests.at(-1)?.messages[0]).toEqual(summaryOf('SUMMARY-1'));
  });

  test('a second context-length error is reported, not retried again', async () => {
    const tooLong = () =>
      new AgentError({ code: 'PROVIDER_ERROR', message: 'prompt too long', contextLengthExceeded: true });
    const provider = new ScriptedModelProvider({
      responses: [
        [{ type: 'text', text: 'hello' }],
        [{ type: 'error', error: tooLong() }],
        [{ type: 'error', error: tooLong() }],
      ],
      byPurpose: {
        compaction: [[{ type: 'text', text: 'SUMMARY-1' }], [{ type: 'text', text: 'SUMMARY-2' }]],
      },
    });
    const { agent } = await buildAgent({ provider });
    const session = await agent.newSession();
    await runTurn(session, 'hi');
    const turn = await runTurn(session, 'again');

    expect(provider.requests.map((request) => request.purpose)).toEqual([
      'turn',
      'turn',
      'compaction',
      'turn',
    ]);
    expect(turn.types).toEqual(['context_compacted', 'error', 'turn_complete']);
    expect(turn.errors[0]?.code).toBe('PROVIDER_ERROR');
  });
});

describe('token accounting', () => {
  test.each<[string, TokenUsage]>([
    ['input tokens', { inputTokens: 1_500, outputTokens: 3 }],
    ['cached input tokens', { inputTokens: 1_510, cachedInputTokens: 1_500, outputTokens: 3 }],
  ])('a large reported usage (%s) triggers compaction although the text is small', async (_what, usage) => {
    const provider = new ScriptedModelProvider({
      models: [scriptedModel({ contextWindow: WINDOW })],
      responses: [
        [
          { type: 'text', text: 'hello' },
          { type: 'usage', usage },
        ],
        [{ type: 'text', text: 'ok' }],
      ],
      byPurpose: { compaction: [[{ type: 'text', text: 'SUMMARY-1' }]] },
    });
    const { agent } = await buildAgent({ provider, config });
    const session = await agent.newSession();
    await runTurn(session, 'hi');
    const turn = await runTurn(session, 'again');

    expect(provider.requests.map((request) => request.purpose)).toEqual(['turn', 'compaction', 'turn']);
    expect(turn.types[0]).toBe('context_compacted');
  });

  test('a small reported usage prevents compaction although the chars estimate exceeds the threshold', async () => {
    const usage = { inputTokens: 60, cachedInputTokens: 40, outputTokens: 50 };
    const provider = new ScriptedModelProvider({
      models: [scriptedModel({ contextWindow: WINDOW })],
      responses: [
        [
          { type: 'text', text: 'b'.repeat(200) },
          { type: 'usage', usage },
        ],
        [{ type: 'text', text: 'ok' }],
      ],
      byPurpose: { compaction: [[{ type: 'text', text: 'SUMMARY-1' }]] },
    });
    const { agent } = await buildAgent({ provider, config });
    const session = await agent.newSession();
    await runTurn(session, 'a'.repeat(3_000));
    const turn = await runTurn(session, 'c'.repeat(1_000));

    expect(textChars(session.messages()) / 4).toBeGreaterThan(WINDOW * 0.5);
    expect(provider.requests.map((request) => request.purpose)).toEqual(['turn', 'turn']);
    expect(turn.types).not.toContain('context_compacted');
  });
});

describe('the compaction request', () => {
  test('uses compactModel and compactPrompt, purpose compaction, no tools', async () => {
    const provider = new ScriptedModelProvider({
      models: [scriptedModel({ id: 'main', contextWindow: WINDOW }), scriptedModel({ id: 'compactor' })],
      responses: [
        [
          { type: 'text', text: 'hello' },
          { type: 'usage', usage: { inputTokens: 1_500, outputTokens: 1 } },
        ],
        [{ type: 'text', text: 'ok' }],
      ],
      byPurpose: { compaction: [[{ type: 'text', text: 'SUMMARY-1' }]] },
    });
    const { agent } = await buildAgent({
      provider,
      tools: [defineTool({ name: 'look' })],
      config: {
        ...config,
        defaultModel: 'main',
        compactModel: 'compactor',
        compactPrompt: 'Summarise tersely.',
      },
    });
    const session = await agent.newSession();
    await runTurn(session, 'hi');
    await runTurn(session, 'again');

    const [compaction] = requestsOf(provider, 'compaction');
    expect(compaction).toMatchObject({ modelId: 'compactor', purpose: 'compaction', tools: [] });
    expect(compaction?.systemPrompt).toBe('Summarise tersely.');
    expect(compaction?.messages).toHaveLength(1);
    expect(requestsOf(provider, 'turn').map((request) => request.modelId)).toEqual(['main', 'main']);
    expect(requestsOf(provider, 'turn')[1]?.tools.map((tool) => tool.name)).toEqual(['look']);
  });
});
