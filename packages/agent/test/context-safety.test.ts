import { afterEach, describe, expect, test } from 'vitest';
import type { Message } from '../src/index.js';
import {
  InMemorySessionStorage,
  requestTokens,
  ScriptedModelProvider,
  type ScriptedResponse,
  scriptedModel,
} from '../src/testing/index.js';
import {
  buildAgent,
  defineTool,
  requestsOf,
  requestText,
  runTurn,
  shutdownAgents,
  storedPayloads,
} from './support/agent-fixtures.js';
import { writeLog } from './support/resume-fixtures.js';

afterEach(shutdownAgents);

const WINDOW = 128_000;
const GIANT = 900_000;

/** A 900,000-character output: numbered lines, so head, tail and cut are all recognisable. */
function giantOutput(chars = GIANT): string {
  let text = '';
  for (let line = 1; text.length < chars; line += 1) text += `line ${line} ${'x'.repeat(60)}\n`;
  return text.slice(0, chars);
}

const text = (value: string): ScriptedResponse => [{ type: 'text', text: value }];

/** A provider with a 128k window that rejects any request over it, as a real API does. */
function strictProvider(options: { window?: number; responses: ScriptedResponse[]; summaries?: number }) {
  return new ScriptedModelProvider({
    models: [scriptedModel({ contextWindow: options.window ?? WINDOW })],
    enforceContextWindow: true,
    responses: options.responses,
    byPurpose: {
      compaction: Array.from({ length: options.summaries ?? 10 }, (_, index) => text(`SUMMARY ${index + 1}`)),
    },
  });
}

function resultsOf(messages: readonly Message[]): Extract<Message, { type: 'tool_result' }>[] {
  return messages.flatMap((message) => (message.type === 'tool_result' ? [message] : []));
}

