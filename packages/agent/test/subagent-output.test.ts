import { describe, expect, test } from 'vitest';
import {
  type AgentEvent,
  agentTool,
  type ChatRequest,
  type JsonSchema,
  type ModelInfo,
  type ModelProvider,
  type OutputOptions,
  type ToolHandler,
} from '../src/index.js';
import { ScriptedModelProvider, type ScriptedResponse, scriptedModel } from '../src/testing/index.js';
import { collect, harness } from './support/session-fixtures.js';

const VERDICT: JsonSchema = {
  type: 'object',
  properties: { fruit: { type: 'boolean' }, colour: { type: 'string' } },
  required: ['fruit', 'colour'],
  additionalProperties: false,
};

/** A scripted model that says it honours responseFormat itself. */
const NATIVE: ModelInfo = scriptedModel({
  capabilities: { toolUse: true, vision: true, streaming: true, structuredOutput: true },
});

/** The parent's script and the child's (whose system prompt holds `[classifier]`), with what each was sent. */
function routedProvider(options: {
  main: ScriptedResponse[];
  child: ScriptedResponse[];
  models?: ModelInfo[];
}): { provider: ModelProvider; main: ChatRequest[]; child: ChatRequest[] } {
  const models = options.models ?? [scriptedModel()];
  const main = new ScriptedModelProvider({ models, responses: options.main });
  const child = new ScriptedModelProvider({ models, responses: options.child });
  const sent = { main: [] as ChatRequest[], child: [] as ChatRequest[] };
  return {
    ...sent,
    provider: {
      id: main.id,
      models: main.models,
      chat(request, signal) {
        const isChild = request.systemPrompt.includes('[classifier]');
        (isChild ? sent.child : sent.main).push(request);
        return (isChild ? child : main).chat(request, signal);
      },
    },
  };
}

function classifier(overrides: Partial<Parameters<typeof agentTool>[0]> = {}): ToolHandler {
  return agentTool({
    name: 'classifier',
    description: 'classifies a thing',
    instructions: '[classifier] You classify things.',
    output: { schema: VERDICT, name: 'verdict', description: 'what the thing is' },
    ...overrides,
  });
}

const CALL: ScriptedResponse = [
  { type: 'tool_call', toolName: 'classifier', arguments: { task: 'classify a mango' }, callId: 'c1' },
];

function toolEnd(events: readonly AgentEvent[]): unknown {
  return events.find((event) => event.payload.type === 'tool_call_end')?.payload;
}

/** What the parent's second request holds as the sub-agent call's result. */
function resultSent(request: ChatRequest | undefined): unknown {
  return request?.messages.find((message) => message.type === 'tool_result');
}

