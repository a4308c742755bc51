import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolResult,
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { BIN } from './build.js';
import { childEnv, type Sandbox } from './cli.js';

/** How a test client answers elicitation: it declares the capability only when given one. */
export type ElicitAnswer = (request: ElicitRequest['params']) => ElicitResult | Promise<ElicitResult>;

/** An MCP SDK client, what it was asked, and the protocol errors it met. */
export interface TestClient {
  client: Client;
  /** The elicitation questions the server put to the client. */
  questions: ElicitRequest['params'][];
  /** Errors of the client's transport and protocol: a line on stdout that is not a frame lands here. */
  errors: Error[];
}

/** A client with elicitation when `elicit` is given (its answers), without the capability otherwise. */
export function testClient(elicit?: ElicitAnswer): TestClient {
  const client = new Client(
    { name: 'youyou-test-client', version: '1.0.0' },
    { capabilities: elicit === undefined ? {} : { elicitation: { form: {} } } },
  );
  const questions: ElicitRequest['params'][] = [];
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  if (elicit !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      questions.push(request.params);
      return elicit(request.params);
    });
  }
  return { client, questions, errors };
}

/** A `youyou mcp serve` child over stdio, with what it wrote to stderr. */
export interface StdioServe extends TestClient {
  stderr(): string;
}

/** Starts `youyou mcp serve ARGS` as the SDK's stdio transport spawns servers, in the sandbox's workspace. */
export async function connectStdio(options: {
  sandbox: Sandbox;
  args: readonly string[];
  elicit?: ElicitAnswer;
}): Promise<StdioServe> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', 'serve', ...options.args],
    cwd: options.sandbox.workspace,
    env: childEnv(options.sandbox) as Record<string, string>,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const test = testClient(options.elicit);
  try {
    await test.client.connect(transport);
  } catch (error) {
    throw new Error(`youyou mcp serve did not start: ${String(error)}\n${stderr}`);
  }
  return { ...test, stderr: () => stderr };
}

/** What `run_turn` answered in structuredContent. */
export interface TurnAnswer {
  answer: string;
  sessionId: string;
  status: string;
}

/** Calls `run_turn` and answers its structured result and whether it was an error. */
export async function runTurn(
  client: Client,
  args: { prompt: string; sessionId?: string },
  options: RequestOptions = {},
): Promise<{ result: CallToolResult; output: TurnAnswer | undefined }> {
  const result = (await client.callTool(
    { name: 'run_turn', arguments: args },
    undefined,
    options,
  )) as CallToolResult;
  return { result, output: result.structuredContent as TurnAnswer | undefined };
}

/** The text blocks of a tool result, joined. */
export function resultText(result: CallToolResult): string {
  return result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
}
