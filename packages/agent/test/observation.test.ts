import { describe, expect, test } from 'vitest';
import { HookRegistry } from '../src/hooks/hook.js';
import { PluginManager } from '../src/hooks/plugin-manager.js';
import {
  AgentBuilder,
  type AgentError,
  type ChatEvent,
  type ModelProvider,
  type Observation,
  type Observer,
  type Plugin,
  type Session,
  type ToolHandler,
} from '../src/index.js';
import { ObserverRegistry } from '../src/model/observation.js';
import { observedProvider } from '../src/model/observed-provider.js';
import { ScriptedModelProvider, type ScriptedResponse, scriptedModel } from '../src/testing/index.js';

/** A plugin that only observes. */
function observingPlugin(id: string, observer: Observer): Plugin {
  return {
    id,
    displayName: id,
    description: `observes (${id})`,
    initialize: async () => {},
    apply: (ctx) => {
      ctx.observe(observer);
    },
    shutdown: async () => {},
  };
}

const echoTool: ToolHandler = {
  name: 'echo',
  description: 'echoes',
  parametersSchema: { type: 'object', properties: {} },
  isMutating: false,
  execute: async () => ({ content: 'echoed', isError: false }),
};

async function setUp(options: {
  responses: ScriptedResponse[];
  observers: Observer[];
  byPurpose?: ConstructorParameters<typeof ScriptedModelProvider>[0] extends infer O
    ? O extends { byPurpose?: infer B }
      ? B
      : never
    : never;
  contextWindow?: number;
  compactThreshold?: number;
}) {
  const provider = new ScriptedModelProvider({
    models: [
      scriptedModel(options.contextWindow === undefined ? {} : { contextWindow: options.contextWindow }),
    ],
    responses: options.responses,
    ...(options.byPurpose === undefined ? {} : { byPurpose: options.byPurpose }),
  });
  const backgroundErrors: AgentError[] = [];
  let builder = new AgentBuilder({
    defaultModel: 'scripted-model',
    onBackgroundError: (error) => backgroundErrors.push(error),
    ...(options.compactThreshold === undefined ? {} : { compactThreshold: options.compactThreshold }),
  })
    .registerModelProvider(provider)
    .registerTool(echoTool);
  options.observers.forEach((observer, index) => {
    builder = builder.registerPlugin(observingPlugin(`observer-${index}`, observer));
  });
  const agent = await builder.build();
  const session = await agent.newSession();
  return { agent, session, backgroundErrors, provider };
}

async function drain(session: Session, text: string): Promise<string[]> {
  const turn = await session.sendMessage(text);
  const types: string[] = [];
  for await (const event of turn) types.push(event.payload.type);
  return types;
}

/** The observation's type, with the AgentEvent type for `agent_event`. */
function label(observation: Observation): string {
  return observation.type === 'agent_event' ? `event:${observation.event.payload.type}` : observation.type;
}

