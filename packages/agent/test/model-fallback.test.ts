/**
 * Fallback models: a call whose model fails with a retryable error before any event moves to the next model of
 * `fallbackModels` (any provider); a `model_fallback` event says so, the usage is the answering model's, and the
 * session's model stays the same for the next call.
 */
import { afterEach, describe, expect, test } from 'vitest';
import {
  type Agent,
  AgentBuilder,
  type AgentConfig,
  AgentError,
  type AgentEventPayload,
  InMemorySessionStorage,
} from '../src/index.js';
import { ScriptedModelProvider, scriptedModel } from '../src/testing/index.js';
import { buildAgent, collectTurn, runTurn, shutdownAgents } from './support/agent-fixtures.js';
import { expectCode } from './support/common.js';

const agents: Agent[] = [];
afterEach(async () => {
  await shutdownAgents();
  await Promise.all(agents.splice(0).map((agent) => agent.shutdown()));
});

const overloaded = () =>
  new AgentError({ code: 'PROVIDER_ERROR', message: 'HTTP 529: overloaded', retryable: true });
const badRequest = () => new AgentError({ code: 'PROVIDER_ERROR', message: 'HTTP 400: bad request' });

const PRIMARY = scriptedModel({ id: 'primary', pricing: { inputPerMillion: 1, outputPerMillion: 1 } });
const BACKUP = scriptedModel({ id: 'backup', pricing: { inputPerMillion: 100, outputPerMillion: 100 } });
const LAST = scriptedModel({ id: 'last' });

function fallbacks(payloads: readonly AgentEventPayload[]) {
  return payloads.flatMap((payload) => (payload.type === 'model_fallback' ? [payload] : []));
}

