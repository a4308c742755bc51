import { describe, expect, test } from 'vitest';
import {
  type AgentEvent,
  type AgentEventPayload,
  agentTool,
  type ChatRequest,
  type ModelProvider,
  type RunningTurn,
  subagentLinksOf,
  subagentParentOf,
  type ToolHandler,
} from '../src/index.js';
import { ScriptedModelProvider, type ScriptedResponse, scriptedModel } from '../src/testing/index.js';
import { collect, deferred, expectCode, gateTool, harness, readUntil } from './support/session-fixtures.js';
import { pauseAt, pausingProvider } from './support/steering-fixtures.js';

/**
 * One provider for the parent and its sub-agents: a request goes to the script of the first name whose
 * instructions its system prompt holds (`main` otherwise), so concurrent children keep their own scripts.
 */
function routedProvider(scripts: Record<string, ScriptedResponse[]>): {
  provider: ModelProvider;
  requests: Record<string, ChatRequest[]>;
} {
  const providers = new Map(
    Object.entries(scripts).map(([name, responses]) => [name, new ScriptedModelProvider({ responses })]),
  );
  const requests: Record<string, ChatRequest[]> = {};
  const main = providers.get('main') as ScriptedModelProvider;
  return {
    requests,
    provider: {
      id: main.id,
      models: main.models,
      chat(request, signal) {
        let name = 'main';
        for (const candidate of providers.keys()) {
          if (candidate !== 'main' && request.systemPrompt.includes(`[${candidate}]`)) name = candidate;
        }
        const list = requests[name] ?? [];
        list.push(request);
        requests[name] = list;
        return (providers.get(name) as ScriptedModelProvider).chat(request, signal);
      },
    },
  };
}

function researcher(overrides: Partial<Parameters<typeof agentTool>[0]> = {}): ToolHandler {
  return agentTool({
    name: 'researcher',
    description: 'researches a question',
    instructions: '[researcher] You research questions and answer in one line.',
    tools: ['lookup'],
    ...overrides,
  });
}

const lookup: ToolHandler = {
  name: 'lookup',
  description: 'looks a word up',
  parametersSchema: { type: 'object', properties: { word: { type: 'string' } } },
  isMutating: false,
  async execute() {
    return { content: 'a fruit', isError: false };
  },
};

const writeFile: ToolHandler = {
  name: 'write_file',
  description: 'writes',
  parametersSchema: { type: 'object' },
  isMutating: true,
  async execute() {
    return { content: 'written', isError: false };
  },
};

/** A payload as a short line: nested sub-agent events as `subagent>type`. */
function shape(payload: AgentEventPayload): string {
  return payload.type === 'subagent' ? `subagent>${shape(payload.event)}` : payload.type;
}

function shapes(events: readonly AgentEvent[]): string[] {
  return events.map((event) => shape(event.payload));
}