describe('the wedge: one giant tool result', () => {
  test('a 900,000-character result in a 128k window: the turn and the next three complete; resume sees the same context', async () => {
    const storage = new InMemorySessionStorage();
    const output = giantOutput();
    const provider = strictProvider({
      responses: [
        [{ type: 'tool_call', toolName: 'dump', callId: 'dump-1' }],
        text('read it'),
        text('answer 2'),
        text('answer 3'),
        text('answer 4'),
      ],
    });
    const dump = defineTool({ name: 'dump', execute: () => ({ content: output, isError: false }) });
    const { agent } = await buildAgent({ provider, tools: [dump], sessionStorage: storage });
    const session = await agent.newSession();

    const first = await runTurn(session, 'dump everything');
    expect(first.errors).toEqual([]);
    expect(first.types.at(-1)).toBe('turn_complete');
    // The host gets the whole output; the context holds it cut to a quarter of the window, head and tail.
    const end = first.payloads.find((payload) => payload.type === 'tool_call_end');
    expect(end?.type === 'tool_call_end' && end.output.content).toBe(output);
    const [result] = resultsOf(session.messages());
    expect(result?.content.length).toBeLessThan(WINDOW * 4 * 0.25 + 1_000);
    expect(result?.content.startsWith(output.slice(0, 10_000))).toBe(true);
    expect(result?.content.endsWith(output.slice(-10_000))).toBe(true);
    expect(result?.content).toMatch(/\d+ of 900000 characters/);

    for (const answer of ['answer 2', 'answer 3', 'answer 4']) {
      const turn = await runTurn(session, 'go on');
      expect(turn.errors).toEqual([]);
      expect(turn.payloads).toContainEqual({ type: 'text_delta', text: answer });
    }
    for (const request of provider.requests) expect(requestTokens(request)).toBeLessThanOrEqual(WINDOW);

    // The log holds what the context held (the cut text), so a resume rebuilds the same view.
    const saved = (await storedPayloads(storage, session.id)).find(
      (payload) => payload.type === 'tool_result',
    );
    expect(saved?.type === 'tool_result' && saved.content).toBe(result?.content);
    const live = session.messages();
    await session.close();
    const resumed = await agent.resumeSession(session.id);
    expect(resumed.messages()).toEqual(live);
  });

  test('an old log holding a 900,000-character result: compaction never sends it whole and the turns go on', async () => {
    const storage = new InMemorySessionStorage();
    const output = giantOutput();
    await writeLog(storage, 'old', [
      { type: 'user_message', content: [{ type: 'text', text: 'dump it' }] },
      { type: 'tool_call', callId: 'c1', toolName: 'dump', arguments: {} },
      { type: 'tool_result', callId: 'c1', content: output, isError: false },
    ]);
    const provider = strictProvider({ responses: [text('one'), text('two'), text('three')] });
    const { agent } = await buildAgent({ provider, sessionStorage: storage });
    const session = await agent.resumeSession('old');
    for (const answer of ['one', 'two', 'three']) {
      const turn = await runTurn(session, 'and now?');
      expect(turn.errors).toEqual([]);
      expect(turn.payloads).toContainEqual({ type: 'text_delta', text: answer });
    }
    expect(requestsOf(provider, 'compaction').length).toBeGreaterThan(0);
    for (const request of provider.requests) {
      expect(requestTokens(request)).toBeLessThanOrEqual(WINDOW);
      expect(requestText(request)).not.toContain(output);
    }
    const live = session.messages();
    await session.close();
    expect((await agent.resumeSession('old')).messages()).toEqual(live);
  });

  test('a result kept by a compaction is cut to half the window; the marker says so and resume cuts the same', async () => {
    const storage = new InMemorySessionStorage();
    const output = giantOutput();
    const provider = strictProvider({
      responses: [[{ type: 'tool_call', toolName: 'dump', callId: 'dump-1' }], text('seen'), text('next')],
    });
    const dump = defineTool({ name: 'dump', execute: () => ({ content: output, isError: false }) });
    const { agent } = await buildAgent({
      provider,
      tools: [dump],
      sessionStorage: storage,
      // The whole window for one result: only the compaction can bring it down.
      config: { maxToolResultShare: 1 },
    });
    const session = await agent.newSession();
    const turn = await runTurn(session, 'dump everything');
    expect(turn.errors).toEqual([]);
    expect(turn.types).toContain('context_compacted');
    expect((await runTurn(session, 'next')).errors).toEqual([]);
    const [result] = resultsOf(session.messages());
    expect(result?.content.length).toBeLessThanOrEqual(WINDOW * 4 * 0.5 + 1_000);
    expect(result?.content).toMatch(/characters were cut/);
    for (const request of provider.requests) {
      expect(requestTokens(request)).toBeLessThanOrEqual(WINDOW);
      expect(requestText(request)).not.toContain(output);
    }
    const marker = (await storedPayloads(storage, session.id)).find(
      (payload) => payload.type === 'metadata' && payload.key === 'compaction',
    );
    expect(marker?.type === 'metadata' && marker.value).toMatchObject({
      messageLimitChars: WINDOW * 4 * 0.5,
    });
    const live = session.messages();
    await session.close();
    expect((await agent.resumeSession(session.id)).messages()).toEqual(live);
  });

  test('a user message larger than the window enters cut, with a notice, and is saved as it entered', async () => {
    const storage = new InMemorySessionStorage();
    const provider = strictProvider({ window: 8_000, responses: [text('got it'), text('again')] });
    const { agent } = await buildAgent({ provider, sessionStorage: storage });
    const session = await agent.newSession();
    const huge = giantOutput(3_000_000);
    const turn = await runTurn(session, huge);
    expect(turn.errors).toEqual([]);
    expect(turn.payloads).toContainEqual({ type: 'text_delta', text: 'got it' });
    const [user] = session.messages();
    const sent = user?.type === 'user' && user.content[0]?.type === 'text' ? user.content[0].text : '';
    expect(sent.length).toBeLessThanOrEqual(8_000 * 4 * 0.5 + 1_000);
    expect(sent.startsWith(huge.slice(0, 1_000))).toBe(true);
    expect(sent.endsWith(huge.slice(-1_000))).toBe(true);
    expect(sent).toMatch(/characters were cut/);
    expect((await runTurn(session, 'more')).errors).toEqual([]);
    for (const request of provider.requests) expect(requestTokens(request)).toBeLessThanOrEqual(8_000);
    const saved = (await storedPayloads(storage, session.id)).find(
      (payload) => payload.type === 'user_message',
    );
    expect(saved?.type === 'user_message' && saved.content).toEqual(user?.type === 'user' && user.content);
  });

  test('maxToolResultShare sets the cut: 0.05 of the window keeps ~6,400 tokens', async () => {
    const output = giantOutput(100_000);
    const provider = strictProvider({
      responses: [[{ type: 'tool_call', toolName: 'dump' }], text('done')],
    });
    const dump = defineTool({ name: 'dump', execute: () => ({ content: output, isError: false }) });
    const { agent } = await buildAgent({ provider, tools: [dump], config: { maxToolResultShare: 0.05 } });
    const session = await agent.newSession();
    expect((await runTurn(session, 'dump')).errors).toEqual([]);
    const [result] = resultsOf(session.messages());
    expect(result?.content.length).toBeGreaterThan(WINDOW * 4 * 0.04);
    expect(result?.content.length).toBeLessThan(WINDOW * 4 * 0.05 + 1_000);
  });
});

