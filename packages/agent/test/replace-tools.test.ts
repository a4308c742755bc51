import { afterEach, expect, test } from 'vitest';
import { ScriptedModelProvider } from '../src/testing/index.js';
import { buildAgent, collectTurn, deferred, defineTool, shutdownAgents } from './support/agent-fixtures.js';

afterEach(shutdownAgents);

const toolNames = (provider: ScriptedModelProvider, index: number): string[] =>
  (provider.requests[index]?.tools ?? []).map((tool) => tool.name);

test('replaceTools offers the new tools from the next turn on; a running turn keeps its own', async () => {
  const release = deferred<void>();
  const provider = new ScriptedModelProvider({
    responses: [
      [
        { type: 'tool_call', toolName: 'wait', callId: 'call_wait' },
        { type: 'done', stopReason: 'tool_use' },
      ],
      [{ type: 'text', text: 'first' }],
      [
        { type: 'tool_call', toolName: 'added', callId: 'call_added' },
        { type: 'done', stopReason: 'tool_use' },
      ],
      [{ type: 'text', text: 'second' }],
    ],
  });
  let started: (() => void) | undefined;
  const waiting = new Promise<void>((resolve) => {
    started = resolve;
  });
  const wait = defineTool({
    name: 'wait',
    execute: async () => {
      started?.();
      await release.promise;
      return { content: 'waited', isError: false };
    },
  });
  const { agent } = await buildAgent({ provider, tools: [wait] });
  const session = await agent.newSession();

  const first = await session.sendMessage('one');
  const firstDone = collectTurn(first);
  await waiting;
  agent.replaceTools([wait, defineTool({ name: 'added' })]);
  release.resolve();
  await firstDone;
  // Both requests of the running turn offered the tools it started with.
  expect(toolNames(provider, 0)).toEqual(['wait']);
  expect(toolNames(provider, 1)).toEqual(['wait']);

  const second = await collectTurn(await session.sendMessage('two'));
  expect(toolNames(provider, 2)).toEqual(['wait', 'added']);
  expect(second.events.some((event) => event.payload.type === 'turn_complete')).toBe(true);
  const result = provider.requests[3]?.messages.at(-1);
  expect(JSON.stringify(result)).toContain('added ok');
});

test('a bad set is refused as build() refuses it, and the tools stay as they were', async () => {
  const provider = new ScriptedModelProvider({ responses: [[{ type: 'text', text: 'ok' }]] });
  const { agent } = await buildAgent({ provider, tools: [defineTool({ name: 'kept' })] });
  expect(() => agent.replaceTools([defineTool({ name: 'twice' }), defineTool({ name: 'twice' })])).toThrow(
    expect.objectContaining({ code: 'NAME_CONFLICT' }),
  );
  expect(() => agent.replaceTools([defineTool({ name: 'bad name' })])).toThrow(
    expect.objectContaining({ code: 'INVALID_CONFIG' }),
  );
  const session = await agent.newSession();
  await collectTurn(await session.sendMessage('hi'));
  expect(toolNames(provider, 0)).toEqual(['kept']);
});
