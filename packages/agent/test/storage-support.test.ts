import { describe, expect, test } from 'vitest';
import { AgentError } from '../src/kernel/error.js';
import type { ContentBlock } from '../src/kernel/types.js';
import {
  checkMemory,
  checkPageLimit,
  checkSessionEvent,
  checkSessionId,
  decodeSessionCursor,
  encodeSessionCursor,
  messageTextOf,
  searchWordsOf,
  sessionTitleOf,
} from '../src/storage/support.js';

/** The error `run` throws; fails the test when it throws nothing. */
function thrown(run: () => void): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

function expectInvalidInput(run: () => void, message?: RegExp): void {
  const error = thrown(run);
  expect(error).toBeInstanceOf(AgentError);
  expect(error).toMatchObject({ code: 'INVALID_INPUT', sourceComponent: 'storage' });
  if (message !== undefined) expect((error as AgentError).message).toMatch(message);
}

const at = new Date(1_700_000_000_000);

describe('checks', () => {
  test('checkSessionId accepts a non-empty string only', () => {
    checkSessionId('s');
    for (const bad of ['', 42, undefined, null]) expectInvalidInput(() => checkSessionId(bad));
  });

  test('checkSessionEvent accepts every payload type the port defines', () => {
    const payloads = [
      { type: 'user_message', content: [{ type: 'text', text: 'hi' }] },
      { type: 'assistant_message', content: [], status: 'incomplete' },
      { type: 'assistant_message', content: [{ type: 'reasoning', text: 'r' }], status: 'complete' },
      { type: 'user_message', content: [{ type: 'image', data: 'AAAA', mediaType: 'image/png' }] },
      { type: 'tool_call', callId: 'c', toolName: 't', arguments: {} },
      { type: 'tool_result', callId: 'c', content: 'out', isError: false },
      { type: 'system_message', content: 'note' },
      { type: 'metadata', key: 'k', value: 1 },
    ];
    for (const payload of payloads) checkSessionEvent({ timestamp: at, payload });
  });

  test('checkSessionEvent refuses bad timestamps, types, content and content blocks', () => {
    const bad: [unknown, RegExp][] = [
      [null, /must be an object/],
      [{ timestamp: '2024-01-01', payload: { type: 'metadata' } }, /valid Date/],
      [{ timestamp: new Date(Number.NaN), payload: { type: 'metadata' } }, /valid Date/],
      [{ timestamp: at }, /`payload` object/],
      [{ timestamp: at, payload: { type: 'telepathy' } }, /unknown session event payload type: telepathy/],
      [{ timestamp: at, payload: { type: 'user_message', content: 'hi' } }, /`content` array/],
      [{ timestamp: at, payload: { type: 'user_message', content: [{ text: 'hi' }] } }, /string `type`/],
      [{ timestamp: at, payload: { type: 'assistant_message', content: [null] } }, /string `type`/],
      [
        { timestamp: at, payload: { type: 'user_message', content: [{ type: 'text', text: 5 }] } },
        /text block of a user_message needs a string `text`/,
      ],
    ];
    for (const [event, message] of bad) expectInvalidInput(() => checkSessionEvent(event), message);
  });

  test('checkMemory requires id, namespace, content and Dates; optional fields must be strings', () => {
    const memory = { id: 'm', namespace: '', content: 'c', createdAt: at, updatedAt: at };
    checkMemory(memory);
    checkMemory({ ...memory, category: 'fact', sourceSessionId: 's' });
    const bad = [
      null,
      { ...memory, id: '' },
      { ...memory, namespace: 1 },
      { ...memory, content: undefined },
      { ...memory, updatedAt: new Date(Number.NaN) },
      { ...memory, category: 3 },
      { ...memory, sourceSessionId: {} },
    ];
    for (const value of bad) expectInvalidInput(() => checkMemory(value));
  });

  test('checkPageLimit accepts safe integers of at least 1', () => {
    checkPageLimit(1);
    checkPageLimit(Number.MAX_SAFE_INTEGER);
    for (const bad of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '5']) {
      expectInvalidInput(() => checkPageLimit(bad), /limit must be an integer of at least 1/);
    }
  });
});

describe('session cursors', () => {
  test('a cursor decodes to the position it was made from', () => {
    for (const position of [
      { updatedAtMs: 0, sessionId: '' },
      { updatedAtMs: 1_700_000_000_123, sessionId: 'a "quoted" id 😀 \0' },
      { updatedAtMs: -5, sessionId: 'before 1970' },
    ]) {
      const cursor = encodeSessionCursor(position);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeSessionCursor(cursor)).toEqual(position);
    }
  });

  test('anything that is not a cursor of ours is INVALID_INPUT', () => {
    const good = encodeSessionCursor({ updatedAtMs: 5, sessionId: 'a' });
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const bad = [
      '',
      'not a cursor!',
      `${good}!`,
      'e30',
      encode({ updatedAt: 5, sessionId: 'a' }),
      encode([2, 5, 'a']),
      encode([1, 5]),
      encode([1, '5', 'a']),
      encode([1, 1.5, 'a']),
      encode([1, 5, 7]),
    ];
    for (const cursor of bad) expectInvalidInput(() => decodeSessionCursor(cursor), /malformed cursor/);
    expectInvalidInput(() => decodeSessionCursor(5), /cursor must be a string/);
  });
});

describe('text', () => {
  test('messageTextOf joins the text blocks with a space and skips the others', () => {
    const content: ContentBlock[] = [
      { type: 'text', text: 'one' },
      { type: 'image', data: 'AAAA', mediaType: 'image/png' },
      { type: 'reasoning', text: 'hidden' },
      { type: 'text', text: 'two' },
    ];
    expect(messageTextOf(content)).toBe('one two');
    expect(messageTextOf([])).toBe('');
    expect(
      messageTextOf([
        { type: 'text', text: '' },
        { type: 'text', text: 'x' },
      ]),
    ).toBe(' x');
  });

  test('sessionTitleOf keeps 100 code points and never splits a surrogate pair', () => {
    expect(sessionTitleOf('short')).toBe('short');
    expect(sessionTitleOf('a'.repeat(150))).toBe('a'.repeat(100));
    const emoji = '😀'.repeat(150);
    expect(sessionTitleOf(emoji)).toBe('😀'.repeat(100));
    expect(sessionTitleOf(`${'a'.repeat(99)}😀b`)).toBe(`${'a'.repeat(99)}😀`);
    // A lone surrogate (hostile or cut text) counts as one code point, as a string's iterator counts it.
    for (const text of [
      `${'a'.repeat(99)}\ud800b`,
      `${'a'.repeat(99)}\udc00😀`,
      `${'😀'.repeat(60)}\ud83d${'x'.repeat(60)}`,
      `${'b'.repeat(98)}😀😀😀`,
      '日本語'.repeat(50),
    ]) {
      expect(sessionTitleOf(text)).toBe([...text].slice(0, 100).join(''));
    }
  });

  test('searchWordsOf gives the distinct lower-cased words of any script', () => {
    expect(searchWordsOf('Hello, hello WORLD! café 日本語 x2')).toEqual([
      'hello',
      'world',
      'café',
      '日本語',
      'x2',
    ]);
    expect(searchWordsOf('  ...  ')).toEqual([]);
  });
});