describe('sub-agents (agentTool)', () => {
  test('the child runs with its own prompt, context and tools; its events arrive wrapped, in order', async () => {
    const { provider, requests } = routedProvider({
      main: [
        [
          {
            type: 'tool_call',
            toolName: 'researcher',
            arguments: { task: 'what is a mango?' },
            callId: 'c1',
          },
        ],
        [{ type: 'text', text: 'A mango is a fruit.' }],
      ],
      researcher: [
        [{ type: 'tool_call', toolName: 'lookup', arguments: { word: 'mango' }, callId: 'k1' }],
        [
          { type: 'text', text: 'It is a fruit.' },
          { type: 'usage', usage: { inputTokens: 30, outputTokens: 5, cachedInputTokens: 10 } },
        ],
      ],
    });
    const { agent, storage } = await harness({
      provider,
      config: { systemInstructions: ['[main] You are the main agent.'] },
      tools: [lookup, writeFile, researcher()],
    });
    const session = await agent.newSession();
    const events = await collect(await session.sendMessage('Tell me about mangos'));
    expect(shapes(events)).toEqual([
      'tool_call_start',
      'subagent>tool_call_start',
      'subagent>tool_call_end',
      'subagent>text_delta',
      'subagent>usage',
      'subagent>turn_complete',
      'tool_call_end',
      'text_delta',
      'turn_complete',
    ]);
    const wrapped = events.filter((event) => event.payload.type === 'subagent');
    const childIds = new Set(
      wrapped.map((event) => (event.payload.type === 'subagent' ? event.payload.sessionId : '')),
    );
    expect(childIds.size).toBe(1);
    const childId = [...childIds][0] as string;
    expect(childId).not.toBe(session.id);
    for (const event of wrapped) {
      expect(event.sessionId).toBe(session.id);
      expect(event.payload).toMatchObject({ type: 'subagent', callId: 'c1' });
    }
    const end = events.find((event) => event.payload.type === 'tool_call_end');
    expect(end?.payload).toMatchObject({
      output: { content: 'It is a fruit.', isError: false },
      success: true,
    });
    // Own prompt (not the parent's instructions), own context (the task only), the named tools only.
    const child = requests.researcher ?? [];
    expect(child[0]?.systemPrompt).toContain('[researcher]');
    expect(child[0]?.systemPrompt).not.toContain('[main]');
    expect(child[0]?.messages).toEqual([
      { type: 'user', content: [{ type: 'text', text: 'what is a mango?' }] },
    ]);
    expect(child[0]?.tools.map((tool) => tool.name)).toEqual(['lookup']);
    // The child session is persisted and linked both ways.
    const childLog = (await storage.loadSession(childId)) ?? [];
    expect(subagentParentOf(childLog)).toEqual({ sessionId: session.id, callId: 'c1' });
    expect(childLog.map((event) => event.payload.type)).toEqual([
      'metadata',
      'metadata',
      'user_message',
      'tool_call',
      'tool_result',
      'metadata', // the usage of the call that answered
      'assistant_message',
    ]);
    expect(subagentLinksOf((await storage.loadSession(session.id)) ?? [])).toEqual([
      { callId: 'c1', toolName: 'researcher', sessionId: childId },
    ]);
    await agent.shutdown();
  });

  test("a child's usage and its own sub-agents' roll up into the wrapper of its terminal event", async () => {
    const nested = agentTool({
      name: 'checker',
      description: 'checks',
      instructions: '[checker] You check.',
    });
    const { provider } = routedProvider({
      main: [
        [{ type: 'tool_call', toolName: 'researcher', arguments: { task: 'go' }, callId: 'c1' }],
        [{ type: 'text', text: 'done' }],
      ],
      researcher: [
        [
          { type: 'tool_call', toolName: 'checker', arguments: { task: 'check' }, callId: 'g1' },
          { type: 'usage', usage: { inputTokens: 100, outputTokens: 10 } },
        ],
        [
          { type: 'text', text: 'checked' },
          { type: 'usage', usage: { inputTokens: 120, outputTokens: 4 } },
        ],
      ],
      checker: [
        [
          { type: 'text', text: 'ok' },
          { type: 'usage', usage: { inputTokens: 7, outputTokens: 4, reasoningTokens: 3 } },
        ],
      ],
    });
    const { agent, storage } = await harness({
      provider,
      tools: [lookup, nested, researcher({ tools: ['checker'] })],
    });
    const session = await agent.newSession();
    const events = await collect(await session.sendMessage('go'));
    // The child's and the grandchild's own `usage` events arrive wrapped, like the rest of their events.
    expect(shapes(events)).toEqual([
      'tool_call_start',
      'subagent>usage',
      'subagent>tool_call_start',
      'subagent>subagent>text_delta',
      'subagent>subagent>usage',
      'subagent>subagent>turn_complete',
      'subagent>tool_call_end',
      'subagent>text_delta',
      'subagent>usage',
      'subagent>turn_complete',
      'tool_call_end',
      'text_delta',
      'turn_complete',
    ]);
    const payloads = events.map((event) => event.payload);
    const grandchild = payloads.find(
      (payload) =>
        payload.type === 'subagent' &&
        payload.event.type === 'subagent' &&
        payload.event.event.type === 'turn_complete',
    );
    // Only the wrapper of a terminal event carries usage; this one wraps the child's `subagent` event.
    expect(grandchild !== undefined && 'usage' in grandchild).toBe(false);
    expect(grandchild).toMatchObject({
      event: { usage: { inputTokens: 7, outputTokens: 4, reasoningTokens: 3, modelCalls: 1 } },
    });
    const child = payloads.find(
      (payload) => payload.type === 'subagent' && payload.event.type === 'turn_complete',
    );
    // The child's own two calls and the grandchild's one.
    expect(child).toMatchObject({
      usage: { inputTokens: 227, outputTokens: 18, reasoningTokens: 3, cachedInputTokens: 0, modelCalls: 3 },
    });
    // The calling turn's totals (and the session's) include its sub-agents' calls; the log records them.
    const subagentCalls = { inputTokens: 227, outputTokens: 18, reasoningTokens: 3, modelCalls: 3 };
    expect(payloads.at(-1)).toMatchObject({ type: 'turn_complete', usage: subagentCalls });
    expect(session.usage()).toMatchObject(subagentCalls);
    const parentLog = (await storage.loadSession(session.id)) ?? [];
    const recorded = parentLog.filter(
      (event) => event.payload.type === 'metadata' && event.payload.key === 'subagent_usage',
    );
    expect(recorded.map((event) => (event.payload.type === 'metadata' ? event.payload.value : null))).toEqual(
      [expect.objectContaining(subagentCalls)],
    );
    await agent.shutdown();
  });

  test('two children of read-only tools run at once', async () => {
    const gate = deferred();
    const entered: string[] = [];
    const waitTool: ToolHandler = {
      ...gateTool({ gate: gate.promise }),
      async execute(input) {
        entered.push(input.sessionId);
        await gate.promise;
        return { content: 'waited', isError: false };
      },
    };
    const { provider } = routedProvider({
      main: [
        [
          { type: 'tool_call', toolName: 'researcher', arguments: { task: 'a' }, callId: 'c1' },
          { type: 'tool_call', toolName: 'researcher', arguments: { task: 'b' }, callId: 'c2' },
        ],
        [{ type: 'text', text: 'both done' }],
      ],
      researcher: [
        [{ type: 'tool_call', toolName: 'wait', arguments: {} }],
        [{ type: 'tool_call', toolName: 'wait', arguments: {} }],
        [{ type: 'text', text: 'one' }],
        [{ type: 'text', text: 'two' }],
      ],
    });
    const { agent } = await harness({
      provider,
      tools: [waitTool, writeFile, researcher({ tools: ['wait'] })],
    });
    const session = await agent.newSession();
    const turn = await session.sendMessage('go');
    for (let round = 0; round < 100 && entered.length < 2; round += 1) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    // Both children are inside their tool at the same time: neither waited for the other.
    expect(new Set(entered).size).toBe(2);
    gate.resolve();
    const events = await collect(turn);
    expect(events.at(-1)?.payload.type).toBe('turn_complete');
    const ends = events.flatMap((event) =>
      event.payload.type === 'tool_call_end' ? [event.payload.output] : [],
    );
    expect(ends.map((output) => output.isError)).toEqual([false, false]);
    await agent.shutdown();
  });

  test('a child that may call a mutating tool is mutating: two calls of it run one after the other', async () => {
    let running = 0;
    let most = 0;
    const slowWrite: ToolHandler = {
      ...writeFile,
      async execute() {
        running += 1;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 10));
        running -= 1;
        return { content: 'written', isError: false };
      },
    };
    const { provider } = routedProvider({
      main: [
        [
          { type: 'tool_call', toolName: 'writer', arguments: { task: 'a' }, callId: 'c1' },
          { type: 'tool_call', toolName: 'writer', arguments: { task: 'b' }, callId: 'c2' },
        ],
        [{ type: 'text', text: 'both written' }],
      ],
      writer: [
        [{ type: 'tool_call', toolName: 'write_file', arguments: {} }],
        [{ type: 'text', text: 'one' }],
        [{ type: 'tool_call', toolName: 'write_file', arguments: {} }],
        [{ type: 'text', text: 'two' }],
      ],
    });
    const writer = agentTool({
      name: 'writer',
      description: 'writes',
      instructions: '[writer] You write.',
      tools: ['write_file'],
    });
    const { agent } = await harness({ provider, tools: [slowWrite, writer] });
    const session = await agent.newSession();
    const events = await collect(await session.sendMessage('go'));
    expect(events.at(-1)?.payload.type).toBe('turn_complete');
    const ends = events.flatMap((event) =>
      event.payload.type === 'tool_call_end' ? [event.payload.output] : [],
    );
    expect(ends).toEqual([
      { content: 'one', isError: false },
      { content: 'two', isError: false },
    ]);
    expect(most).toBe(1);
    await agent.shutdown();
  });

  test('sub-agents nest maxSubagentDepth deep; the deeper call gets an isError result', async () => {
    const { provider } = routedProvider({
      main: [
        [{ type: 'tool_call', toolName: 'researcher', arguments: { task: 'dig' }, callId: 'c1' }],
        [{ type: 'text', text: 'done' }],
      ],
      researcher: [
        [{ type: 'tool_call', toolName: 'researcher', arguments: { task: 'dig deeper' }, callId: 'c2' }],
        [{ type: 'text', text: 'could not go deeper' }],
      ],
    });
    const { agent } = await harness({
      provider,
      config: { maxSubagentDepth: 1 },
      tools: [lookup, researcher({ tools: ['researcher'] })],
    });
    const session = await agent.newSession();
    const events = await collect(await session.sendMessage('go'));
    const nestedEnd = events.find(
      (event) => event.payload.type === 'subagent' && event.payload.event.type === 'tool_call_end',
    );
    expect(nestedEnd?.payload).toMatchObject({ event: { callId: 'c2', output: { isError: true } } });
    const end = events.find((event) => event.payload.type === 'tool_call_end');
    expect(end?.payload).toMatchObject({ output: { content: 'could not go deeper', isError: false } });
    await agent.shutdown();
  });

  test('agentTool options and the names they use are checked', async () => {
    expect(() => agentTool({ name: 'x', description: 'd', instructions: ' ' })).toThrow(/instructions/);
    expect(() => agentTool({ name: 'x', description: 'd', instructions: 'i', maxToolCalls: 0 })).toThrow(
      /maxToolCalls/,
    );
    await expectCode(
      harness({ tools: [agentTool({ name: 'x', description: 'd', instructions: 'i', tools: ['nope'] })] }),
      'INVALID_CONFIG',
    );
    await expectCode(
      harness({ tools: [agentTool({ name: 'x', description: 'd', instructions: 'i', model: 'nope' })] }),
      'INVALID_CONFIG',
    );
  });
});

