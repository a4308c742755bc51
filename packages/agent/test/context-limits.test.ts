import { describe, expect, test } from 'vitest';
import {
  capToolResult,
  cutBlocks,
  shrinkMessage,
  toolResultLimitChars,
} from '../src/context/context-limits.js';
import { applyPruning, prunableCallIds } from '../src/context/pruning.js';
import type { Message } from '../src/kernel/types.js';

/** True when the text holds a lone surrogate (a character cut in half). */
function hasLoneSurrogate(text: string): boolean {
  return /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}

describe('cutting a message to fit the window', () => {
  test('the limit is the share of the window left after the prompt and tools', () => {
    expect(toolResultLimitChars({ contextWindow: 128_000, promptChars: 0, toolsChars: 0, share: 0.25 })).toBe(
      128_000,
    );
    expect(
      toolResultLimitChars({ contextWindow: 128_000, promptChars: 40_000, toolsChars: 8_000, share: 0.25 }),
    ).toBe((128_000 - 12_000) * 0.25 * 4);
    // A prompt larger than the window leaves a tenth of it, never nothing.
    expect(
      toolResultLimitChars({ contextWindow: 10_000, promptChars: 80_000, toolsChars: 0, share: 1 }),
    ).toBe(4_000);
  });

  test('a cut keeps head and tail, says how much went, and never splits a character', () => {
    const text = '😀'.repeat(50_000);
    const cut = capToolResult(text, 10_001);
    expect(hasLoneSurrogate(cut)).toBe(false);
    expect(cut.length).toBeLessThan(10_001 + 400);
    expect(cut).toMatch(/\d+ of 100000 characters/);
    expect(capToolResult(text, 10_001)).toBe(cut);
    expect(capToolResult('short', 10)).toBe('short');
  });

  test('blocks and messages are cut only when over the limit; images stay', () => {
    const image = { type: 'image', data: 'AAAA', mediaType: 'image/png' } as const;
    const blocks = [{ type: 'text' as const, text: 'a'.repeat(50_000) }, image];
    const cut = cutBlocks(blocks, 10_000);
    expect(cut[1]).toEqual(image);
    expect(cut[0]?.type === 'text' && cut[0].text.length).toBeLessThan(10_400);
    const small = [{ type: 'text' as const, text: 'hello' }];
    expect(cutBlocks(small, 10_000)).toBe(small);
    const call: Message = {
      type: 'tool_call',
      callId: 'c',
      toolName: 't',
      arguments: { x: 'y'.repeat(9_000) },
    };
    expect(shrinkMessage(call, 2_000)).toBe(call);
  });
});

describe('pruning', () => {
  const turn = (index: number, size: number): Message[] => [
    { type: 'user', content: [{ type: 'text', text: `q${index}` }] },
    { type: 'tool_call', callId: `c${index}`, toolName: 'read', arguments: { path: `f${index}` } },
    {
      type: 'tool_result',
      callId: `c${index}`,
      content: `head ${index}\n${'x'.repeat(size)}`,
      isError: false,
    },
    { type: 'assistant', content: [{ type: 'text', text: `a${index}` }], status: 'complete' },
  ];

  test('only big results before the last two user turns are pruned, to a stub naming call, size and first line', () => {
    const messages = [...turn(1, 5_000), ...turn(2, 10), ...turn(3, 5_000), ...turn(4, 5_000)];
    expect(prunableCallIds(messages)).toEqual(['c1']);
    const pruned = applyPruning(messages, new Set(['c1']));
    expect(pruned).toHaveLength(messages.length);
    const stub = pruned[2];
    expect(stub?.type === 'tool_result' && stub.content).toMatch(
      /read\(\{"path":"f1"\}\) returned 5007 characters/,
    );
    expect(stub?.type === 'tool_result' && stub.content).toContain('head 1');
    expect(pruned.slice(3)).toEqual(messages.slice(3));
    // A stub is small: pruning again finds nothing more to do.
    expect(prunableCallIds(pruned)).toEqual([]);
    expect(applyPruning(messages, new Set(['unknown']))).toBe(messages);
  });

  test('fewer than two user turns: nothing is pruned', () => {
    expect(prunableCallIds(turn(1, 50_000))).toEqual([]);
  });
});
