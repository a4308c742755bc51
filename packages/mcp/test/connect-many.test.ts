import { afterEach, expect, test } from 'vitest';
import { connectMcpServers, type McpServerSet } from '../src/index.js';
import {
  call,
  closedPort,
  isRunning,
  startHttpFixture,
  stats,
  stdioConfig,
  stopHttpFixtures,
  toolNamed,
} from './support.js';

const sets: McpServerSet[] = [];

afterEach(async () => {
  await Promise.all(sets.splice(0).map((set) => set.close()));
  await stopHttpFixtures();
});

test('servers that cannot be connected are reported; the others still give their tools', async () => {
  const http = await startHttpFixture();
  const port = await closedPort();
  const set = await connectMcpServers([
    stdioConfig({ name: 'srv' }),
    { name: 'missing', transport: { type: 'stdio', command: '/nonexistent/mcp-server' } },
    { name: 'remote', transport: { type: 'http', url: http.url } },
    { name: 'away', transport: { type: 'http', url: `http://127.0.0.1:${port}/mcp` } },
  ]);
  sets.push(set);

  expect(set.failures.map((failure) => failure.name)).toEqual(['missing', 'away']);
  for (const { error } of set.failures) expect(error.code).toBe('TOOL_EXECUTION_ERROR');
  expect(set.failures[0]?.error.message).toContain(
    'MCP server "missing" (command "/nonexistent/mcp-server")',
  );
  expect(set.failures[1]?.error.message).toContain(`MCP server "away" (url http://127.0.0.1:${port}/mcp)`);

  expect(set.connections.map((connection) => connection.name)).toEqual(['srv', 'remote']);
  expect(set.tools).toHaveLength(24);
  expect(set.tools.slice(0, 12).every((tool) => tool.name.startsWith('srv__'))).toBe(true);
  expect(set.tools.slice(12).every((tool) => tool.name.startsWith('remote__'))).toBe(true);
  expect(await call(toolNamed(set.tools, 'remote__echo'), { text: 'r' })).toEqual({
    content: 'echo: r',
    isError: false,
  });

  const { pid } = await stats(set.tools);
  await set.close();
  expect(isRunning(pid)).toBe(false);
});

test('a bad config or a name used twice rejects before any server is started', async () => {
  await expect(
    connectMcpServers([stdioConfig({ name: 'srv' }), stdioConfig({ name: 'srv' })]),
  ).rejects.toMatchObject({
    code: 'INVALID_CONFIG',
    message: expect.stringContaining('"srv" is used twice'),
  });
  await expect(
    connectMcpServers([
      stdioConfig({ name: 'srv' }),
      { name: 'bad name', transport: { type: 'stdio', command: 'x' } },
    ]),
  ).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
});

test('no servers, no tools', async () => {
  const set = await connectMcpServers([]);
  expect(set).toMatchObject({ tools: [], connections: [], failures: [] });
  await set.close();
});
