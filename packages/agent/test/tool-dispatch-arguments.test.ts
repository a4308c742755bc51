import { describe, expect, it } from 'vitest';
import { isAgentError } from '../src/kernel/error.js';
import type { JsonSchema } from '../src/kernel/types.js';
import {
  parseToolArguments,
  TOOL_OUTPUT_LIMIT_BYTES,
  ToolDispatcher,
  truncateToolOutput,
} from '../src/tools/tool-dispatch.js';

import { call, NOTICE, PATH_SCHEMA, runBatch, tool } from './support/tool-dispatch-fixtures.js';

describe('parseToolArguments', () => {
  it('parses JSON text', () => {
    expect(parseToolArguments('{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
  });

  it('treats an empty or white-space string as {}', () => {
    expect(parseToolArguments('')).toEqual({ ok: true, value: {} });
    expect(parseToolArguments('  \n')).toEqual({ ok: true, value: {} });
  });

  it('returns the parser message for text that is not JSON', () => {
    const result = parseToolArguments('{"a":');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(/JSON/);
  });
});

describe('truncateToolOutput', () => {
  it('returns short and exactly-at-limit content unchanged', () => {
    expect(truncateToolOutput('hello')).toBe('hello');
    const exact = 'a'.repeat(TOOL_OUTPUT_LIMIT_BYTES);
    expect(truncateToolOutput(exact)).toBe(exact);
  });

  it('cuts ASCII content at exactly the limit and appends the notice', () => {
    const result = truncateToolOutput('a'.repeat(TOOL_OUTPUT_LIMIT_BYTES + 10));
    expect(result).toBe('a'.repeat(TOOL_OUTPUT_LIMIT_BYTES) + NOTICE);
  });

  it('never splits a 3-byte character that straddles the limit', () => {
    // 'a' x (limit - 1) then '€' (3 bytes): the euro would end 2 bytes past the limit.
    const prefix = 'a'.repeat(TOOL_OUTPUT_LIMIT_BYTES - 1);
    const result = truncateToolOutput(`${prefix}€tail`);
    expect(result).toBe(prefix + NOTICE);
    const kept = result.slice(0, -NOTICE.length);
    expect(Buffer.byteLength(kept, 'utf8')).toBeLessThanOrEqual(TOOL_OUTPUT_LIMIT_BYTES);
  });

  it('never splits a surrogate pair (4-byte emoji) that straddles the limit', () => {
    const prefix = 'a'.repeat(TOOL_OUTPUT_LIMIT_BYTES - 2);
    const result = truncateToolOutput(`${prefix}😀€`);
    expect(result).toBe(prefix + NOTICE);
    expect(result).not.toContain('\uFFFD');
  });

  it('keeps a multi-byte character that ends exactly on the limit', () => {
    const prefix = 'a'.repeat(TOOL_OUTPUT_LIMIT_BYTES - 4);
    const result = truncateToolOutput(`${prefix}😀x`);
    expect(result).toBe(`${prefix}😀${NOTICE}`);
  });
});

describe('ToolDispatcher construction', () => {
  it('lists specs in registration order and answers has / isMutating', () => {
    const dispatcher = new ToolDispatcher({
      tools: [tool({ name: 'read', schema: PATH_SCHEMA }), tool({ name: 'write', isMutating: true })],
      timeoutMs: 1000,
    });
    expect(dispatcher.specs).toEqual([
      { name: 'read', description: 'the read tool', parameters: PATH_SCHEMA },
      { name: 'write', description: 'the write tool', parameters: { type: 'object' } },
    ]);
    expect(dispatcher.has('read')).toBe(true);
    expect(dispatcher.has('nope')).toBe(false);
    expect(dispatcher.isMutating('write')).toBe(true);
    expect(dispatcher.isMutating('read')).toBe(false);
    expect(dispatcher.isMutating('nope')).toBe(false);
  });

  it.each([
    ['an array', [] as unknown as JsonSchema],
    ['a schema without type object', { type: 'string' }],
    ['a schema with no type', { properties: {} }],
    ['a schema that does not compile', { type: 'object', properties: { a: { type: 'strin' } } }],
  ])('rejects %s with INVALID_CONFIG', (_label, schema) => {
    let thrown: unknown;
    try {
      new ToolDispatcher({ tools: [tool({ name: 'bad', schema })], timeoutMs: 1000 });
    } catch (error) {
      thrown = error;
    }
    expect(isAgentError(thrown) && thrown.code === 'INVALID_CONFIG').toBe(true);
    expect((thrown as Error).message).toContain("'bad'");
  });

  it('rejects the same invalid schema object every time, not only the first', () => {
    const schema: JsonSchema = { type: 'object', properties: { a: { type: 'strin' } } };
    for (let attempt = 0; attempt < 2; attempt++) {
      expect(() => new ToolDispatcher({ tools: [tool({ name: 'bad', schema })], timeoutMs: 1000 })).toThrow(
        /INVALID_CONFIG/,
      );
    }
  });

  it('compiles a recursive schema ($ref to the root)', async () => {
    const tree: JsonSchema = {
      type: 'object',
      properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } },
    };
    const dispatcher = new ToolDispatcher({ tools: [tool({ name: 'tree', schema: tree })], timeoutMs: 1000 });
    const { outcomes } = await runBatch(dispatcher, [
      call('tree', { children: [{ name: 'ok', children: [] }] }, '1'),
      call('tree', { children: [{ name: 1 }] }, '2'),
    ]);
    expect(outcomes[0]!.output.isError).toBe(false);
    expect(outcomes[1]!.output.content).toContain('arguments/children/0/name must be string');
  });

  it('accepts draft 2020-12 schemas, unknown formats and an $id shared by two tools', async () => {
    const schema2020: JsonSchema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: 'https://example.com/args',
      type: 'object',
      properties: { url: { type: 'string', format: 'uri' } },
      required: ['url'],
    };
    const dispatcher = new ToolDispatcher({
      tools: [tool({ name: 'a', schema: schema2020 }), tool({ name: 'b', schema: { ...schema2020 } })],
      timeoutMs: 1000,
    });
    const { outcomes } = await runBatch(dispatcher, [call('a', { url: 'x' }), call('b', {})]);
    expect(outcomes[0]!.output).toEqual({ content: 'a ran', isError: false });
    expect(outcomes[1]!.output.isError).toBe(true);
  });
});