describe('sub-agents with structured output (agentTool output)', () => {
  test('a valid answer becomes the JSON text of the tool result, and the child asks for the format', async () => {
    const routed = routedProvider({
      models: [NATIVE],
      main: [CALL, [{ type: 'text', text: 'It is a yellow fruit.' }]],
      child: [[{ type: 'json', value: { fruit: true, colour: 'yellow' }, chunks: 3 }]],
    });
    const { agent } = await harness({ provider: routed.provider, tools: [classifier()] });
    const session = await agent.newSession();
    const events = await collect(await session.sendMessage('What is a mango?'));
    expect(toolEnd(events)).toMatchObject({
      output: { content: '{"fruit":true,"colour":"yellow"}', isError: false },
      success: true,
    });
    expect(resultSent(routed.main[1])).toEqual({
      type: 'tool_result',
      callId: 'c1',
      content: '{"fruit":true,"colour":"yellow"}',
      isError: false,
    });
    // The child's terminal event carries the parsed value; the child's request carries the format and,
    // the model enforcing it, no schema in the prompt.
    const childEnd = events.find(
      (event) => event.payload.type === 'subagent' && event.payload.event.type === 'turn_complete',
    );
    expect(childEnd?.payload).toMatchObject({
      event: { type: 'turn_complete', output: { fruit: true, colour: 'yellow' } },
    });
    expect(routed.child[0]?.responseFormat).toEqual({
      type: 'json_schema',
      name: 'verdict',
      description: 'what the thing is',
      schema: VERDICT,
      strict: true,
    });
    expect(routed.child[0]?.systemPromptParts.dynamic).toBe('');
    // The parent's own turn asks for no format.
    expect(routed.main[0]?.responseFormat).toBeUndefined();
    await agent.shutdown();
  });

  test('a model without native structured output is told the schema in the prompt', async () => {
    const routed = routedProvider({
      main: [CALL, [{ type: 'text', text: 'done' }]],
      child: [[{ type: 'text', text: '```json\n{"fruit":false,"colour":"grey"}\n```' }]],
    });
    const { agent } = await harness({ provider: routed.provider, tools: [classifier()] });
    const session = await agent.newSession();
    const events = await collect(await session.sendMessage('What is a rock?'));
    expect(routed.child[0]?.systemPromptParts.dynamic).toContain(JSON.stringify(VERDICT));
    expect(toolEnd(events)).toMatchObject({
      output: { content: '{"fruit":false,"colour":"grey"}', isError: false },
    });
    await agent.shutdown();
  });

  test('an invalid answer gets one repair round with the errors fed back', async () => {
    const routed = routedProvider({
      models: [NATIVE],
      main: [CALL, [{ type: 'text', text: 'done' }]],
      child: [
        [{ type: 'json', value: { fruit: 'yes' } }],
        [{ type: 'json', value: { fruit: true, colour: 'green' } }],
      ],
    });
    const { agent } = await harness({ provider: routed.provider, tools: [classifier()] });
    const session = await agent.newSession();
    const events = await collect(await session.sendMessage('What is a lime?'));
    const nested = events.flatMap((event) =>
      event.payload.type === 'subagent' ? [event.payload.event.type] : [],
    );
    expect(nested).toContain('output_repair');
    expect(routed.child).toHaveLength(2);
    expect(routed.child[1]?.responseFormat?.name).toBe('verdict');
    expect(toolEnd(events)).toMatchObject({
      output: { content: '{"fruit":true,"colour":"green"}', isError: false },
    });
    await agent.shutdown();
  });

  test('an answer still invalid after the repair round is an isError result with the raw text', async () => {
    const routed = routedProvider({
      models: [NATIVE],
      main: [CALL, [{ type: 'text', text: 'The classifier failed.' }]],
      child: [[{ type: 'text', text: 'a fruit, I think' }], [{ type: 'json', value: { fruit: 1 } }]],
    });
    const { agent } = await harness({ provider: routed.provider, tools: [classifier()] });
    const session = await agent.newSession();
    const events = await collect(await session.sendMessage('What is a mango?'));
    const end = toolEnd(events) as { output: { content: string; isError: boolean }; success: boolean };
    expect(end.output.isError).toBe(true);
    expect(end.success).toBe(false);
    expect(end.output.content).toContain('{"fruit":1}');
    const childError = events.find(
      (event) => event.payload.type === 'subagent' && event.payload.event.type === 'error',
    );
    expect(childError?.payload).toMatchObject({ event: { error: { code: 'OUTPUT_INVALID' } } });
    expect(resultSent(routed.main[1])).toMatchObject({ callId: 'c1', isError: true });
    // The parent's turn goes on and completes: the failure is the tool's result, not the parent's error.
    expect(events.at(-1)?.payload.type).toBe('turn_complete');
    expect(events.filter((event) => event.payload.type === 'error')).toEqual([]);
    await agent.shutdown();
  });

  test('a child that hits its tool-call limit without a structured answer gives an isError result', async () => {
    const lookup: ToolHandler = {
      name: 'lookup',
      description: 'looks a word up',
      parametersSchema: { type: 'object' },
      isMutating: false,
      async execute() {
        return { content: 'a fruit', isError: false };
      },
    };
    const routed = routedProvider({
      models: [NATIVE],
      main: [CALL, [{ type: 'text', text: 'done' }]],
      child: [
        [{ type: 'tool_call', toolName: 'lookup', arguments: {}, callId: 'k1' }],
        [{ type: 'tool_call', toolName: 'lookup', arguments: {}, callId: 'k2' }],
      ],
    });
    const { agent } = await harness({
      provider: routed.provider,
      tools: [lookup, classifier({ tools: ['lookup'], maxToolCalls: 1 })],
    });
    const session = await agent.newSession();
    const events = await collect(await session.sendMessage('What is a mango?'));
    expect(toolEnd(events)).toMatchObject({ output: { isError: true } });
    await agent.shutdown();
  });

  test('a bad output option is INVALID_CONFIG when the tool is made', () => {
    const bad: unknown[] = [
      null,
      'verdict',
      { schema: { type: 'string' } },
      { schema: VERDICT, name: 'has spaces' },
      { schema: VERDICT, description: 3 },
      { schema: { type: 'object', properties: { a: { type: 'no-such-type' } } } },
    ];
    for (const output of bad) {
      expect(() => classifier({ output: output as OutputOptions })).toThrow(
        expect.objectContaining({ code: 'INVALID_CONFIG' }),
      );
    }
  });

  test('changing the schema object after the tool is made changes neither the check nor the request', async () => {
    const schema: JsonSchema = structuredClone(VERDICT);
    const tool = classifier({ output: { schema } });
    (schema.required as string[]).push('weight');
    const routed = routedProvider({
      models: [NATIVE],
      main: [CALL, [{ type: 'text', text: 'done' }]],
      child: [[{ type: 'json', value: { fruit: true, colour: 'red' } }]],
    });
    const { agent } = await harness({ provider: routed.provider, tools: [tool] });
    const session = await agent.newSession();
    const events = await collect(await session.sendMessage('What is a cherry?'));
    expect(routed.child[0]?.responseFormat?.schema).toEqual(VERDICT);
    expect(toolEnd(events)).toMatchObject({ output: { isError: false } });
    await agent.shutdown();
  });
});
