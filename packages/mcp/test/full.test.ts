import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import {
  connectMcpServer,
  type ElicitationRequest,
  type McpClientOptions,
  type McpServerConnection,
} from '../src/index.js';
import { call, toolNamed } from './support.js';

/** The McpServer fixture with resources, prompts, elicitation and a changing tool list. */
const FULL_FIXTURE = fileURLToPath(new URL('./fixtures/full-server.mjs', import.meta.url));

let folder: string;
let eventsFile: string;
const connections: McpServerConnection[] = [];

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'youyou-mcp-full-'));
  eventsFile = join(folder, 'events.jsonl');
});

afterEach(async () => {
  await Promise.all(connections.splice(0).map((connection) => connection.close()));
  rmSync(folder, { recursive: true, force: true });
});

async function connect(options: McpClientOptions = {}): Promise<McpServerConnection> {
  const connection = await connectMcpServer(
    {
      name: 'full',
      transport: {
        type: 'stdio',
        command: process.execPath,
        args: [FULL_FIXTURE],
        env: { MCP_FIXTURE_EVENTS: eventsFile },
      },
    },
    options,
  );
  connections.push(connection);
  return connection;
}

/** The events the server recorded so far. */
function events(): { event: string; result?: unknown }[] {
  let text = '';
  try {
    text = readFileSync(eventsFile, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { event: string });
}

/** Waits until the server has recorded `event` (polling the file it appends to). */
async function untilEvent(event: string): Promise<void> {
  while (!events().some((entry) => entry.event === event)) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('resources', () => {
  test('a server with resources gets read-only list and read tools', async () => {
    const { tools } = await connect();
    const list = toolNamed(tools, 'full__list_resources');
    const read = toolNamed(tools, 'full__read_resource');
    expect([list.isMutating, read.isMutating]).toEqual([false, false]);
    const listing = await call(list);
    expect(listing.isError).toBe(false);
    expect(listing.content).toContain('note://alpha');
    expect(listing.content).toContain('note://pixel');
    expect(listing.content).toContain('note://named/{name}');
    expect(await call(read, { uri: 'note://alpha' })).toEqual({
      content: 'alpha notes: the launch is on Tuesday',
      isError: false,
    });
    expect((await call(read, { uri: 'note://named/beta' })).content).toBe('the note called beta');
  });

  test('a binary resource is summarised, not passed on', async () => {
    const { tools } = await connect();
    const output = await call(toolNamed(tools, 'full__read_resource'), { uri: 'note://pixel' });
    expect(output.isError).toBe(false);
    expect(output.content).toMatch(/^\[resource: note:\/\/pixel, image\/png, 68 bytes/);
  });

  test('an unknown URI is an error result naming the server', async () => {
    const { tools } = await connect();
    const output = await call(toolNamed(tools, 'full__read_resource'), { uri: 'note://missing' });
    expect(output.isError).toBe(true);
    expect(output.content).toMatch(/^MCP server "full" failed: /);
    expect((await call(toolNamed(tools, 'full__read_resource'), {})).isError).toBe(true);
  });
});

describe('prompts', () => {
  test('are listed with their arguments and filled in as a user message', async () => {
    const connection = await connect();
    const prompts = await connection.listPrompts();
    const review = prompts.find((prompt) => prompt.name === 'review');
    expect(review).toMatchObject({
      title: 'Review a file',
      arguments: [
        { name: 'file', required: true },
        { name: 'focus', required: false },
      ],
    });
    const filled = await connection.getPrompt({
      name: 'review',
      arguments: { file: 'src/a.ts', focus: 'errors' },
    });
    expect(filled.content).toEqual([
      { type: 'text', text: 'Please review src/a.ts with a focus on errors.' },
    ]);
  });

  test('a missing required argument rejects naming the server and the prompt', async () => {
    const connection = await connect();
    await expect(connection.getPrompt({ name: 'review' })).rejects.toMatchObject({
      code: 'TOOL_EXECUTION_ERROR',
      message: expect.stringContaining('MCP server "full" could not give the prompt "review"'),
    });
  });
});

describe('elicitation', () => {
  test("the server's question reaches the handler with its fields, and the answer goes back", async () => {
    const asked: ElicitationRequest[] = [];
    const { tools } = await connect({
      onElicitation: async (request) => {
        asked.push(request);
        return { action: 'accept', content: { colour: 'green', count: 3, urgent: true } };
      },
    });
    const output = await call(toolNamed(tools, 'full__ask'));
    expect(output.content).toBe(
      `answer: ${JSON.stringify({ action: 'accept', content: { colour: 'green', count: 3, urgent: true } })}`,
    );
    const [request] = asked;
    expect(request?.server).toBe('full');
    expect(request?.fields.map((field) => [field.name, field.type, field.required])).toEqual([
      ['colour', 'enum', true],
      ['count', 'number', true],
      ['urgent', 'boolean', false],
      ['note', 'string', false],
    ]);
    expect(request?.callsInFlight.map((inFlight) => inFlight.toolName)).toEqual(['full__ask']);
  });

  test('an answer that does not fit the form, or a handler that throws, declines', async () => {
    let answer = 0;
    const { tools } = await connect({
      onElicitation: async () => {
        answer += 1;
        if (answer === 1) return { action: 'accept', content: { colour: 'purple', count: 3 } };
        throw new Error('no terminal');
      },
    });
    expect((await call(toolNamed(tools, 'full__ask'))).content).toBe('answer: {"action":"decline"}');
    expect((await call(toolNamed(tools, 'full__ask'))).content).toBe('answer: {"action":"decline"}');
  });

  test('a question is withdrawn (its signal aborts) when the call that asked ends', async () => {
    let withdrawn: (() => void) | undefined;
    const handlerSawAbort = new Promise<void>((resolve) => {
      withdrawn = resolve;
    });
    let asked: (() => void) | undefined;
    const questionCame = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const { tools } = await connect({
      onElicitation: ({ signal }) =>
        new Promise((resolve) => {
          asked?.();
          signal.addEventListener('abort', () => {
            withdrawn?.();
            resolve({ action: 'cancel' });
          });
        }),
    });
    const controller = new AbortController();
    const running = call(toolNamed(tools, 'full__ask'), {}, controller.signal);
    await questionCame;
    controller.abort();
    expect((await running).content).toBe('MCP server "full" failed: the call was cancelled');
    await handlerSawAbort;
  });

  test('without a handler the client does not offer elicitation, and the call fails', async () => {
    const { tools } = await connect();
    const output = await call(toolNamed(tools, 'full__ask'));
    expect(output.isError).toBe(true);
    expect(events()).toEqual([]);
  });
});

describe('cancellation and list changes', () => {
  test('an aborted call sends notifications/cancelled, which the server receives', async () => {
    const { tools } = await connect();
    const controller = new AbortController();
    const running = call(toolNamed(tools, 'full__slow'), {}, controller.signal);
    await untilEvent('slow_started');
    controller.abort();
    expect((await running).content).toBe('MCP server "full" failed: the call was cancelled');
    await untilEvent('cancelled');
  });

  test('tools/list_changed is heard, and listTools gives the new tool', async () => {
    const changes: string[] = [];
    let heard: (() => void) | undefined;
    const changed = new Promise<void>((resolve) => {
      heard = resolve;
    });
    const connection = await connect({
      onListChanged: ({ server, list }) => {
        changes.push(`${server}:${list}`);
        heard?.();
      },
    });
    expect(connection.tools.map((tool) => tool.name)).not.toContain('full__added');
    await call(toolNamed(connection.tools, 'full__add_tool'));
    await changed;
    expect(changes).toContain('full:tools');
    const tools = await connection.listTools();
    expect((await call(toolNamed(tools, 'full__added'))).content).toBe('added ran');
  });
});
