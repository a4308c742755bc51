import { isAgentError } from '@youyou/agent';
import { afterEach, describe, expect, test } from 'vitest';
import { connectMcpServer, type McpServerConnection } from '../src/index.js';
import {
  call,
  closedPort,
  type HttpFixture,
  startHttpFixture,
  stats,
  stopHttpFixtures,
  toolNamed,
} from './support.js';

const connections: McpServerConnection[] = [];

async function connect(fixture: HttpFixture, headers?: Record<string, string>): Promise<McpServerConnection> {
  const connection = await connectMcpServer({
    name: 'srv',
    transport: { type: 'http', url: fixture.url, ...(headers === undefined ? {} : { headers }) },
  });
  connections.push(connection);
  return connection;
}

afterEach(async () => {
  await Promise.all(connections.splice(0).map((connection) => connection.close()));
  await stopHttpFixtures();
});

describe('an MCP server over Streamable HTTP', () => {
  test('lists the tools with prefixed names, mutating flags and schemas', async () => {
    const { tools } = await connect(await startHttpFixture());
    expect(tools).toHaveLength(12);
    expect(tools.map((tool) => tool.name)).toContain('srv__notes_read_2');
    const echo = toolNamed(tools, 'srv__echo');
    expect(echo.isMutating).toBe(false);
    expect(echo.parametersSchema).toEqual({
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
    });
    expect(toolNamed(tools, 'srv__write_note').isMutating).toBe(true);
  });

  test('calls return content and isError', async () => {
    const { tools } = await connect(await startHttpFixture());
    expect(await call(toolNamed(tools, 'srv__echo'), { text: 'hi' })).toEqual({
      content: 'echo: hi',
      isError: false,
    });
    expect(await call(toolNamed(tools, 'srv__fail'))).toEqual({ content: 'it failed', isError: true });
    expect((await call(toolNamed(tools, 'srv__image'))).content).toBe(
      'a pixel:\n[image: image/png, 68 bytes]',
    );
  });

  test('an aborted signal cancels the call on the server', async () => {
    const { tools } = await connect(await startHttpFixture());
    const controller = new AbortController();
    const pending = call(toolNamed(tools, 'srv__slow'), {}, controller.signal);
    await stats(tools, { waitForSlowStarted: 1 });
    controller.abort();
    expect(await pending).toEqual({
      content: 'MCP server "srv" failed: the call was cancelled',
      isError: true,
    });
    expect((await stats(tools, { waitForCancelled: 1 })).cancelled).toBe(1);
  });

  test('a server killed mid-call gives an error result; once it is back, the next call reconnects', async () => {
    const fixture = await startHttpFixture();
    const { tools } = await connect(fixture);
    const pending = call(toolNamed(tools, 'srv__slow'));
    await stats(tools, { waitForSlowStarted: 1 });
    await fixture.kill();
    const output = await pending;
    expect(output.isError).toBe(true);
    expect(output.content).toMatch(
      /^MCP server "srv" failed: the connection was lost: the server stopped answering/,
    );

    const restarted = await startHttpFixture({ port: fixture.port });
    expect(await call(toolNamed(tools, 'srv__echo'), { text: 'back' })).toEqual({
      content: 'echo: back',
      isError: false,
    });
    expect((await stats(tools)).pid).toBe(restarted.child.pid);
  });

  test('a call while the server is down fails; the call after it is back reconnects', async () => {
    const fixture = await startHttpFixture();
    const { tools } = await connect(fixture);
    await fixture.kill();
    const down = await call(toolNamed(tools, 'srv__echo'), { text: 'x' });
    expect(down.isError).toBe(true);
    expect(down.content).toContain('ECONNREFUSED');

    const stillDown = await call(toolNamed(tools, 'srv__echo'), { text: 'x' });
    expect(stillDown.content).toMatch(
      /^MCP server "srv" failed: it could not be reconnected \(.*ECONNREFUSED.*\); the next call tries again/,
    );

    await startHttpFixture({ port: fixture.port });
    expect(await call(toolNamed(tools, 'srv__echo'), { text: 'up' })).toEqual({
      content: 'echo: up',
      isError: false,
    });
  });

  test('a server restarted between calls forgets the session; the call gets a new one and goes through', async () => {
    const fixture = await startHttpFixture();
    const { tools } = await connect(fixture);
    expect((await call(toolNamed(tools, 'srv__echo'), { text: 'one' })).content).toBe('echo: one');
    await fixture.kill();
    await startHttpFixture({ port: fixture.port });
    expect(await call(toolNamed(tools, 'srv__echo'), { text: 'two' })).toEqual({
      content: 'echo: two',
      isError: false,
    });
  });

  test('headers are sent with every request', async () => {
    const fixture = await startHttpFixture({ env: { MCP_FIXTURE_TOKEN: 'sesame-0123456789' } });
    const { tools } = await connect(fixture, { authorization: 'Bearer sesame-0123456789' });
    expect((await call(toolNamed(tools, 'srv__echo'), { text: 'ok' })).content).toBe('echo: ok');

    const error = await connect(fixture, { authorization: 'Bearer wrong-secret-value' }).catch(
      (caught: unknown) => caught,
    );
    expect(isAgentError(error) && error.code).toBe('TOOL_EXECUTION_ERROR');
    expect((error as Error).message).toContain('HTTP 401');
    expect((error as Error).message).not.toContain('wrong-secret-value');
  });

  test('an unreachable URL rejects naming the server and the URL without its query', async () => {
    const port = await closedPort();
    const error = await connectMcpServer({
      name: 'away',
      transport: {
        type: 'http',
        url: `http://127.0.0.1:${port}/mcp?token=abc123-secret`,
        headers: { authorization: 'Bearer hunter2-hunter2' },
      },
    }).catch((caught: unknown) => caught);
    expect(isAgentError(error)).toBe(true);
    if (!isAgentError(error)) return;
    expect(error.code).toBe('TOOL_EXECUTION_ERROR');
    expect(error.sourceComponent).toBe('tool');
    expect(error.message).toContain(
      `MCP server "away" (url http://127.0.0.1:${port}/mcp) could not be reached`,
    );
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.message).not.toContain('hunter2');
    expect(error.message).not.toContain('abc123');
    expect(JSON.stringify(error)).not.toContain('abc123');
  });
});
