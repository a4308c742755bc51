import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { ToolHandler, ToolInput, ToolOutput } from '@youyou/agent';
import type { McpServerConfig } from '../src/index.js';

/** The fixture MCP server (plain JS, run by node directly). */
export const FIXTURE = fileURLToPath(new URL('./fixtures/server.mjs', import.meta.url));

/** A config that starts the fixture over stdio. */
export function stdioConfig(
  options: { name?: string; env?: Record<string, string>; timeoutMs?: number } = {},
) {
  const config: McpServerConfig = {
    name: options.name ?? 'srv',
    transport: {
      type: 'stdio',
      command: process.execPath,
      args: [FIXTURE],
      ...(options.env === undefined ? {} : { env: options.env }),
    },
  };
  if (options.timeoutMs !== undefined) config.timeoutMs = options.timeoutMs;
  return config;
}

/** A fixture server running over Streamable HTTP in its own process. */
export interface HttpFixture {
  port: number;
  /** The MCP endpoint. */
  url: string;
  child: ChildProcess;
  /** Lines the server printed on stdout. */
  lines: string[];
  /** Kills the process (SIGKILL: no goodbye to the client) and waits until it has exited. */
  kill(): Promise<void>;
}

const children = new Set<ChildProcess>();

/** Starts the fixture over HTTP on `port` (0: any free port) and resolves once it listens. */
export async function startHttpFixture(
  options: { port?: number; env?: Record<string, string> } = {},
): Promise<HttpFixture> {
  const child = spawn(process.execPath, [FIXTURE, '--http', String(options.port ?? 0)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...options.env },
  });
  children.add(child);
  const exited = once(child, 'exit');
  exited.then(
    () => children.delete(child),
    () => children.delete(child),
  );
  const lines: string[] = [];
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the HTTP fixture exited with ${code} before listening`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      const match = /^listening (\d+)$/.exec(line);
      if (match) resolve(Number(match[1]));
    });
  });
  const kill = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  };
  return { port, url: `http://127.0.0.1:${port}/mcp`, child, lines, kill };
}

/** Kills every HTTP fixture still running; for afterEach. */
export async function stopHttpFixtures(): Promise<void> {
  await Promise.all(
    [...children].map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    }),
  );
}

/** A port on 127.0.0.1 that nothing listens on (it was free a moment ago). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** The handler named `name`; fails the test when there is none. */
export function toolNamed(tools: readonly ToolHandler[], name: string): ToolHandler {
  const tool = tools.find((candidate) => candidate.name === name);
  if (tool === undefined)
    throw new Error(`no tool ${name} among ${tools.map((each) => each.name).join(', ')}`);
  return tool;
}

let callCount = 0;

/** Calls a handler the way the runtime does. */
export function call(
  tool: ToolHandler,
  args: unknown = {},
  signal: AbortSignal = new AbortController().signal,
): Promise<ToolOutput> {
  callCount += 1;
  const input: ToolInput = {
    callId: `call_${callCount}`,
    arguments: args,
    sessionId: 'session',
    turnId: 'turn',
    signal,
  };
  return tool.execute(input);
}

/** The fixture's counters, read with its `stats` tool (which waits until they reach the given values). */
export async function stats(
  tools: readonly ToolHandler[],
  waitFor: { waitForSlowStarted?: number; waitForCancelled?: number } = {},
): Promise<{ pid: number; slowStarted: number; cancelled: number }> {
  const output = await call(toolNamed(tools, 'srv__stats'), waitFor);
  if (output.isError) throw new Error(output.content);
  return JSON.parse(output.content) as { pid: number; slowStarted: number; cancelled: number };
}

/** True while a process with this pid exists. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
