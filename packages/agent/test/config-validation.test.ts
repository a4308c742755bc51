import { describe, expect, test } from 'vitest';
import { AgentBuilder, type AgentConfig, type AgentError, isAgentError } from '../src/index.js';
import { ScriptedModelProvider } from '../src/testing/index.js';

/** Builds with `config` (cast: most of these shapes are type errors a JS host can still make). */
async function buildWith(config: unknown, provider = new ScriptedModelProvider()) {
  return new AgentBuilder(config as AgentConfig).registerModelProvider(provider).build();
}

async function buildError(config: unknown): Promise<AgentError> {
  const outcome = await buildWith(config).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(isAgentError(outcome), 'build() must reject with an AgentError').toBe(true);
  return outcome as AgentError;
}

const base = { defaultModel: 'scripted-model' };

/** [the field the message must name, the config]. */
const badConfigs: [string, unknown][] = [
  // The shapes of issue 14.
  ['personality.name', { ...base, personality: { name: 42, description: 'a helper' } }],
  ['environmentContext', { ...base, environmentContext: null }],
  ['environmentContext', { ...base, environmentContext: 'linux' }],
  ['environmentContext', { ...base, environmentContext: 42 }],
  ['environmentContext.cwd', { ...base, environmentContext: { cwd: 42 } }],
  ['environmentContext.extra', { ...base, environmentContext: { extra: 'x' } }],
  // personality
  ['personality', { ...base, personality: null }],
  ['personality', { ...base, personality: 'a helpful bot' }],
  ['personality', { ...base, personality: ['a helper'] }],
  ['personality.description', { ...base, personality: {} }],
  ['personality.description', { ...base, personality: { name: 'Ada' } }],
  ['personality.description', { ...base, personality: { description: { text: 'x' } } }],
  ['personality.name', { ...base, personality: { name: null, description: 'a helper' } }],
  ['nmae', { ...base, personality: { nmae: 'Ada', description: 'a helper' } }],
  // environmentContext
  ['environmentContext', { ...base, environmentContext: ['linux'] }],
  ['environmentContext.platform', { ...base, environmentContext: { platform: { os: 'linux' } } }],
  ['environmentContext.shell', { ...base, environmentContext: { shell: null } }],
  ['environmentContext.date', { ...base, environmentContext: { date: new Date() } }],
  ['environmentContext.timezone', { ...base, environmentContext: { timezone: 1 } }],
  ['environmentContext.extra', { ...base, environmentContext: { extra: ['x'] } }],
  ['environmentContext.extra', { ...base, environmentContext: { extra: null } }],
  ['environmentContext.extra.region', { ...base, environmentContext: { extra: { region: 1 } } }],
  ['environmentContext.extra', { ...base, environmentContext: { extra: { 'two\nlines': 'x' } } }],
  ['cwdd', { ...base, environmentContext: { cwdd: '/work' } }],
  // systemInstructions
  ['systemInstructions', { ...base, systemInstructions: 'be brief' }],
  ['systemInstructions', { ...base, systemInstructions: null }],
  ['systemInstructions[1]', { ...base, systemInstructions: ['be brief', 42] }],
  // biome-ignore lint/suspicious/noSparseArray: the hole is the bad input under test
  ['systemInstructions[0]', { ...base, systemInstructions: [, 'be brief'] }],
  // defaultModel
  ['defaultModel', {}],
  ['defaultModel', { defaultModel: 42 }],
  ['defaultModel', { defaultModel: '  ' }],
  // numbers
  ['toolTimeoutMs', { ...base, toolTimeoutMs: '1000' }],
  ['toolTimeoutMs', { ...base, toolTimeoutMs: null }],
  ['toolTimeoutMs', { ...base, toolTimeoutMs: Number.POSITIVE_INFINITY }],
  ['toolTimeoutMs', { ...base, toolTimeoutMs: 2 ** 31 }],
  ['maxToolCallsPerTurn', { ...base, maxToolCallsPerTurn: 2.5 }],
  ['maxToolCallsPerTurn', { ...base, maxToolCallsPerTurn: '5' }],
  ['compactThreshold', { ...base, compactThreshold: '0.5' }],
  ['compactThreshold', { ...base, compactThreshold: null }],
  ['compactThreshold', { ...base, compactThreshold: -0.1 }],
  ['maxToolResultShare', { ...base, maxToolResultShare: 0 }],
  ['maxToolResultShare', { ...base, maxToolResultShare: 1.5 }],
  ['maxToolResultShare', { ...base, maxToolResultShare: -0.25 }],
  ['maxToolResultShare', { ...base, maxToolResultShare: Number.NaN }],
  ['maxToolResultShare', { ...base, maxToolResultShare: '0.25' }],
  ['maxToolResultShare', { ...base, maxToolResultShare: null }],
  ['autoCompact', { ...base, autoCompact: 'no' }],
  ['autoCompact', { ...base, autoCompact: 0 }],
  ['autoCompact', { ...base, autoCompact: null }],
  ['memoryMaxItems', { ...base, memoryMaxItems: 'many' }],
  ['memoryCheckpointInterval', { ...base, memoryCheckpointInterval: 0.5 }],
  ['maxActiveSessions', { ...base, maxActiveSessions: 0 }],
  ['maxActiveSessions', { ...base, maxActiveSessions: 1.5 }],
  ['maxActiveSessions', { ...base, maxActiveSessions: '4' }],
  ['maxActiveSessions', { ...base, maxActiveSessions: null }],
  ['maxSubagentDepth', { ...base, maxSubagentDepth: 0 }],
  ['maxSubagentDepth', { ...base, maxSubagentDepth: '2' }],
  // strings
  ['compactPrompt', { ...base, compactPrompt: 42 }],
  ['compactPrompt', { ...base, compactPrompt: '' }],
  ['compactPrompt', { ...base, compactPrompt: null }],
  ['memoryNamespace', { ...base, memoryNamespace: 7 }],
  ['memoryNamespace', { ...base, memoryNamespace: ' ' }],
  ['compactModel', { ...base, compactModel: 42 }],
  ['memoryModel', { ...base, memoryModel: '' }],
  // functions
  ['onBackgroundError', { ...base, onBackgroundError: 'console' }],
  ['onBackgroundError', { ...base, onBackgroundError: null }],
  // the config itself
  ['AgentConfig', null],
  ['AgentConfig', 'scripted-model'],
  ['AgentConfig', [base]],
  ['toolTimeout', { ...base, toolTimeout: 1000 }],
];

