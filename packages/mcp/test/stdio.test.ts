import { getEventListeners } from 'node:events';
import { isAgentError } from '@youyou/agent';
import { afterEach, describe, expect, test } from 'vitest';
import { connectMcpServer, type McpServerConnection } from '../src/index.js';
import { call, isRunning, stats, stdioConfig, toolNamed } from './support.js';

const connections: McpServerConnection[] = [];

async function connect(options: Parameters<typeof stdioConfig>[0] = {}): Promise<McpServerConnection> {
  const connection = await connectMcpServer(stdioConfig(options));
  connections.push(connection);
  return connection;
}

afterEach(async () => {
  await Promise.all(connections.splice(0).map((connection) => connection.close()));
});

describe('an MCP server over stdio', () => {
  test('lists every page of tools, prefixed by the server name and sanitised', async () => {
    const { tools } = await connect();
    expect(tools.map((tool) => tool.name)).toEqual([
      'srv__echo',
      'srv__write_note',
      'srv__slow',
      'srv__crash',
      'srv__fail',
      'srv__image',
      'srv__notes_read',
      'srv__notes_read_2',
      'srv__structured',
      'srv__resources',
      `srv__long_${'x'.repeat(64 - 'srv__long_'.length)}`,
      'srv__stats',
    ]);
    for (const tool of tools) expect(tool.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });

  test('readOnlyHint makes a tool read-only; every other tool is mutating', async () => {
    const { tools } = await connect();
    const readOnly = tools.filter((tool) => !tool.isMutating).map((tool) => tool.name);
    expect(readOnly).toEqual(['srv__echo', 'srv__slow', 'srv__fail', 'srv__notes_read', 'srv__stats']);
    expect(toolNamed(tools, 'srv__write_note').isMutating).toBe(true);
  });

  test('descriptions and schemas come from the server', async () => {
    const { tools } = await connect();
    const echo = toolNamed(tools, 'srv__echo');
    expect(echo.description).toBe('Echoes the text back.');
    expect(echo.parametersSchema).toEqual({
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
    });
    // No description: the title stands in.
    expect(toolNamed(tools, 'srv__write_note').description).toBe('Write a note');
    expect(toolNamed(tools, 'srv__slow').parametersSchema).toEqual({ type: 'object' });
  });

  test('calls return the content, and the dotted and colliding names reach their own tools', async () => {
    const { tools } = await connect();
    expect(await call(toolNamed(tools, 'srv__echo'), { text: 'hi' })).toEqual({
      content: 'echo: hi',
      isError: false,
    });
    expect(await call(toolNamed(tools, 'srv__write_note'), { note: 'n' })).toEqual({
      content: 'saved: n',
      isError: false,
    });
    expect((await call(toolNamed(tools, 'srv__notes_read'))).content).toBe('dotted');
    expect((await call(toolNamed(tools, 'srv__notes_read_2'))).content).toBe('underscored');
  });

  test('isError, images, structured content and resources are mapped to text', async () => {
    const { tools } = await connect();
    expect(await call(toolNamed(tools, 'srv__fail'))).toEqual({ content: 'it failed', isError: true });
    expect(await call(toolNamed(tools, 'srv__image'))).toEqual({
      content: 'a pixel:\n[image: image/png, 68 bytes]',
      isError: false,
    });
    expect(await call(toolNamed(tools, 'srv__structured'))).toEqual({
      content: '{"count":2,"items":["a","b"]}',
      isError: false,
    });
    expect((await call(toolNamed(tools, 'srv__resources'))).content).toBe(
      '[resource: file:///notes/a.txt]\ninline text of b\n[resource: file:///notes/c.bin, application/octet-stream, 4 bytes]',
    );
  });

  test('an aborted signal cancels the call on the server and leaves no listener behind', async () => {
    const { tools } = await connect();
    const controller = new AbortController();
    const pending = call(toolNamed(tools, 'srv__slow'), {}, controller.signal);
    await stats(tools, { waitForSlowStarted: 1 });
    controller.abort();
    const output = await pending;
    expect(output).toEqual({ content: 'MCP server "srv" failed: the call was cancelled', isError: true });
    expect((await stats(tools, { waitForCancelled: 1 })).cancelled).toBe(1);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);

    const finished = new AbortController();
    await call(toolNamed(tools, 'srv__echo'), { text: 'x' }, finished.signal);
    expect(getEventListeners(finished.signal, 'abort')).toHaveLength(0);
  });

  test('a call longer than timeoutMs fails as timed out and is cancelled on the server', async () => {
    // Long enough for node to start the fixture, which the same timeout bounds.
    const { tools } = await connect({ timeoutMs: 3_000 });
    const output = await call(toolNamed(tools, 'srv__slow'));
    expect(output).toEqual({
      content: 'MCP server "srv" failed: no answer within 3000ms (the server\'s timeoutMs)',
      isError: true,
    });
    expect((await stats(tools, { waitForCancelled: 1 })).cancelled).toBe(1);
  });

  test('a server that exits mid-call gives an error result; the next call starts it again', async () => {
    const { tools } = await connect();
    const before = await stats(tools);
    const crashed = await call(toolNamed(tools, 'srv__crash'));
    expect(crashed.isError).toBe(true);
    expect(crashed.content).toMatch(
      /^MCP server "srv" failed: the connection was lost: the server process exited/,
    );
    expect(crashed.content).toContain('fixture: crashing on purpose');
    expect(crashed.content).toContain('reconnected on the next call');
    expect(isRunning(before.pid)).toBe(false);

    expect(await call(toolNamed(tools, 'srv__echo'), { text: 'again' })).toEqual({
      content: 'echo: again',
      isError: false,
    });
    const after = await stats(tools);
    expect(after.pid).not.toBe(before.pid);
  });

  test('calls that find the server dead share one restart', async () => {
    const { tools } = await connect();
    await call(toolNamed(tools, 'srv__crash'));
    const [first, second] = await Promise.all([stats(tools), stats(tools)]);
    expect(first.pid).toBe(second.pid);
  });

  test('close() stops the server process and later calls fail', async () => {
    const connection = await connect();
    const { pid } = await stats(connection.tools);
    await connection.close();
    expect(isRunning(pid)).toBe(false);
    expect(await call(toolNamed(connection.tools, 'srv__echo'), { text: 'x' })).toEqual({
      content: 'MCP server "srv" failed: the connection was closed',
      isError: true,
    });
  });

  test('a call in flight when the connection closes ends with an error result', async () => {
    const connection = await connect();
    const pending = call(toolNamed(connection.tools, 'srv__slow'));
    await stats(connection.tools, { waitForSlowStarted: 1 });
    await connection.close();
    expect(await pending).toEqual({
      content: 'MCP server "srv" failed: the connection was closed',
      isError: true,
    });
  });

  test('arguments that are not an object are refused without a call', async () => {
    const { tools } = await connect();
    expect(await call(toolNamed(tools, 'srv__echo'), 'text')).toEqual({
      content: 'MCP server "srv" failed: the arguments must be a JSON object',
      isError: true,
    });
  });
});