describe('PluginContext.observe', () => {
  test('an observer sees the turn, each model call with its usage and stop reason, and every AgentEvent', async () => {
    const seen: Observation[] = [];
    const { agent, session } = await setUp({
      observers: [(observation) => void seen.push(observation)],
      responses: [
        [
          { type: 'tool_call', toolName: 'echo', callId: 'c1' },
          { type: 'usage', usage: { inputTokens: 11, outputTokens: 3, cachedInputTokens: 4 } },
        ],
        [
          { type: 'text', text: 'Hel' },
          { type: 'text', text: 'lo' },
          { type: 'usage', usage: { inputTokens: 20, outputTokens: 2 } },
          { type: 'done', stopReason: 'end_turn', responseModel: 'scripted-model-2026-01-01' },
        ],
      ],
    });
    await drain(session, 'hi');
    expect(seen.map(label)).toEqual([
      'turn_start',
      'model_call_start',
      'model_call_end',
      'event:usage',
      'event:tool_call_start',
      'event:tool_call_end',
      'model_call_start',
      'event:text_delta',
      'event:text_delta',
      'model_call_end',
      'event:usage',
      'event:turn_complete',
      'turn_end',
    ]);
    const start = seen[0];
    expect(start).toMatchObject({ type: 'turn_start', providerId: 'scripted', modelId: 'scripted-model' });
    const turnId = start?.type === 'turn_start' ? start.turnId : '';
    const ends = seen.filter((observation) => observation.type === 'model_call_end');
    expect(ends[0]).toMatchObject({
      sessionId: session.id,
      turnId,
      purpose: 'turn',
      providerId: 'scripted',
      modelId: 'scripted-model',
      outcome: 'completed',
      stopReason: 'tool_use',
      usage: { inputTokens: 11, outputTokens: 3, cachedInputTokens: 4 },
      toolCalls: [{ callId: 'c1', toolName: 'echo', arguments: '{}' }],
    });
    expect(ends[1]).toMatchObject({
      outcome: 'completed',
      stopReason: 'end_turn',
      responseModel: 'scripted-model-2026-01-01',
      outputText: 'Hello',
    });
    // A call whose provider did not say which model answered carries no responseModel.
    expect(ends[0]).not.toHaveProperty('responseModel');
    const starts = seen.filter((observation) => observation.type === 'model_call_start');
    expect(starts.map((observation) => observation.callId)).toEqual(
      ends.map((observation) => observation.callId),
    );
    expect(new Set(starts.map((observation) => observation.callId)).size).toBe(2);
    expect(seen.at(-1)).toEqual({ type: 'turn_end', sessionId: session.id, turnId, status: 'completed' });
    await agent.shutdown();
  });

  test('a throwing or rejecting observer is reported as PLUGIN_ERROR and changes nothing for the turn', async () => {
    const seen: string[] = [];
    const { agent, session, backgroundErrors } = await setUp({
      observers: [
        () => {
          throw new Error('observer broke');
        },
        async () => {
          throw new Error('observer rejected');
        },
        (observation) => void seen.push(label(observation)),
      ],
      responses: [[{ type: 'text', text: 'fine' }]],
    });
    expect(await drain(session, 'hi')).toEqual(['text_delta', 'turn_complete']);
    expect(session.messages().at(-1)).toEqual({
      type: 'assistant',
      content: [{ type: 'text', text: 'fine' }],
      status: 'complete',
    });
    expect(seen).toContain('turn_end');
    await new Promise((resolve) => setImmediate(resolve));
    // Six observations reach each failing observer: turn_start, call start/end, text_delta, turn_complete, turn_end.
    expect(backgroundErrors).toHaveLength(12);
    for (const error of backgroundErrors) {
      expect(error.code).toBe('PLUGIN_ERROR');
      expect(error.sourceComponent).toBe('plugin');
    }
    await agent.shutdown();
  });

  test('a failed model call ends as failed with the AgentError; a cancelled one as cancelled', async () => {
    const seen: Observation[] = [];
    const { agent, session } = await setUp({
      observers: [(observation) => void seen.push(observation)],
      responses: [
        [{ type: 'error', error: new Error('boom') }],
        [{ type: 'text', text: 'x' }, { type: 'hang' }],
      ],
    });
    await drain(session, 'first');
    const failed = seen.find((observation) => observation.type === 'model_call_end');
    expect(failed).toMatchObject({ outcome: 'failed', error: { code: 'PROVIDER_ERROR' } });
    expect(seen.at(-1)).toMatchObject({ type: 'turn_end', status: 'failed' });

    seen.length = 0;
    const turn = await session.sendMessage('second');
    for await (const event of turn) if (event.payload.type === 'text_delta') turn.cancel();
    expect(seen.find((observation) => observation.type === 'model_call_end')).toMatchObject({
      outcome: 'cancelled',
    });
    expect(seen.at(-1)).toMatchObject({ type: 'turn_end', status: 'cancelled' });
    await agent.shutdown();
  });

  test('compaction calls are observed with their purpose, inside the turn that made them', async () => {
    const seen: Observation[] = [];
    const text400 = (label: string): string => label.padEnd(400, '.');
    const { agent, session } = await setUp({
      observers: [(observation) => void seen.push(observation)],
      contextWindow: 2_000,
      compactThreshold: 0.5,
      responses: Array.from({ length: 8 }, (_, index) => [
        { type: 'text', text: text400(`answer ${index}`) },
      ]),
      byPurpose: { compaction: [[{ type: 'text', text: 'SUMMARY' }]] },
    });
    let compactedTurn = -1;
    for (let index = 0; index < 6 && compactedTurn < 0; index += 1) {
      if ((await drain(session, text400(`question ${index}`))).includes('context_compacted'))
        compactedTurn = index;
    }
    expect(compactedTurn).toBeGreaterThan(0);
    const compaction = seen.find(
      (observation) => observation.type === 'model_call_end' && observation.purpose === 'compaction',
    );
    expect(compaction).toMatchObject({ outcome: 'completed', outputText: 'SUMMARY' });
    const lastTurn = seen.filter((observation) => observation.type === 'turn_start').at(-1);
    expect(compaction?.type === 'model_call_end' && compaction.turnId).toBe(
      lastTurn?.type === 'turn_start' && lastTurn.turnId,
    );
    await agent.shutdown();
  });

  test('an observer removed, or of a plugin shut down, is called no more', async () => {
    const registry = new ObserverRegistry(() => {});
    const calls: string[] = [];
    const remove = registry.add({
      pluginId: 'p',
      observer: (observation) => void calls.push(observation.type),
    });
    registry.enabledNow()?.notify({ type: 'turn_end', sessionId: 's', turnId: 't', status: 'completed' });
    remove();
    expect(registry.enabledNow()).toBeUndefined();
    expect(calls).toEqual(['turn_end']);
    expect(registry.active).toBe(false);

    const observers = new ObserverRegistry(() => {});
    const manager = new PluginManager({
      plugins: [{ plugin: observingPlugin('p', () => {}), config: undefined }],
      hooks: new HookRegistry(),
      observers,
      timeoutMs: 1_000,
      onBackgroundError: () => {},
    });
    await manager.initializeAll();
    expect(observers.active).toBe(true);
    await manager.shutdownAll();
    expect(observers.active).toBe(false);
  });

  test('with no observer, the provider is used as it is: no wrapper, no cost per event', () => {
    const registry = new ObserverRegistry(() => {});
    const provider = new ScriptedModelProvider({ responses: [] });
    expect(observedProvider(registry.enabledNow(), provider, { sessionId: 's' })).toBe(provider);
    registry.add({ pluginId: 'p', observer: () => {} });
    expect(observedProvider(registry.enabledNow(), provider, { sessionId: 's' })).not.toBe(provider);
  });

  test('enabled() is asked once per turn: a turn it declines is not observed; a throwing one counts as false', async () => {
    let wanted = false;
    let asked = 0;
    const seen: string[] = [];
    const errors: AgentError[] = [];
    const plugin = (id: string, enabled: () => boolean): Plugin => ({
      ...observingPlugin(id, (observation) => void seen.push(`${id}:${label(observation)}`)),
      apply: (ctx) => {
        ctx.observe((observation) => void seen.push(`${id}:${label(observation)}`), { enabled });
      },
    });
    const provider = new ScriptedModelProvider({
      responses: [[{ type: 'text', text: 'one' }], [{ type: 'text', text: 'two' }]],
    });
    const agent = await new AgentBuilder({
      defaultModel: 'scripted-model',
      onBackgroundError: (e) => errors.push(e),
    })
      .registerModelProvider(provider)
      .registerPlugin(
        plugin('gated', () => {
          asked += 1;
          return wanted;
        }),
      )
      .registerPlugin(
        plugin('broken', () => {
          throw new Error('no idea');
        }),
      )
      .build();
    const session = await agent.newSession();
    await drain(session, 'first');
    expect(seen).toEqual([]);
    wanted = true;
    await drain(session, 'second');
    expect(seen).toContain('gated:model_call_end');
    expect(seen.every((entry) => entry.startsWith('gated:'))).toBe(true);
    expect(asked).toBe(2);
    expect(errors.map((error) => error.code)).toEqual(['PLUGIN_ERROR', 'PLUGIN_ERROR']);
    await agent.shutdown();
  });

  test('odd providers: plain next() results are observed to the end; a chat() that never answers ends as cancelled', async () => {
    const seen: Observation[] = [];
    const events = [
      { type: 'text_delta', text: 'plain' },
      { type: 'done', stopReason: 'end_turn' },
    ];
    const model = scriptedModel();
    const plainIterator: ModelProvider = {
      id: 'plain',
      models: [model],
      chat: () => {
        let index = 0;
        // An iterator whose next() answers plain results, not promises: the reader awaits either.
        return {
          [Symbol.asyncIterator]: () => ({
            next: () =>
              index < events.length
                ? { done: false, value: events[index++] }
                : { done: true, value: undefined },
          }),
        } as unknown as AsyncIterable<ChatEvent>;
      },
    };
    const agent = await new AgentBuilder({ defaultModel: model.id })
      .registerModelProvider(plainIterator)
      .registerPlugin(observingPlugin('o', (observation) => void seen.push(observation)))
      .build();
    const session = await agent.newSession();
    expect(await drain(session, 'hi')).toEqual(['text_delta', 'turn_complete']);
    expect(seen.find((observation) => observation.type === 'model_call_end')).toMatchObject({
      outcome: 'completed',
      outputText: 'plain',
      stopReason: 'end_turn',
    });
    await agent.shutdown();

    seen.length = 0;
    const silent: ModelProvider = { id: 'silent', models: [model], chat: () => new Promise(() => {}) };
    const second = await new AgentBuilder({ defaultModel: model.id })
      .registerModelProvider(silent)
      .registerPlugin(observingPlugin('o', (observation) => void seen.push(observation)))
      .build();
    const turn = await (await second.newSession()).sendMessage('hi');
    setTimeout(() => turn.cancel(), 20);
    for await (const _event of turn) {
      // Read to the end.
    }
    expect(seen.find((observation) => observation.type === 'model_call_end')).toMatchObject({
      outcome: 'cancelled',
    });
    expect(seen.at(-1)).toMatchObject({ type: 'turn_end', status: 'cancelled' });
    await second.shutdown();
  });
});