describe('build() checks every AgentConfig field → INVALID_CONFIG naming the field', () => {
  test.each(badConfigs)('%s: %j', async (field, config) => {
    const error = await buildError(config);
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.message).toContain(field);
  });

  test('an optional field given as undefined is the same as leaving it out', async () => {
    const agent = await buildWith({
      ...base,
      personality: undefined,
      environmentContext: { cwd: '/work', shell: undefined },
      toolTimeoutMs: undefined,
      onBackgroundError: undefined,
      maxToolResultShare: undefined,
      autoCompact: undefined,
    });
    await agent.shutdown();
  });

  test('maxToolResultShare accepts (0, 1] and autoCompact a boolean', async () => {
    for (const config of [
      { maxToolResultShare: 1 },
      { maxToolResultShare: 0.01 },
      { autoCompact: false },
      { autoCompact: true },
    ]) {
      await (await buildWith({ ...base, ...config })).shutdown();
    }
  });
});

describe('a checked config reaches the prompt as given, and the host changing it later changes nothing', () => {
  test('personality and environment context, extra fields included, are rendered; later changes are not', async () => {
    const provider = new ScriptedModelProvider({
      responses: [[{ type: 'text', text: 'one' }], [{ type: 'text', text: 'two' }]],
    });
    const config = {
      ...base,
      systemInstructions: ['Be brief.'],
      personality: { name: 'Ada', description: 'A careful helper.' },
      environmentContext: { cwd: '/work', platform: 'linux', extra: { region: 'eu-west' } },
    };
    const agent = await buildWith(config, provider);
    const session = await agent.newSession();
    expect((await (await session.sendMessage('hi')).done).status).toBe('completed');
    // The whole prompt: the system prompt (stable) and the dynamic part, which travels before the user message.
    const promptOf = (index: number): string => {
      const request = provider.requests[index];
      return `${request?.systemPrompt}\n\n${request?.systemPromptParts.dynamic}`;
    };
    const first = promptOf(0);
    expect(first).toContain('<name>Ada</name>');
    expect(first).toContain('A careful helper.');
    expect(first).toContain('cwd: /work');
    expect(first).toContain('region: eu-west');

    // A careless host reuses its config object: the running agent keeps the copy build() checked.
    (config.personality as { name: unknown }).name = 42;
    (config.environmentContext as { cwd: unknown }).cwd = 42;
    (config.environmentContext.extra as Record<string, unknown>).region = { nested: true };
    config.systemInstructions.push(42 as unknown as string);
    const turn = await session.sendMessage('again');
    const types: string[] = [];
    for await (const event of turn) types.push(event.payload.type);
    expect(types).not.toContain('error');
    expect(types.at(-1)).toBe('turn_complete');
    expect(promptOf(1)).toBe(first);
    await agent.shutdown();
  });
});

describe('newSession checks its SessionConfig field by field → INVALID_INPUT', () => {
  test.each<[string, unknown]>([
    ['modelId', { modelId: 42 }],
    ['modelId', { modelId: null }],
    ['systemPromptOverride', { systemPromptOverride: 7 }],
    ['systemPromptOverride', { systemPromptOverride: null }],
    ['modelID', { modelID: 'scripted-model' }],
  ])('%s: %j', async (field, config) => {
    const agent = await buildWith(base);
    const outcome = await agent.newSession(config as never).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(outcome).toMatchObject({ code: 'INVALID_INPUT' });
    expect((outcome as Error).message).toContain(field);
    // The slot stays free.
    await (await agent.newSession()).close();
    await agent.shutdown();
  });
});
