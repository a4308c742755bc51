import type { ToolHandler } from '@youyou/agent';
import { DefaultChatTransport, readUIMessageStream, type UIMessage } from 'ai';
import { afterEach, expect, test } from 'vitest';
import { createSession, type Harness, isTurnEnd, readSse, startHarness, TOKENS } from './support/harness.js';
import { userMessage } from './support/ui-chat.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/**
 * A `build` tool that reports `step 1`, then waits until the test saw it on the wire (`release`), then reports
 * `step 2` and answers: the first report can only have reached the client while the call still ran.
 */
function gatedBuild(): { tool: ToolHandler; release: () => void } {
  let release = (): void => undefined;
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    release: () => release(),
    tool: {
      name: 'build',
      description: 'builds the project',
      parametersSchema: { type: 'object', properties: {} },
      isMutating: false,
      execute: async (input) => {
        input.onOutput?.('step 1\n');
        await gate;
        input.onOutput?.('step 2\n');
        return { content: 'built', isError: false };
      },
    },
  };
}

const BUILD_SCRIPT = [
  [{ type: 'tool_call' as const, toolName: 'build', arguments: {}, callId: 'call_b' }],
  [{ type: 'text' as const, text: 'Built.' }],
];

test('SSE: the call’s output arrives as tool_output_delta events while it runs, between its start and end', async () => {
  const build = gatedBuild();
  harness = await startHarness({ tools: [build.tool], responses: BUILD_SCRIPT });
  const sessionId = await createSession(harness);
  const response = await harness.request(`/sessions/${sessionId}/messages`, {
    method: 'POST',
    json: { content: 'Build it' },
  });
  const events: { type: string; [key: string]: unknown }[] = [];
  for await (const message of readSse(response)) {
    events.push(message.data.payload);
    expect(message.event).toBe(message.data.payload.type);
    // The tool waits for this: the delta was on the wire before the call could end.
    if (message.data.payload.type === 'tool_output_delta' && events.length === 2) build.release();
    if (isTurnEnd(message)) break;
  }
  expect(events.map((event) => event.type)).toEqual([
    'tool_call_start',
    'tool_output_delta',
    'tool_output_delta',
    'tool_call_end',
    'text_delta',
    'turn_complete',
  ]);
  expect(events[1]).toEqual({ type: 'tool_output_delta', callId: 'call_b', text: 'step 1\n' });
  expect(events[2]).toEqual({ type: 'tool_output_delta', callId: 'call_b', text: 'step 2\n' });
  expect(events[3]).toMatchObject({ type: 'tool_call_end', output: { content: 'built' } });
  // Not saved: the session's log holds the result, not the live output.
  const saved = await (await harness.request(`/sessions/${sessionId}/messages`)).text();
  expect(saved).toContain('built');
  expect(saved).not.toContain('step 1');
});

test('UI message stream: the output so far is preliminary tool output, replaced by the final one', async () => {
  const build = gatedBuild();
  harness = await startHarness({ tools: [build.tool], responses: BUILD_SCRIPT });
  const sessionId = await createSession(harness);
  const transport = new DefaultChatTransport<UIMessage>({
    api: `${harness.url}/ui/chat`,
    headers: { authorization: `Bearer ${TOKENS.alice}` },
  });
  const stream = await transport.sendMessages({
    chatId: sessionId,
    messages: [userMessage('u1', 'Build it')],
    trigger: 'submit-message',
    messageId: undefined,
    abortSignal: undefined,
  });
  const seen: { state: unknown; output: unknown; preliminary: unknown }[] = [];
  const errors: unknown[] = [];
  let last: UIMessage | undefined;
  // readUIMessageStream is the AI SDK's own processing of the chunks, as useChat does it.
  for await (const message of readUIMessageStream({ stream, onError: (error) => errors.push(error) })) {
    last = message;
    const part = message.parts.find((candidate) => candidate.type === 'dynamic-tool');
    if (part === undefined || part.state !== 'output-available') continue;
    const view = { state: part.state, output: part.output, preliminary: part.preliminary };
    if (JSON.stringify(seen.at(-1)) !== JSON.stringify(view)) seen.push(view);
    if (part.preliminary === true && part.output === 'step 1\n') build.release();
  }
  expect(errors).toEqual([]);
  expect(seen).toEqual([
    { state: 'output-available', output: 'step 1\n', preliminary: true },
    { state: 'output-available', output: 'step 1\nstep 2\n', preliminary: true },
    { state: 'output-available', output: 'built', preliminary: undefined },
  ]);
  expect(last?.parts.some((part) => part.type === 'text' && part.text === 'Built.')).toBe(true);
});
