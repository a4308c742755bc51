import type { Pool } from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { openPostgresStorage } from '../src/index.js';
import { agentOn, eventTypes, runTurn } from './support/agent.js';
import { dropSchema, randomSchema, testPool } from './support/database.js';

const schema = randomSchema();
let admin: Pool;

beforeAll(() => {
  admin = testPool();
});

afterAll(async () => {
  if (admin === undefined) return;
  await dropSchema(admin, schema);
  await admin.end();
});

test('an Agent session on PostgreSQL is resumed by another Agent with a fresh pool', async () => {
  const firstPool = testPool();
  const first = await openPostgresStorage({ pool: firstPool, schema });
  const { agent, provider } = await agentOn(first, {
    responses: [
      [{ type: 'tool_call', toolName: 'lookup', arguments: { word: 'lease' } }],
      [
        { type: 'reasoning', text: 'The tool answered.', signature: 'sig-1' },
        { type: 'text', text: 'A lease is a claim with an expiry.' },
      ],
    ],
    byPurpose: {
      memory_extraction: [
        [
          {
            type: 'text',
            text: JSON.stringify({ memories: [{ content: 'The user studies leases', category: 'topic' }] }),
          },
        ],
      ],
    },
  });
  const session = await agent.newSession({ systemPromptOverride: 'Answer briefly.' });
  const events = await runTurn(session, 'What is a lease? 50% of "it" \\ please');
  expect(eventTypes(events)).toStrictEqual([
    'tool_call_start',
    'tool_call_end',
    'reasoning_delta',
    'text_delta',
    'turn_complete',
  ]);
  const messagesBefore = session.messages();
  await session.close();
  await agent.shutdown();
  expect(provider.pending).toBe(0);
  await first.close();
  await firstPool.end();

  // Another server: a new pool, a new storage, a new Agent.
  const secondPool = testPool();
  const second = await openPostgresStorage({ pool: secondPool, schema });
  try {
    const { agent: resumedAgent, provider: resumedProvider } = await agentOn(second, {
      responses: [[{ type: 'text', text: 'Yes, it expires.' }]],
    });
    const resumed = await resumedAgent.resumeSession(session.id);
    expect(resumed.messages()).toStrictEqual(messagesBefore);
    expect(eventTypes(await runTurn(resumed, 'Does it expire?'))).toStrictEqual([
      'text_delta',
      'turn_complete',
    ]);
    const request = resumedProvider.requests[0];
    expect(request?.systemPrompt).toContain('Answer briefly.');
    // Memories are in the dynamic prompt part, the system message before the new user message.
    expect(request?.systemPromptParts.dynamic).toContain('The user studies leases');
    expect(request?.messages.slice(0, -2)).toStrictEqual(messagesBefore);
    expect(request?.messages.at(-2)).toStrictEqual({
      type: 'system',
      content: request?.systemPromptParts.dynamic,
    });
    await resumed.close();
    await resumedAgent.shutdown();

    const log = (await second.sessions.loadSession(session.id)) ?? [];
    expect(log.map((event) => event.payload.type)).toStrictEqual([
      'metadata',
      'user_message',
      'tool_call',
      'tool_result',
      'assistant_message',
      'user_message',
      'assistant_message',
    ]);
    expect(log[0]?.payload).toStrictEqual({
      type: 'metadata',
      key: 'session_config',
      value: { modelId: 'scripted-model', systemPromptOverride: 'Answer briefly.' },
    });
    const [summary] = await second.sessions.findSession('50% of "it" \\');
    expect(summary).toMatchObject({
      sessionId: session.id,
      title: 'What is a lease? 50% of "it" \\ please',
      messageCount: 6,
    });
    const memories = await second.memories.search('default', 'leases', 10);
    expect(memories).toMatchObject([
      { content: 'The user studies leases', category: 'topic', sourceSessionId: session.id },
    ]);
  } finally {
    await second.close();
    await secondPool.end();
  }
});

test('the Agent leases the session: a second Agent on another server cannot resume it while it runs', async () => {
  const pools = [testPool(), testPool()];
  const [serverA, serverB] = await Promise.all(pools.map((pool) => openPostgresStorage({ pool, schema })));
  try {
    if (serverA === undefined || serverB === undefined) throw new Error('unreachable');
    const { agent: agentA } = await agentOn(serverA, {
      responses: [[{ type: 'text', text: 'one' }], [{ type: 'text', text: 'two' }]],
    });
    const { agent: agentB } = await agentOn(serverB, { responses: [[{ type: 'text', text: 'three' }]] });
    const created = await agentA.newSession();
    await runTurn(created, 'first');
    await created.close();

    // The Agent takes the lease itself (SessionStorage.acquireSession) before it touches the log, and
    // releases it when the session closes: the host writes no lease code.
    const onA = await agentA.resumeSession(created.id);
    expect(await serverB.sessions.getLease(created.id)).toMatchObject({ owner: serverA.sessions.leaseOwner });
    await expect(agentB.resumeSession(created.id)).rejects.toMatchObject({ code: 'SESSION_BUSY' });
    await runTurn(onA, 'second');
    await onA.close();
    expect(await serverB.sessions.getLease(created.id)).toBeNull();

    const onB = await agentB.resumeSession(created.id);
    expect(await serverA.sessions.getLease(created.id)).toMatchObject({ owner: serverB.sessions.leaseOwner });
    await runTurn(onB, 'third');
    await onB.close();
    const texts = ((await serverA.sessions.loadSession(created.id)) ?? []).flatMap((event) =>
      event.payload.type === 'user_message' || event.payload.type === 'assistant_message'
        ? event.payload.content.map((block) => (block.type === 'text' ? block.text : ''))
        : [],
    );
    expect(texts).toStrictEqual(['first', 'one', 'second', 'two', 'third', 'three']);
    await agentA.shutdown();
    await agentB.shutdown();
  } finally {
    await Promise.all([serverA?.close(), serverB?.close()]);
    await Promise.all(pools.map((pool) => pool.end()));
  }
});