describe('a stdio server that cannot be started', () => {
  test('a missing command rejects with TOOL_EXECUTION_ERROR naming the server and the command', async () => {
    const error = await connectMcpServer({
      name: 'ghost',
      transport: { type: 'stdio', command: '/nonexistent/mcp-server', args: ['--token', 'secret-token-123'] },
    }).catch((caught: unknown) => caught);
    expect(isAgentError(error)).toBe(true);
    if (!isAgentError(error)) return;
    expect(error.code).toBe('TOOL_EXECUTION_ERROR');
    expect(error.sourceComponent).toBe('tool');
    expect(error.message).toContain(
      'MCP server "ghost" (command "/nonexistent/mcp-server") could not be started',
    );
    expect(error.message).toContain('ENOENT');
    expect(error.message).not.toContain('secret-token-123');
  });

  test('a server that exits at once is reported with the end of its stderr', async () => {
    const error = await connectMcpServer({
      name: 'quits',
      transport: {
        type: 'stdio',
        command: process.execPath,
        args: ['-e', 'process.stderr.write("FOO_API_KEY is not set\\n"); process.exit(3)'],
      },
    }).catch((caught: unknown) => caught);
    expect(isAgentError(error) && error.code).toBe('TOOL_EXECUTION_ERROR');
    expect(String((error as Error).message)).toMatch(
      /MCP server "quits" \(command ".*"\) could not be started: .*; its stderr ended with: FOO_API_KEY is not set/,
    );
  });

  test('a server that never answers initialize times out, and its process is stopped', async () => {
    const error = await connectMcpServer({
      name: 'mute',
      timeoutMs: 300,
      transport: {
        type: 'stdio',
        command: process.execPath,
        // Ignores stdin closing, so it has to be killed.
        args: ['-e', 'process.stderr.write("pid " + process.pid + "\\n"); setInterval(() => {}, 1000)'],
      },
    }).catch((caught: unknown) => caught);
    const message = (error as Error).message;
    expect(message).toContain('MCP server "mute" (command');
    expect(message).toContain('did not answer within 300ms');
    const pid = Number(/stderr ended with: pid (\d+)/.exec(message)?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(isRunning(pid)).toBe(false);
  });
});