describe('fallback models', () => {
  test('a retryable failure moves the call to the next model; usage and cost are the answering model’s; the session keeps its model', async () => {
    const primary = new ScriptedModelProvider({
      id: 'vendor-a',
      models: [PRIMARY],
      responses: [[{ type: 'error', error: overloaded() }], [{ type: 'text', text: 'primary again' }]],
    });
    const backup = new ScriptedModelProvider({
      id: 'vendor-b',
      models: [BACKUP, LAST],
      responses: [
        [
          { type: 'text', text: 'from backup' },
          { type: 'usage', usage: { inputTokens: 10, outputTokens: 10 } },
        ],
      ],
    });
    const agent = await agentWith(primary, backup, ['backup']);
    const session = await agent.newSession();
    const turn = await runTurn(session, 'hi');

    expect(fallbacks(turn.payloads)).toEqual([
      {
        type: 'model_fallback',
        from: 'primary',
        to: 'backup',
        reason: expect.objectContaining({ code: 'PROVIDER_ERROR', retryable: true }),
      },
    ]);
    expect(turn.types.indexOf('model_fallback')).toBeLessThan(turn.types.indexOf('text_delta'));
    expect(backup.requests.map((request) => request.modelId)).toEqual(['backup']);
    const usage = turn.payloads.find((payload) => payload.type === 'usage');
    expect(usage).toMatchObject({ providerId: 'vendor-b', modelId: 'backup', costUsd: 0.002 });
    expect(turn.errors).toEqual([]);

    const next = await runTurn(session, 'again');
    expect(fallbacks(next.payloads)).toEqual([]);
    expect(primary.requests.map((request) => request.modelId)).toEqual(['primary', 'primary']);
  });

  test('each model of the list is tried in turn; when all fail, the last failure ends the turn', async () => {
    const primary = new ScriptedModelProvider({
      id: 'vendor-a',
      models: [PRIMARY],
      responses: [[{ type: 'error', error: overloaded() }]],
    });
    const backup = new ScriptedModelProvider({
      id: 'vendor-b',
      models: [BACKUP, LAST],
      responses: [[{ type: 'error', error: overloaded() }], [{ type: 'error', error: overloaded() }]],
    });
    const agent = await agentWith(primary, backup, ['backup', 'last']);
    const session = await agent.newSession();
    const turn = await runTurn(session, 'hi');
    expect(fallbacks(turn.payloads).map(({ from, to }) => [from, to])).toEqual([
      ['primary', 'backup'],
      ['backup', 'last'],
    ]);
    expect(turn.errors.map((error) => error.code)).toEqual(['PROVIDER_ERROR']);
    expect(turn.types.at(-1)).toBe('turn_complete');
  });

  test('a failure that is not retryable, or one after the answer began, does not move the call', async () => {
    const primary = new ScriptedModelProvider({
      id: 'vendor-a',
      models: [PRIMARY],
      responses: [
        [{ type: 'error', error: badRequest() }],
        [
          { type: 'text', text: 'half' },
          { type: 'error', error: overloaded() },
        ],
      ],
    });
    const backup = new ScriptedModelProvider({ id: 'vendor-b', models: [BACKUP, LAST] });
    const agent = await agentWith(primary, backup, ['backup']);
    const session = await agent.newSession();
    const first = await runTurn(session, 'one');
    const second = await runTurn(session, 'two');
    expect(fallbacks([...first.payloads, ...second.payloads])).toEqual([]);
    expect(backup.requests).toHaveLength(0);
    expect(session.messages().at(-2)).toMatchObject({ type: 'assistant', status: 'incomplete' });
  });

  test('a session’s own fallbackModels replace the agent’s, survive a resume, and must name registered models', async () => {
    const storage = new InMemorySessionStorage();
    const primary = new ScriptedModelProvider({
      id: 'vendor-a',
      models: [PRIMARY],
      responses: [[{ type: 'error', error: overloaded() }]],
    });
    const backup = new ScriptedModelProvider({
      id: 'vendor-b',
      models: [BACKUP, LAST],
      responses: [[{ type: 'text', text: 'last answered' }]],
    });
    const agent = await agentWith(primary, backup, ['backup'], storage);
    await expectCode(agent.newSession({ fallbackModels: ['nowhere'] }), 'MODEL_NOT_SUPPORTED');
    await expectCode(agent.newSession({ fallbackModels: 'last' as unknown as string[] }), 'INVALID_INPUT');
    const created = await agent.newSession({ fallbackModels: ['last'] });
    const id = created.id;
    await created.close();
    const resumed = await agent.resumeSession(id);
    const turn = await runTurn(resumed, 'hi');
    expect(fallbacks(turn.payloads).map(({ to }) => to)).toEqual(['last']);
    expect(backup.requests.map((request) => request.modelId)).toEqual(['last']);
  });

  test('fallbackSticky: after a fallback the next calls go to the model that answered; when it fails, the session’s own model is tried last', async () => {
    const primary = new ScriptedModelProvider({
      id: 'vendor-a',
      models: [PRIMARY],
      responses: [[{ type: 'error', error: overloaded() }], [{ type: 'text', text: 'primary is back' }]],
    });
    const backup = new ScriptedModelProvider({
      id: 'vendor-b',
      models: [BACKUP, LAST],
      responses: [
        [{ type: 'text', text: 'backup one' }],
        [{ type: 'text', text: 'backup two' }],
        [{ type: 'error', error: overloaded() }],
      ],
    });
    const agent = await agentWith(primary, backup, ['backup'], undefined, { fallbackSticky: true });
    const session = await agent.newSession();
    await runTurn(session, 'one');
    const second = await runTurn(session, 'two');
    expect(fallbacks(second.payloads)).toEqual([]);
    expect(primary.requests).toHaveLength(1);
    expect(backup.requests.map((request) => request.modelId)).toEqual(['backup', 'backup']);
    const third = await runTurn(session, 'three');
    expect(fallbacks(third.payloads).map(({ from, to }) => [from, to])).toEqual([['backup', 'primary']]);
    expect(primary.requests).toHaveLength(2);
    await expect(
      buildAgent({ provider: new ScriptedModelProvider(), config: { fallbackSticky: 'yes' as never } }),
    ).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
  });

  test('build() refuses fallbackModels that no provider offers', async () => {
    await expect(
      buildAgent({ provider: new ScriptedModelProvider(), config: { fallbackModels: ['ghost'] } }),
    ).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
  });

  test('compaction calls fall back too, attributed to the model that answered', async () => {
    const small = scriptedModel({ id: 'primary', contextWindow: 2_000 });
    const primary = new ScriptedModelProvider({
      id: 'vendor-a',
      models: [small],
      responses: [
        [
          { type: 'text', text: 'one' },
          { type: 'usage', usage: { inputTokens: 1_900, outputTokens: 1 } },
        ],
        [{ type: 'text', text: 'two' }],
      ],
      byPurpose: { compaction: [[{ type: 'error', error: overloaded() }]] },
    });
    const backup = new ScriptedModelProvider({
      id: 'vendor-b',
      models: [BACKUP, LAST],
      byPurpose: {
        compaction: [
          [
            { type: 'text', text: 'SUMMARY' },
            { type: 'usage', usage: { inputTokens: 5, outputTokens: 5 } },
          ],
        ],
      },
    });
    const agent = await agentWith(primary, backup, ['backup'], undefined, { compactThreshold: 0.5 });
    const session = await agent.newSession();
    await runTurn(session, 'one');
    const turn = await collectTurn(await session.sendMessage('two'));
    expect(fallbacks(turn.payloads).map(({ from, to }) => [from, to])).toEqual([['primary', 'backup']]);
    expect(turn.types).toContain('context_compacted');
    const compactionUsage = turn.payloads.find(
      (payload) => payload.type === 'usage' && payload.purpose === 'compaction',
    );
    expect(compactionUsage).toMatchObject({ providerId: 'vendor-b', modelId: 'backup' });
  });
});

async function agentWith(
  primary: ScriptedModelProvider,
  backup: ScriptedModelProvider,
  fallbackModels: string[],
  sessionStorage?: InMemorySessionStorage,
  config: Partial<AgentConfig> = {},
) {
  let builder = new AgentBuilder({ defaultModel: 'primary', fallbackModels, ...config })
    .registerModelProvider(primary)
    .registerModelProvider(backup);
  if (sessionStorage !== undefined) builder = builder.registerSessionStorage(sessionStorage);
  const agent = await builder.build();
  agents.push(agent);
  return agent;
}
