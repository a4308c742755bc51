import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { logPayloadOf, messageChars } from '../src/context/context.js';
import { replaySessionEvents } from '../src/context/replay.js';
import { INTERRUPTED_MESSAGE_NOTICE } from '../src/kernel/templates.js';
import type { ContentBlock, Message } from '../src/kernel/types.js';
import type { SessionEventPayload } from '../src/ports/storage.js';

const block: fc.Arbitrary<ContentBlock> = fc.oneof(
  fc.record({ type: fc.constant('text' as const), text: fc.string({ maxLength: 12 }) }),
  fc.record({
    type: fc.constant('image' as const),
    data: fc.base64String({ maxLength: 8 }),
    mediaType: fc.constant('image/png'),
  }),
);
const reasoning: fc.Arbitrary<ContentBlock> = fc.record(
  { type: fc.constant('reasoning' as const), text: fc.string({ maxLength: 8 }), signature: fc.string() },
  { requiredKeys: ['type', 'text'] },
);

/** A stretch of a context as a turn builds it: one message, or a tool call with its result. */
const stretch: fc.Arbitrary<Message[]> = fc.oneof(
  fc.array(block, { minLength: 1, maxLength: 3 }).map((content): Message[] => [{ type: 'user', content }]),
  fc
    .array(fc.oneof(block, reasoning), { maxLength: 3 })
    .map((content): Message[] => [{ type: 'assistant', content, status: 'complete' }]),
  fc.string({ maxLength: 12 }).map((content): Message[] => [{ type: 'system', content }]),
  fc
    .record({
      callId: fc.uuid(),
      toolName: fc.constantFrom('read', 'write', 'search'),
      arguments: fc.oneof(fc.jsonValue(), fc.string()),
      content: fc.string({ maxLength: 12 }),
      isError: fc.boolean(),
    })
    .map(({ callId, toolName, arguments: args, content, isError }): Message[] => [
      { type: 'tool_call', callId, toolName, arguments: args },
      { type: 'tool_result', callId, content, isError },
    ]),
);

/** The log a turn writes for these messages: one payload per message, through the one mapping. */
function logOf(messages: readonly Message[]): SessionEventPayload[] {
  return messages.map((message) => logPayloadOf(message));
}

describe('logPayloadOf and the replay of a log', () => {
  it('replays the log of any context to that context, with its size', () => {
    fc.assert(
      fc.property(fc.array(stretch, { maxLength: 8 }), (stretches) => {
        const messages = stretches.flat();
        const replayed = replaySessionEvents(logOf(messages));
        expect(replayed.messages).toStrictEqual(messages);
        expect(replayed.chars).toBe(messages.reduce((sum, message) => sum + messageChars(message), 0));
        expect(replayed.turnCount).toBe(messages.filter((message) => message.type === 'user').length);
      }),
    );
  });

  it('saves each message type as its own payload type, with the message fields and nothing else', () => {
    const content: ContentBlock[] = [{ type: 'text', text: 'hi' }];
    const cases: [Message, unknown][] = [
      [
        { type: 'user', content },
        { type: 'user_message', content },
      ],
      [
        { type: 'assistant', content, status: 'incomplete' },
        { type: 'assistant_message', content, status: 'incomplete' },
      ],
      [
        { type: 'tool_call', callId: 'c', toolName: 't', arguments: { n: 1 } },
        { type: 'tool_call', callId: 'c', toolName: 't', arguments: { n: 1 } },
      ],
      [
        { type: 'tool_result', callId: 'c', content: 'out', isError: true },
        { type: 'tool_result', callId: 'c', content: 'out', isError: true },
      ],
      [
        { type: 'system', content: 'note' },
        { type: 'system_message', content: 'note' },
      ],
    ];
    for (const [message, payload] of cases) expect(logPayloadOf(message)).toStrictEqual(payload);
  });

  it('replays an interrupted answer followed by the notice the live turn adds after it', () => {
    const interrupted: Message = {
      type: 'assistant',
      content: [{ type: 'text', text: 'par' }],
      status: 'incomplete',
    };
    const replayed = replaySessionEvents(logOf([interrupted]));
    expect(replayed.messages).toStrictEqual([
      interrupted,
      { type: 'system', content: INTERRUPTED_MESSAGE_NOTICE },
    ]);
  });
});
