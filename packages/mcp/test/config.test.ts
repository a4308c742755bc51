import { describe, expect, test } from 'vitest';
import { redact } from '../src/config.js';
import { connectMcpServer, type McpServerConfig, validateServerConfig } from '../src/index.js';
import { ServerClient } from '../src/server-client.js';
import { toParametersSchema, toToolHandlers } from '../src/tools.js';

const stdio = { type: 'stdio', command: 'node' } as const;

describe('validateServerConfig', () => {
  test.each([
    ['a name with a space', { name: 'my server', transport: stdio }, 'must match'],
    ['a name of 33 characters', { name: 'n'.repeat(33), transport: stdio }, 'must match'],
    ['an empty name', { name: '', transport: stdio }, 'must match'],
    ['a name with "__"', { name: 'a__b', transport: stdio }, 'without "__"'],
    ['a name ending in "_"', { name: 'files_', transport: stdio }, 'not ending in "_"'],
    ['no transport', { name: 'x' }, 'transport must be an object'],
    [
      'an unknown transport type',
      { name: 'x', transport: { type: 'sse', url: 'http://h' } },
      'must be "stdio" or "http"',
    ],
    ['a stdio transport without command', { name: 'x', transport: { type: 'stdio' } }, 'needs a command'],
    [
      'args that are not strings',
      { name: 'x', transport: { ...stdio, args: [1] } },
      'args must be an array of strings',
    ],
    ['env values that are not strings', { name: 'x', transport: { ...stdio, env: { A: 1 } } }, 'env must be'],
    [
      'an http url that does not parse',
      { name: 'x', transport: { type: 'http', url: 'nope' } },
      'http(s) url',
    ],
    [
      'a url of another scheme',
      { name: 'x', transport: { type: 'http', url: 'ftp://h/mcp' } },
      'http(s) url',
    ],
    [
      'credentials in the url',
      { name: 'x', transport: { type: 'http', url: 'http://u:p@h/mcp' } },
      'in headers',
    ],
    [
      'headers that are not strings',
      { name: 'x', transport: { type: 'http', url: 'http://h', headers: { a: [] } } },
      'headers must be',
    ],
    ['a timeout of 0', { name: 'x', transport: stdio, timeoutMs: 0 }, 'timeoutMs'],
  ])('rejects %s with INVALID_CONFIG', (_label, config, text) => {
    expect(() => validateServerConfig(config)).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
    expect(() => validateServerConfig(config)).toThrow(text);
  });

  test('accepts full configs of both kinds', () => {
    validateServerConfig({
      name: 'fs-1_a',
      transport: { ...stdio, args: ['x'], env: { A: 'b' }, cwd: '/tmp' },
      timeoutMs: 5,
    });
    validateServerConfig({
      name: 'web',
      transport: { type: 'http', url: 'https://h/mcp', headers: { a: 'b' } },
    });
  });

  test('connectMcpServer rejects a bad config before starting anything', async () => {
    const config = { name: 'bad name', transport: stdio } as McpServerConfig;
    await expect(connectMcpServer(config)).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
  });
});

describe('redact', () => {
  test('hides the query, header values and env values', () => {
    const http = {
      type: 'http',
      url: 'https://h.example/mcp?key=abcdefgh12',
      headers: { authorization: 'Bearer tok-12345678' },
    } as const;
    expect(redact('GET https://h.example/mcp?key=abcdefgh12 sent tok-12345678', http)).toBe(
      'GET https://h.example/mcp sent [redacted]',
    );
    expect(redact('key abcdefgh12 leaked', http)).toBe('key [redacted] leaked');
    expect(redact('API_KEY=sk-live-999999 is wrong', { ...stdio, env: { API_KEY: 'sk-live-999999' } })).toBe(
      'API_KEY=[redacted] is wrong',
    );
    // Short values are left alone: they are not secrets and would mangle the text.
    expect(redact('mode on', { ...stdio, env: { MODE: 'on' } })).toBe('mode on');
  });
});

describe('toParametersSchema', () => {
  test('keeps the schema and makes sure it is an object schema', () => {
    expect(toParametersSchema(undefined)).toEqual({ type: 'object' });
    expect(toParametersSchema([])).toEqual({ type: 'object' });
    expect(toParametersSchema({ properties: { a: { type: 'string' } } })).toEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
    });
  });
});

describe('toToolHandlers', () => {
  test('describes each callable tool; readOnlyHint: true alone makes it read-only', () => {
    const server = new ServerClient({ config: { name: 'srv', transport: stdio }, timeoutMs: 1_000 });
    const handlers = toToolHandlers({
      server,
      tools: [
        { name: 'a', title: 'Title A', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
        {
          name: 'b',
          inputSchema: { type: 'object' },
          annotations: { title: 'Annotated B', readOnlyHint: false },
        },
        {
          name: 'c',
          inputSchema: { type: 'object' },
          annotations: { destructiveHint: false, idempotentHint: true },
        },
        { name: 'task', inputSchema: { type: 'object' }, execution: { taskSupport: 'required' } },
        { name: 'maybe-task', inputSchema: { type: 'object' }, execution: { taskSupport: 'optional' } },
      ],
    });
    expect(handlers.map(({ name, description, isMutating }) => ({ name, description, isMutating }))).toEqual([
      { name: 'srv__a', description: 'Title A', isMutating: false },
      { name: 'srv__b', description: 'Annotated B', isMutating: true },
      { name: 'srv__c', description: 'The tool "c" of the MCP server "srv".', isMutating: true },
      {
        name: 'srv__maybe-task',
        description: 'The tool "maybe-task" of the MCP server "srv".',
        isMutating: true,
      },
    ]);
    // idempotentHint: a call of it cut by a crash runs again without asking.
    expect(handlers.map((handler) => handler.idempotent)).toEqual([false, false, true, false]);
  });
});
