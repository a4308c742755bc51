import type { Message } from '@youyou/agent';
import { describe, expect, test } from 'vitest';
import { aiSdkProvider } from '../src/index.js';
import { MISSING_RESULT_TEXT, SYSTEM_AS_USER_PREFIX } from '../src/prompt.js';
import { chatRequest, collect, finish, mockModel, modelInfo, textParts } from './support.js';

/** Sends one request through a provider around the mock and returns the prompt the mock received. */
async function promptFor(
  messages: Message[],
  options: { systemMessages?: 'leading' | 'in-place' | 'as-user'; provider?: string } = {},
): Promise<unknown[]> {
  const model = mockModel([[...textParts('ok'), finish('stop')]], options.provider);
  const provider = aiSdkProvider({
    id: 'ai-sdk',
    models: [{ model, info: modelInfo() }],
    ...(options.systemMessages === undefined ? {} : { systemMessages: options.systemMessages }),
  });
  await collect(provider, chatRequest(messages));
  return model.doStreamCalls[0]?.prompt ?? [];
}

describe('the prompt sent to the model', () => {
  test('a history with every message type maps to system, user, assistant and tool messages', async () => {
    const history: Message[] = [
      { type: 'system', content: 'Summary of earlier work.' },
      {
        type: 'user',
        content: [
          { type: 'text', text: 'Look at this.' },
          { type: 'image', data: 'iVBORw0=', mediaType: 'image/png' },
        ],
      },
      {
        type: 'assistant',
        content: [
          { type: 'reasoning', text: 'Signed thought.', signature: 'sig-1' },
          { type: 'reasoning', text: 'Unsigned thought.' },
          { type: 'text', text: 'Let me check two things.' },
        ],
        status: 'complete',
      },
      { type: 'tool_call', callId: 'a', toolName: 'read', arguments: { path: 'x.txt' } },
      { type: 'tool_call', callId: 'b', toolName: 'list', arguments: {} },
      // Results arrive out of call order; they are sent in call order.
      { type: 'tool_result', callId: 'b', content: 'x.txt', isError: false },
      { type: 'tool_result', callId: 'a', content: 'permission denied', isError: true },
      { type: 'assistant', content: [{ type: 'text', text: 'Partial' }], status: 'incomplete' },
      { type: 'system', content: '[interrupted]' },
      { type: 'user', content: [{ type: 'text', text: 'Go on.' }] },
    ];

    expect(await promptFor(history, { systemMessages: 'in-place' })).toEqual([
      { role: 'system', content: 'You are a test.' },
      { role: 'system', content: 'Summary of earlier work.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look at this.' },
          { type: 'file', mediaType: 'image/png', data: 'iVBORw0=' },
        ],
      },
      {
        role: 'assistant',
        content: [
          {
            type: 'reasoning',
            text: 'Signed thought.',
            providerOptions: { youyou: { signature: 'sig-1' }, 'mock-provider': { signature: 'sig-1' } },
          },
          { type: 'reasoning', text: 'Unsigned thought.' },
          { type: 'text', text: 'Let me check two things.' },
          { type: 'tool-call', toolCallId: 'a', toolName: 'read', input: { path: 'x.txt' } },
          { type: 'tool-call', toolCallId: 'b', toolName: 'list', input: {} },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'a',
            toolName: 'read',
            output: { type: 'error-text', value: 'permission denied' },
          },
          {
            type: 'tool-result',
            toolCallId: 'b',
            toolName: 'list',
            output: { type: 'text', value: 'x.txt' },
          },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'Partial' }] },
      { role: 'system', content: '[interrupted]' },
      { role: 'user', content: [{ type: 'text', text: 'Go on.' }] },
    ]);
  });

  test('tool calls without assistant content get an assistant message of their own', async () => {
    const prompt = await promptFor([
      { type: 'user', content: [{ type: 'text', text: 'hi' }] },
      { type: 'tool_call', callId: 'a', toolName: 'read', arguments: 'not json' },
      { type: 'tool_result', callId: 'a', content: 'bad arguments', isError: true },
    ]);
    expect(prompt.slice(2)).toEqual([
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'a', toolName: 'read', input: 'not json' }],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'a',
            toolName: 'read',
            output: { type: 'error-text', value: 'bad arguments' },
          },
        ],
      },
    ]);
  });

  test('each step of a tool loop only adds to the prompt of the step before: a call after a result is a new reply', async () => {
    const step2: Message[] = [
      { type: 'system', content: 'Dynamic part.' },
      { type: 'user', content: [{ type: 'text', text: 'look twice' }] },
      { type: 'tool_call', callId: 'a', toolName: 'read', arguments: { q: 'a' } },
      { type: 'tool_result', callId: 'a', content: 'found a', isError: false },
    ];
    const step3: Message[] = [
      ...step2,
      { type: 'tool_call', callId: 'b', toolName: 'read', arguments: { q: 'b' } },
      { type: 'tool_result', callId: 'b', content: 'found b', isError: false },
    ];
    const before = await promptFor(step2);
    const after = await promptFor(step3);
    expect(JSON.stringify(after).startsWith(JSON.stringify(before).slice(0, -1))).toBe(true);
    expect(after.slice(before.length)).toEqual([
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'b', toolName: 'read', input: { q: 'b' } }],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'b',
            toolName: 'read',
            output: { type: 'text', value: 'found b' },
          },
        ],
      },
    ]);
  });

  test('a call without a result gets a synthetic error result; a result without its call becomes a user note', async () => {
    const prompt = await promptFor([
      { type: 'user', content: [{ type: 'text', text: 'hi' }] },
      { type: 'tool_call', callId: 'a', toolName: 'read', arguments: {} },
      { type: 'tool_result', callId: 'ghost', content: 'orphan output', isError: false },
      { type: 'user', content: [{ type: 'text', text: 'again' }] },
      { type: 'tool_result', callId: 'gone', content: 'late output', isError: true },
    ]);
    expect(prompt.slice(2)).toEqual([
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'a', toolName: 'read', input: {} }] },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'a',
            toolName: 'read',
            output: { type: 'error-text', value: MISSING_RESULT_TEXT },
          },
        ],
      },
      // The note waits until the tool message is out: nothing may come between calls and results.
      { role: 'user', content: [{ type: 'text', text: expect.stringContaining('orphan output') }] },
      { role: 'user', content: [{ type: 'text', text: 'again' }] },
      {
        role: 'user',
        content: [{ type: 'text', text: expect.stringMatching(/gone.*failed[\s\S]*late output/) }],
      },
    ]);
  });

  test("by default ('leading') system messages before the conversation stay system, later ones become user messages", async () => {
    const prompt = await promptFor([
      { type: 'system', content: 'Summary of earlier work.' },
      { type: 'user', content: [{ type: 'text', text: 'hi' }] },
      { type: 'system', content: '[interrupted]' },
    ]);
    expect(prompt).toEqual([
      { role: 'system', content: 'You are a test.' },
      { role: 'system', content: 'Summary of earlier work.' },
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'user', content: [{ type: 'text', text: `${SYSTEM_AS_USER_PREFIX}[interrupted]` }] },
    ]);
  });

  test("systemMessages 'as-user' sends history system messages as user messages; the system prompt stays first", async () => {
    const prompt = await promptFor(
      [
        { type: 'user', content: [{ type: 'text', text: 'hi' }] },
        { type: 'system', content: 'Skill: be terse.' },
      ],
      { systemMessages: 'as-user' },
    );
    expect(prompt).toEqual([
      { role: 'system', content: 'You are a test.' },
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'user', content: [{ type: 'text', text: `${SYSTEM_AS_USER_PREFIX}Skill: be terse.` }] },
    ]);
  });

  test('an empty system prompt sends no system message; empty text and empty assistant messages are left out', async () => {
    const model = mockModel([[...textParts('ok'), finish('stop')]]);
    const provider = aiSdkProvider({ id: 'ai-sdk', models: [{ model, info: modelInfo() }] });
    await collect(
      provider,
      chatRequest(
        [
          { type: 'user', content: [{ type: 'text', text: 'hi' }] },
          { type: 'assistant', content: [{ type: 'text', text: '' }], status: 'incomplete' },
          { type: 'user', content: [{ type: 'text', text: 'hello?' }] },
        ],
        { systemPrompt: '', systemPromptParts: { stable: '', dynamic: '' } },
      ),
    );
    expect(model.doStreamCalls[0]?.prompt).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      { role: 'user', content: [{ type: 'text', text: 'hello?' }] },
    ]);
  });

  test('request settings and per-model providerOptions reach doStream', async () => {
    const model = mockModel([[...textParts('ok'), finish('stop')]]);
    const providerOptions = { anthropic: { thinking: { type: 'enabled', budgetTokens: 2000 } } };
    const provider = aiSdkProvider({ id: 'ai-sdk', models: [{ model, info: modelInfo(), providerOptions }] });
    await collect(
      provider,
      chatRequest([{ type: 'user', content: [{ type: 'text', text: 'hi' }] }], {
        maxOutputTokens: 512,
        temperature: 0.2,
        tools: [{ name: 'read', description: 'Reads a file.', parameters: { type: 'object' } }],
      }),
    );
    const call = model.doStreamCalls[0];
    expect(call?.maxOutputTokens).toBe(512);
    expect(call?.temperature).toBe(0.2);
    expect(call?.providerOptions).toEqual(providerOptions);
    expect(call?.tools).toEqual([
      { type: 'function', name: 'read', description: 'Reads a file.', inputSchema: { type: 'object' } },
    ]);
  });
});