describe('cancelling the parent turn cancels the child at each of its yield points', () => {
  async function cancelled(options: {
    researcherScript: ScriptedResponse[];
    tools?: ToolHandler[];
    trigger: (turn: RunningTurn) => Promise<void>;
  }) {
    const { provider, requests } = routedProvider({
      main: [[{ type: 'tool_call', toolName: 'researcher', arguments: { task: 'go' }, callId: 'c1' }]],
      researcher: options.researcherScript,
    });
    const { agent, storage } = await harness({
      provider,
      tools: [
        ...(options.tools ?? []),
        lookup,
        researcher({ tools: (options.tools ?? []).map((tool) => tool.name) }),
      ],
    });
    const session = await agent.newSession();
    const turn = await session.sendMessage('go');
    await options.trigger(turn);
    turn.cancel();
    expect((await turn.done).status).toBe('cancelled');
    const events = await collect(turn);
    expect(events.at(-1)?.payload.type).toBe('turn_cancelled');
    await agent.shutdown();
    return { events, requests, storage, sessionId: session.id };
  }

  test('mid-stream of the child', async () => {
    const { events } = await cancelled({
      researcherScript: [[{ type: 'text', text: 'thinking' }, { type: 'hang' }]],
      trigger: (turn) => readUntil(turn, 'subagent'),
    });
    expect(shapes(events)).toEqual(['subagent>turn_cancelled', 'tool_call_end', 'turn_cancelled']);
  });

  test("while the child's tool runs: its signal fires", async () => {
    const signals: AbortSignal[] = [];
    const started = deferred();
    const stuck: ToolHandler = {
      ...gateTool({ gate: new Promise(() => {}), signals }),
      async execute(input) {
        signals.push(input.signal);
        started.resolve();
        await new Promise((resolve) => input.signal.addEventListener('abort', resolve));
        return { content: 'stopped', isError: true };
      },
    };
    const { events } = await cancelled({
      researcherScript: [[{ type: 'tool_call', toolName: 'wait', arguments: {} }]],
      tools: [stuck],
      trigger: () => started.promise,
    });
    expect(signals[0]?.aborted).toBe(true);
    expect(shapes(events).slice(-3)).toEqual(['subagent>turn_cancelled', 'tool_call_end', 'turn_cancelled']);
  });

  test("between the child's tool result and its next model call", async () => {
    const release = deferred();
    const started = deferred();
    const deaf: ToolHandler = {
      ...gateTool({ gate: release.promise }),
      async execute() {
        started.resolve();
        // Ignores its signal: the child notices the cancel only at its next step.
        await release.promise;
        return { content: 'late', isError: false };
      },
    };
    const { events, requests } = await cancelled({
      researcherScript: [
        [{ type: 'tool_call', toolName: 'wait', arguments: {} }],
        [{ type: 'text', text: 'never' }],
      ],
      tools: [deaf],
      trigger: async () => {
        await started.promise;
        // The parent's cancel aborts the child's signal; the tool answers afterwards.
        setTimeout(() => release.resolve(), 20);
      },
    });
    expect(requests.researcher).toHaveLength(1);
    expect(shapes(events).slice(-3)).toEqual(['subagent>turn_cancelled', 'tool_call_end', 'turn_cancelled']);
  });

  test('before the child starts (the parent already cancelled while its tools were being saved)', async () => {
    const { events, requests } = await cancelled({
      researcherScript: [[{ type: 'text', text: 'never' }]],
      trigger: async () => {},
    });
    expect(requests.researcher ?? []).toHaveLength(0);
    expect(events.at(-1)?.payload.type).toBe('turn_cancelled');
  });

  test("during the child's compaction", async () => {
    const scripted = new ScriptedModelProvider({
      models: [scriptedModel(), scriptedModel({ id: 'small-model', contextWindow: 200 })],
      responses: [
        [{ type: 'tool_call', toolName: 'summariser', arguments: { task: 'x'.repeat(2_000) }, callId: 'c1' }],
      ],
      byPurpose: { compaction: [[{ type: 'text', text: 'SUMMARY' }]] },
    });
    const pause = pauseAt(0);
    const provider = pausingProvider(scripted, (request) =>
      request.purpose === 'compaction' ? pause : undefined,
    );
    const summariser = agentTool({
      name: 'summariser',
      description: 'summarises',
      instructions: 'You summarise.',
      model: 'small-model',
    });
    const { agent } = await harness({ provider, tools: [summariser] });
    const session = await agent.newSession();
    const turn = await session.sendMessage('go');
    await pause.reached.promise;
    turn.cancel();
    pause.release();
    const events = await collect(turn);
    expect(shapes(events).slice(-3)).toEqual(['subagent>turn_cancelled', 'tool_call_end', 'turn_cancelled']);
    expect(scripted.requests.map((request) => `${request.modelId}:${request.purpose}`)).toEqual([
      'scripted-model:turn',
      'small-model:compaction',
    ]);
    await agent.shutdown();
  });
});
