import { describe, expect, test } from 'vitest';
import {
  Agent,
  AgentBuilder,
  type AgentConfig,
  type AgentErrorCode,
  type HasProvider,
  isAgentError,
  type Plugin,
  type SkillDefinition,
  type ToolHandler,
} from '../src/index.js';
import {
  InMemoryMemoryStorage,
  InMemorySessionStorage,
  ScriptedModelProvider,
  scriptedModel,
} from '../src/testing/index.js';

function tool(name: string, overrides: Partial<ToolHandler> = {}): ToolHandler {
  return {
    name,
    description: `the ${name} tool`,
    parametersSchema: { type: 'object', properties: {} },
    isMutating: false,
    execute: async () => ({ content: 'ok', isError: false }),
    ...overrides,
  };
}

function skill(name: string, overrides: Partial<SkillDefinition> = {}): SkillDefinition {
  return { name, description: `the ${name} skill`, prompt: `Do ${name}.`, ...overrides };
}

/** A plugin that records its life in `log` as `init:id`, `apply:id`, `shutdown:id`. */
function plugin(id: string, log: string[], options: { failInit?: boolean } = {}): Plugin {
  return {
    id,
    displayName: `Plugin ${id}`,
    description: `the ${id} plugin`,
    async initialize() {
      log.push(`init:${id}`);
      if (options.failInit) throw new Error(`${id} cannot start`);
    },
    apply() {
      log.push(`apply:${id}`);
    },
    async shutdown() {
      log.push(`shutdown:${id}`);
    },
  };
}

/** A builder with the default scripted provider (model `scripted-model`) registered. */
function builder(config: Partial<AgentConfig> = {}): AgentBuilder<HasProvider> {
  return new AgentBuilder({ defaultModel: 'scripted-model', ...config }).registerModelProvider(
    new ScriptedModelProvider(),
  );
}

/** Builds, expects an AgentError with `code` whose message starts with `[code]`, and returns it. */
async function expectBuildError(candidate: AgentBuilder<HasProvider>, code: AgentErrorCode): Promise<Error> {
  const error = await candidate.build().then(
    async (agent) => {
      await agent.shutdown();
      return undefined;
    },
    (reason: unknown) => reason,
  );
  expect(isAgentError(error), `expected build() to reject with ${code}`).toBe(true);
  expect(error).toMatchObject({ code });
  expect((error as Error).message.startsWith(`[${code}] `)).toBe(true);
  return error as Error;
}

describe('a valid build', () => {
  test('succeeds with every kind of part registered', async () => {
    const log: string[] = [];
    const agent = await builder({ toolTimeoutMs: 1, compactThreshold: 1, memoryCheckpointInterval: 0 })
      .registerTool(tool('read_file'))
      .registerTool(tool('x'.repeat(64)))
      .registerSkill(skill('review', { requiredTools: ['read_file'], allowImplicitInvocation: true }))
      .registerPlugin(plugin('audit', log), { level: 1 })
      .registerSessionStorage(new InMemorySessionStorage())
      .registerMemoryStorage(new InMemoryMemoryStorage())
      .build();
    expect(agent).toBeInstanceOf(Agent);
    expect(log).toEqual(['init:audit', 'apply:audit']);
    const session = await agent.newSession();
    expect(session.modelId).toBe('scripted-model');
    await session.close();
    await agent.shutdown();
    expect(log).toEqual(['init:audit', 'apply:audit', 'shutdown:audit']);
  });

  test('accepts compactModel and memoryModel offered by another provider', async () => {
    const agent = await new AgentBuilder({
      defaultModel: 'scripted-model',
      compactModel: 'small',
      memoryModel: 'small',
    })
      .registerModelProvider(new ScriptedModelProvider())
      .registerModelProvider(
        new ScriptedModelProvider({ id: 'other', models: [scriptedModel({ id: 'small' })] }),
      )
      .build();
    await agent.shutdown();
  });
});

