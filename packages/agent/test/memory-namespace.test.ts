import { afterEach, expect, test } from 'vitest';
import { InMemoryMemoryStorage, InMemorySessionStorage, isAgentError } from '../src/index.js';
import { ScriptedModelProvider, scriptedModel } from '../src/testing/index.js';
import { buildAgent, runTurn, shutdownAgents } from './support/agent-fixtures.js';

afterEach(shutdownAgents);

/** Turns answer `answer N`; each memory extraction answers the next of `facts` as one memory. */
function providerExtracting(facts: string[]): ScriptedModelProvider {
  return new ScriptedModelProvider({
    models: [scriptedModel()],
    responses: Array.from({ length: 8 }, (_, index) => [{ type: 'text', text: `answer ${index + 1}` }]),
    byPurpose: {
      memory_extraction: facts.map((content) => [
        { type: 'text', text: JSON.stringify({ memories: [{ content, category: 'fact' }] }) },
      ]),
    },
  });
}

test("a session's memoryNamespace is where its memories are saved and read, and a resume keeps it", async () => {
  const memories = new InMemoryMemoryStorage();
  const sessions = new InMemorySessionStorage();
  const provider = providerExtracting(['Alice keeps her keys under the mat.', 'The local user likes tea.']);
  const { agent } = await buildAgent({ provider, memoryStorage: memories, sessionStorage: sessions });

  const alice = await agent.newSession({ memoryNamespace: 'tenant:alice' });
  await runTurn(alice, 'remember where my keys are');
  await alice.close();
  expect((await memories.search('tenant:alice', '', 10)).map((memory) => memory.content)).toEqual([
    'Alice keeps her keys under the mat.',
  ]);
  expect(await memories.search('default', '', 10)).toEqual([]);

  const local = await agent.newSession();
  await runTurn(local, 'hello');
  await local.close();
  expect(provider.requests.at(-2)?.systemPromptParts.dynamic).not.toContain('keys under the mat');
  expect((await memories.search('default', '', 10)).map((memory) => memory.content)).toEqual([
    'The local user likes tea.',
  ]);

  // Resumed without naming a namespace: the one it was created with, from its log.
  const resumed = await agent.resumeSession(alice.id);
  await runTurn(resumed, 'and now?');
  const prompt = provider.requests.at(-1)?.systemPromptParts.dynamic ?? '';
  expect(prompt).toContain('keys under the mat');
  expect(prompt).not.toContain('likes tea');
});

test('a memoryNamespace that is not a non-empty string is INVALID_INPUT', async () => {
  const { agent } = await buildAgent({
    provider: providerExtracting([]),
    memoryStorage: new InMemoryMemoryStorage(),
  });
  for (const memoryNamespace of ['', 'x'.repeat(257), 7]) {
    const error = await agent.newSession({ memoryNamespace } as { memoryNamespace: string }).catch((e) => e);
    expect(isAgentError(error) && error.code).toBe('INVALID_INPUT');
  }
});
