import { describe, expect, test } from 'vitest';
import { toToolOutput } from '../src/index.js';
import { base64ByteLength } from '../src/result.js';

describe('toToolOutput', () => {
  test('joins text parts and keeps isError', () => {
    expect(
      toToolOutput({
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
        ],
        isError: true,
      }),
    ).toEqual({ content: 'one\ntwo', isError: true });
  });

  test('describes images and audio by type and size', () => {
    expect(
      toToolOutput({
        content: [
          { type: 'image', data: Buffer.alloc(10).toString('base64'), mimeType: 'image/jpeg' },
          { type: 'audio', data: Buffer.alloc(3).toString('base64'), mimeType: 'audio/wav' },
        ],
      }),
    ).toEqual({ content: '[image: image/jpeg, 10 bytes]\n[audio: audio/wav, 3 bytes]', isError: false });
  });

  test('shows resource links by uri and embedded resources by text, or by uri and size', () => {
    expect(
      toToolOutput({
        content: [
          { type: 'resource_link', uri: 'file:///a', name: 'a' },
          { type: 'resource', resource: { uri: 'file:///b', text: 'bee' } },
          { type: 'resource', resource: { uri: 'file:///c', blob: Buffer.alloc(5).toString('base64') } },
        ],
      }).content,
    ).toBe('[resource: file:///a]\nbee\n[resource: file:///c, unknown type, 5 bytes]');
  });

  test('uses structuredContent only when there are no content parts', () => {
    expect(toToolOutput({ content: [], structuredContent: { a: 1 } })).toEqual({
      content: '{"a":1}',
      isError: false,
    });
    expect(
      toToolOutput({ content: [{ type: 'text', text: 'a is 1' }], structuredContent: { a: 1 } }).content,
    ).toBe('a is 1');
    expect(toToolOutput({ content: [] })).toEqual({ content: '', isError: false });
  });

  test('a content kind it does not know is named, not dropped', () => {
    const result = { content: [{ type: 'hologram' }] } as unknown as Parameters<typeof toToolOutput>[0];
    expect(toToolOutput(result).content).toBe('[hologram content]');
  });

  test('a result of the 2024-10-07 protocol is shown as JSON', () => {
    expect(toToolOutput({ toolResult: { ok: true } })).toEqual({ content: '{"ok":true}', isError: false });
  });

  test('base64ByteLength counts the encoded bytes, padding and line breaks aside', () => {
    for (const size of [0, 1, 2, 3, 4, 5, 100]) {
      expect(base64ByteLength(Buffer.alloc(size, 7).toString('base64'))).toBe(size);
    }
    expect(base64ByteLength('AAEC\nAw==')).toBe(4);
  });
});
