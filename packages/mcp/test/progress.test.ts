import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, test } from 'vitest';
import { connectMcpServer, type McpServerConnection } from '../src/index.js';
import { toolNamed } from './support.js';

const PROGRESS_FIXTURE = fileURLToPath(new URL('./fixtures/progress-server.mjs', import.meta.url));

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function connect(): Promise<McpServerConnection> {
  const connection = await connectMcpServer({
    name: 'prog',
    transport: { type: 'stdio', command: process.execPath, args: [PROGRESS_FIXTURE] },
  });
  cleanups.push(() => connection.close());
  return connection;
}

async function gateFile(): Promise<string> {
  const folder = await mkdtemp(path.join(tmpdir(), 'youyou-mcp-progress-'));
  cleanups.push(() => rm(folder, { recursive: true, force: true }));
  return path.join(folder, 'gate');
}

test('progress notifications of a call become its live output, while it runs', async () => {
  const { tools } = await connect();
  const gate = await gateFile();
  const lines: string[] = [];
  let sawFirst = (): void => undefined;
  const first = new Promise<void>((resolve) => {
    sawFirst = resolve;
  });
  const result = toolNamed(tools, 'prog__report').execute({
    callId: 'call_1',
    arguments: { gate },
    sessionId: 'session',
    turnId: 'turn',
    signal: new AbortController().signal,
    onOutput: (text) => {
      lines.push(text);
      if (lines.length === 1) sawFirst();
    },
  });
  await first;
  // The server is blocked on the gate: the first progress came while the call ran.
  expect(lines).toEqual(['step 1 of 3\n']);
  await writeFile(gate, '');
  const output = await result;
  expect(output).toEqual({ content: 'reported', isError: false });
  // Without a message: progress/total. The server's text comes as it is (hosts neutralize what they show).
  expect(lines).toEqual(['step 1 of 3\n', '2/3\n', 'done\u001b]0;owned\u0007\n']);
});

test('a call without onOutput asks for no progress: the server sees no progressToken', async () => {
  const { tools } = await connect();
  const gate = await gateFile();
  await writeFile(gate, '');
  const output = await toolNamed(tools, 'prog__report').execute({
    callId: 'call_1',
    arguments: { gate },
    sessionId: 'session',
    turnId: 'turn',
    signal: new AbortController().signal,
  });
  expect(output).toEqual({ content: 'reported (no token)', isError: false });
});

test('progress that arrives together with the answer still reaches onOutput, before the call ends', async () => {
  const { tools } = await connect();
  const lines: string[] = [];
  const output = await toolNamed(tools, 'prog__burst').execute({
    callId: 'call_1',
    arguments: {},
    sessionId: 'session',
    turnId: 'turn',
    signal: new AbortController().signal,
    onOutput: (text) => lines.push(text),
  });
  expect(output).toEqual({ content: 'burst', isError: false });
  expect(lines).toEqual(['last words\n']);
});