describe('build validation (SPEC §4)', () => {
  test('no provider registered → NO_MODEL_PROVIDER', async () => {
    const withoutProvider = new AgentBuilder({ defaultModel: 'scripted-model' });
    await expectBuildError(withoutProvider as unknown as AgentBuilder<HasProvider>, 'NO_MODEL_PROVIDER');
  });

  test('duplicate provider id → NAME_CONFLICT', async () => {
    const candidate = builder().registerModelProvider(
      new ScriptedModelProvider({ models: [scriptedModel({ id: 'another-model' })] }),
    );
    await expectBuildError(candidate, 'NAME_CONFLICT');
  });

  test('the same model id offered by two providers → NAME_CONFLICT', async () => {
    const candidate = builder().registerModelProvider(new ScriptedModelProvider({ id: 'second' }));
    await expectBuildError(candidate, 'NAME_CONFLICT');
  });

  test('duplicate tool name → NAME_CONFLICT', async () => {
    await expectBuildError(builder().registerTool(tool('grep')).registerTool(tool('grep')), 'NAME_CONFLICT');
  });

  test('duplicate skill name → NAME_CONFLICT', async () => {
    await expectBuildError(
      builder().registerSkill(skill('plan')).registerSkill(skill('plan')),
      'NAME_CONFLICT',
    );
  });

  test('duplicate plugin id → NAME_CONFLICT', async () => {
    const log: string[] = [];
    const candidate = builder().registerPlugin(plugin('audit', log)).registerPlugin(plugin('audit', log));
    await expectBuildError(candidate, 'NAME_CONFLICT');
    expect(log).toEqual([]);
  });

  test('a user tool named activate_skill → NAME_CONFLICT, with or without implicit skills', async () => {
    await expectBuildError(builder().registerTool(tool('activate_skill')), 'NAME_CONFLICT');
    const withImplicit = builder()
      .registerSkill(skill('plan', { allowImplicitInvocation: true }))
      .registerTool(tool('activate_skill'));
    await expectBuildError(withImplicit, 'NAME_CONFLICT');
  });

  test('two session storages → STORAGE_DUPLICATE', async () => {
    const candidate = builder()
      .registerSessionStorage(new InMemorySessionStorage())
      .registerSessionStorage(new InMemorySessionStorage());
    await expectBuildError(candidate, 'STORAGE_DUPLICATE');
  });

  test('two memory storages → STORAGE_DUPLICATE', async () => {
    const candidate = builder()
      .registerMemoryStorage(new InMemoryMemoryStorage())
      .registerMemoryStorage(new InMemoryMemoryStorage());
    await expectBuildError(candidate, 'STORAGE_DUPLICATE');
  });

  test('defaultModel not offered by any provider → INVALID_DEFAULT_MODEL', async () => {
    await expectBuildError(builder({ defaultModel: 'gpt-nothing' }), 'INVALID_DEFAULT_MODEL');
  });

  test('a skill requiring a tool that is not registered → SKILL_DEPENDENCY_NOT_MET', async () => {
    const candidate = builder()
      .registerTool(tool('read_file'))
      .registerSkill(skill('deploy', { requiredTools: ['read_file', 'run_shell'] }));
    const error = await expectBuildError(candidate, 'SKILL_DEPENDENCY_NOT_MET');
    expect(error.message).toContain('run_shell');
  });

  test.each([
    ['empty', ''],
    ['65 characters', 'x'.repeat(65)],
    ['with a space', 'read file'],
    ['with a dot', 'fs.read'],
  ])('a tool name %s → INVALID_CONFIG', async (_label, name) => {
    await expectBuildError(builder().registerTool(tool(name)), 'INVALID_CONFIG');
  });

  test.each([
    ['a string schema', { type: 'string' }],
    ['a schema without type object', { properties: { path: { type: 'string' } } }],
    ['an array', [] as unknown as Record<string, unknown>],
    ['a schema that does not compile', { type: 'object', properties: { path: { type: 'no-such-type' } } }],
  ])('a tool whose parametersSchema is %s → INVALID_CONFIG', async (_label, parametersSchema) => {
    await expectBuildError(builder().registerTool(tool('read_file', { parametersSchema })), 'INVALID_CONFIG');
  });

  test.each<[string, Partial<AgentConfig>]>([
    ['toolTimeoutMs 0', { toolTimeoutMs: 0 }],
    ['toolTimeoutMs -1', { toolTimeoutMs: -1 }],
    ['toolTimeoutMs 1.5', { toolTimeoutMs: 1.5 }],
    ['maxToolCallsPerTurn 0', { maxToolCallsPerTurn: 0 }],
    ['compactThreshold 0', { compactThreshold: 0 }],
    ['compactThreshold 1.5', { compactThreshold: 1.5 }],
    ['compactThreshold NaN', { compactThreshold: Number.NaN }],
    ['memoryMaxItems 0', { memoryMaxItems: 0 }],
    ['memoryCheckpointInterval -1', { memoryCheckpointInterval: -1 }],
  ])('config %s → INVALID_CONFIG', async (_label, config) => {
    await expectBuildError(builder(config), 'INVALID_CONFIG');
  });

  test.each<[string, Partial<AgentConfig>]>([
    ['compactModel', { compactModel: 'missing-model' }],
    ['memoryModel', { memoryModel: 'missing-model' }],
  ])('%s not offered by any provider → INVALID_CONFIG', async (_label, config) => {
    const error = await expectBuildError(builder(config), 'INVALID_CONFIG');
    expect(error.message).toContain('missing-model');
  });

  test.each([
    ['empty', ''],
    ['with a space', 'code review'],
    ['with a dot', 'code.review'],
    ['65 characters', 's'.repeat(65)],
  ])('a skill name %s → INVALID_CONFIG', async (_label, name) => {
    await expectBuildError(builder().registerSkill(skill(name)), 'INVALID_CONFIG');
  });

  test('a plugin whose initialize throws → PLUGIN_INIT_FAILED, after the earlier plugins are shut down in reverse', async () => {
    const log: string[] = [];
    const candidate = builder()
      .registerPlugin(plugin('first', log))
      .registerPlugin(plugin('second', log))
      .registerPlugin(plugin('broken', log, { failInit: true }))
      .registerPlugin(plugin('never', log));
    const error = await expectBuildError(candidate, 'PLUGIN_INIT_FAILED');
    expect(error.message).toContain('broken');
    expect(log).toEqual([
      'init:first',
      'apply:first',
      'init:second',
      'apply:second',
      'init:broken',
      'shutdown:second',
      'shutdown:first',
    ]);
  });
});
