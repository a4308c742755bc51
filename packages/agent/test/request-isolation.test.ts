/**
 * A ChatRequest's `messages` and `tools` are the call's own arrays: a provider that changes them (pushes, cuts,
 * empties) changes neither the session's context nor the next request, nor the tools the next call offers.
 */
import { afterEach, expect, test } from 'vitest';
import type { ChatEvent, ChatRequest } from '../src/index.js';
import { ScriptedModelProvider } from '../src/testing/index.js';
import { buildAgent, defineTool, runTurn, shutdownAgents, userMessage } from './support/agent-fixtures.js';

afterEach(shutdownAgents);

/** A provider that records each request as it came, then mangles its arrays before answering. */
class ManglingProvider extends ScriptedModelProvider {
  override chat(request: ChatRequest, signal: AbortSignal): AsyncIterable<ChatEvent> {
    const answer = super.chat(request, signal);
    request.messages.push({ type: 'user', content: [{ type: 'text', text: 'planted by the provider' }] });
    request.messages.splice(0, 1);
    request.tools.length = 0;
    request.tools.push({ name: 'planted', description: 'planted', parameters: { type: 'object' } });
    return answer;
  }
}

test('a provider that changes the arrays of its request changes neither the context nor the next request', async () => {
  const provider = new ManglingProvider({
    responses: [
      [{ type: 'tool_call', toolName: 'echo', callId: 'c1' }],
      [{ type: 'text', text: 'first done' }],
      [{ type: 'text', text: 'second done' }],
    ],
  });
  const echo = defineTool({ name: 'echo' });
  const { agent } = await buildAgent({ provider, tools: [echo] });
  const session = await agent.newSession();

  expect((await runTurn(session, 'one')).types.at(-1)).toBe('turn_complete');
  expect((await runTurn(session, 'two')).types.at(-1)).toBe('turn_complete');

  // Every request (as recorded before the provider changed it) is the context as it stood, with the tools offered.
  const [first, second, third] = provider.requests;
  expect(first?.messages).toEqual([userMessage('one')]);
  expect(second?.messages.map((message) => message.type)).toEqual(['user', 'tool_call', 'tool_result']);
  expect(third?.messages.map((message) => message.type)).toEqual([
    'user',
    'tool_call',
    'tool_result',
    'assistant',
    'user',
  ]);
  for (const request of provider.requests) expect(request.tools.map((tool) => tool.name)).toEqual(['echo']);
  expect(session.messages().map((message) => message.type)).toEqual([
    'user',
    'tool_call',
    'tool_result',
    'assistant',
    'user',
    'assistant',
  ]);
  expect(session.messages()[0]).toEqual(userMessage('one'));
  expect(JSON.stringify(session.messages())).not.toContain('planted');
});