describe('pruning old tool results', () => {
  /** Each turn calls `read` once (an 8,021-character result) and answers; the window is 12,000 tokens. */
  function readingProvider(turns: number): ScriptedModelProvider {
    const responses: ScriptedResponse[] = [];
    for (let index = 1; index <= turns; index += 1) {
      responses.push([
        { type: 'tool_call', toolName: 'read', callId: `read-${index}`, arguments: { n: index } },
      ]);
      responses.push(text(`answer ${index}`));
    }
    return strictProvider({ window: 12_000, responses });
  }

  test('results before the last two turns become stubs before any summary; resume rebuilds the stubs', async () => {
    const storage = new InMemorySessionStorage();
    const provider = readingProvider(6);
    const read = defineTool({
      name: 'read',
      execute: ({ arguments: args }) => ({
        content: `first line of read ${(args as { n: number }).n}\n${'r'.repeat(8_000)}`,
        isError: false,
      }),
    });
    const { agent } = await buildAgent({ provider, tools: [read], sessionStorage: storage });
    const session = await agent.newSession();
    const types: string[] = [];
    for (let index = 1; index <= 6; index += 1) {
      const turn = await runTurn(session, `read ${index}`);
      expect(turn.errors).toEqual([]);
      types.push(...turn.types);
    }
    expect(types).toContain('context_compacted');
    // Pruning alone was enough: no summary was asked for.
    expect(requestsOf(provider, 'compaction')).toEqual([]);
    const results = resultsOf(session.messages());
    const stubs = results.filter((result) => result.content.startsWith('[Old tool result cleared'));
    expect(stubs.length).toBeGreaterThan(0);
    expect(stubs[0]?.content).toContain('read({"n":1})');
    expect(stubs[0]?.content).toContain('first line of read 1');
    expect(stubs[0]?.content).toContain('8021 characters');
    // The results of the last two turns are whole.
    expect(results.at(-1)?.content.length).toBe(8_021);
    const saved = await storedPayloads(storage, session.id);
    expect(saved.some((payload) => payload.type === 'metadata' && payload.key === 'context_pruned')).toBe(
      true,
    );
    const live = session.messages();
    await session.close();
    expect((await agent.resumeSession(session.id)).messages()).toEqual(live);
  });
});

describe('Session.compact and autoCompact', () => {
  test('compact(instructions) summarises now, the instructions reach the request, the next turn sees the summary', async () => {
    const storage = new InMemorySessionStorage();
    const provider = strictProvider({ responses: [text('a1'), text('a2'), text('a3')] });
    const { agent } = await buildAgent({ provider, sessionStorage: storage });
    const session = await agent.newSession();
    await runTurn(session, 'first question');
    await runTurn(session, 'second question');
    const events = await session.compact('keep the names of files');
    expect(events.map((event) => event.payload.type)).toEqual(['context_compacted']);
    const [request] = requestsOf(provider, 'compaction');
    expect(request?.systemPrompt).toContain('keep the names of files');
    expect(requestText(request)).toContain('first question');
    expect(session.messages()[0]?.type).toBe('system');
    await runTurn(session, 'third');
    expect(JSON.stringify(provider.requests.at(-1)?.messages)).toContain('SUMMARY 1');
    const live = session.messages();
    await session.close();
    expect((await agent.resumeSession(session.id)).messages()).toEqual(live);
  });

  test('compact rejects with TURN_BUSY during a turn, SESSION_CLOSED after close, COMPACT_ERROR when the model fails', async () => {
    const provider = new ScriptedModelProvider({
      responses: [
        text('a1'),
        [
          { type: 'delay', ms: 50 },
          { type: 'text', text: 'slow' },
        ],
      ],
      byPurpose: { compaction: [[{ type: 'error', error: new Error('summariser down') }]] },
    });
    const { agent } = await buildAgent({ provider });
    const session = await agent.newSession();
    await expect(session.compact()).rejects.toMatchObject({ code: 'COMPACT_ERROR' });
    await runTurn(session, 'hello');
    const before = session.messages();
    await expect(session.compact()).rejects.toMatchObject({ code: 'COMPACT_ERROR' });
    expect(session.messages()).toEqual(before);
    const turn = await session.sendMessage('slow one');
    await expect(session.compact()).rejects.toMatchObject({ code: 'TURN_BUSY' });
    await turn.done;
    await session.close();
    await expect(session.compact()).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
  });

  test('a turn cannot start while compact runs', async () => {
    const provider = new ScriptedModelProvider({
      responses: [text('a1')],
      byPurpose: {
        compaction: [
          [
            { type: 'delay', ms: 50 },
            { type: 'text', text: 'S' },
          ],
        ],
      },
    });
    const { agent } = await buildAgent({ provider });
    const session = await agent.newSession();
    await runTurn(session, 'hello');
    const compacting = session.compact();
    await expect(session.sendMessage('now')).rejects.toMatchObject({ code: 'TURN_BUSY' });
    await compacting;
  });

  test('autoCompact: false never compacts, even over the threshold', async () => {
    const provider = new ScriptedModelProvider({
      models: [scriptedModel({ contextWindow: 1_000 })],
      responses: [text('a'.repeat(2_000)), text('b'.repeat(2_000)), text('c')],
    });
    const { agent } = await buildAgent({ provider, config: { autoCompact: false } });
    const session = await agent.newSession();
    for (const question of ['q1', 'q2', 'q3']) {
      const turn = await runTurn(session, question);
      expect(turn.types).not.toContain('context_compacted');
    }
    expect(requestsOf(provider, 'compaction')).toEqual([]);
  });
});
