import { expect, test } from 'vitest';
import { chatRequestProblems, responsesRequestProblems } from '../../../test-support/openai-wire.js';

// The history tests rely on these checkers; they must see what the APIs reject.

test('the Chat Completions checker finds orphan results, unanswered calls and bad roles', () => {
  expect(
    chatRequestProblems({
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'tool', tool_call_id: 'x', content: 'orphan' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'user', content: 'next' },
        { role: 'robot', content: 'beep' },
        { role: 'assistant', content: null },
      ],
    }),
  ).toEqual([
    'message 1: tool result x has no call before it',
    'message 3: calls a have no result',
    'message 4: invalid role robot',
    'message 5: assistant message without content or tool calls',
  ]);
});

test('the Responses checker finds orphan outputs, unanswered calls and stranded reasoning items', () => {
  expect(
    responsesRequestProblems({
      input: [
        { type: 'function_call_output', call_id: 'x', output: 'orphan' },
        { type: 'reasoning', id: 'rs', summary: [], encrypted_content: 'e' },
        { type: 'message', role: 'user', content: 'hi' },
        { type: 'function_call', call_id: 'a', name: 'f', arguments: '{}' },
        { type: 'reasoning', id: 'rs2', summary: [] },
      ],
    }),
  ).toEqual([
    'item 0: output x has no call before it',
    'item 1: reasoning item without its following output',
    'item 4: reasoning without encrypted content',
    'item 4: reasoning item without its following output',
    'call a has no output',
  ]);
});
