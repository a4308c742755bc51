import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, expect, test } from 'vitest';
import { textReply, toolCallReply } from '../../../test-support/cli-wire.js';
import { type RunningCli, runCli, startCli } from './support/cli.js';
import { useCliHarness } from './support/harness.js';
import { type ElicitAnswer, runTurn, type TestClient, testClient } from './support/mcp-client.js';
import { SERVE_TOKEN, stopServe, until } from './support/serve.js';

const harness = useCliHarness();
const OTHER_TOKEN = 'other-tenant-token-0123456789';
let serving: RunningCli | undefined;
const clients: TestClient[] = [];

afterEach(async () => {
  for (const test of clients.splice(0)) await test.client.close();
  if (serving !== undefined) await stopServe(serving);
  serving = undefined;
});

/** Starts `youyou mcp serve --port 0` with two tenants' tokens; answers its endpoint once it listens. */
async function serveHttp(args: string[] = []): Promise<string> {
  serving = startCli({
    args: ['mcp', 'serve', '--port', '0', '--base-url', harness.server.baseURL, ...args],
    sandbox: harness.sandbox,
    env: { YOUYOU_SERVER_TOKENS: `${SERVE_TOKEN}=team-a,${OTHER_TOKEN}=team-b` },
  });
  const running = serving;
  let url: string | undefined;
  await until(
    () => {
      url = /MCP server on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(running.stdout())?.[1];
      return url !== undefined || running.child.exitCode !== null;
    },
    () => 'youyou mcp serve to listen',
  );
  if (url === undefined) throw new Error(`youyou mcp serve did not start: ${(await running.result).stderr}`);
  return url;
}

/** An SDK client connected over Streamable HTTP with `token`. */
async function connect(url: string, token: string, elicit?: ElicitAnswer): Promise<TestClient> {
  const test = testClient(elicit);
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await test.client.connect(transport);
  clients.push(test);
  return test;
}

/** A raw initialize request, as a client's first POST. */
function initialize(url: string, headers: Record<string, string>): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'raw', version: '1' },
      },
    }),
  });
}

test('mcp serve --port refuses to start without a token of youyou serve', async () => {
  const result = await runCli({
    args: ['mcp', 'serve', '--port', '0', '--base-url', harness.server.baseURL],
    sandbox: harness.sandbox,
  });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('YOUYOU_SERVER_TOKENS');
});

test('a request without a valid bearer token gets 401; with one, run_turn answers and asks for consent', async () => {
  const url = await serveHttp();
  expect((await initialize(url, {})).status).toBe(401);
  expect((await initialize(url, { authorization: 'Bearer wrong-token-0123456789' })).status).toBe(401);
  await expect(connect(url, 'wrong-token-0123456789')).rejects.toThrow();

  const { client, questions } = await connect(url, SERVE_TOKEN, () => ({ action: 'accept', content: {} }));
  harness.server.reply(
    toolCallReply({
      id: 'call_1',
      name: 'write_file',
      arguments: { path: 'http.txt', content: 'over http' },
    }),
    textReply('Written over HTTP.'),
  );
  const first = await runTurn(client, { prompt: 'Write it.' });
  expect(first.output).toMatchObject({ answer: 'Written over HTTP.', status: 'completed' });
  expect(questions).toHaveLength(1);
  expect(await readFile(path.join(harness.sandbox.workspace, 'http.txt'), 'utf8')).toBe('over http');

  harness.server.reply(textReply('Continued.'));
  const sessionId = first.output?.sessionId ?? '';
  const second = await runTurn(client, { prompt: 'And then?', sessionId });
  expect(second.output).toMatchObject({ answer: 'Continued.', sessionId });

  for (const test of clients.splice(0)) await test.client.close();
  expect(serving === undefined ? undefined : await stopServe(serving)).toBe(0);
});

test("a session started with one tenant's token is unknown to another's", async () => {
  const url = await serveHttp();
  const a = await connect(url, SERVE_TOKEN);
  harness.server.reply(textReply('Team A here.'));
  const sessionId = (await runTurn(a.client, { prompt: 'Hello.' })).output?.sessionId ?? '';

  const b = await connect(url, OTHER_TOKEN);
  const { result } = await runTurn(b.client, { prompt: 'Let me in.', sessionId });
  expect(result.isError).toBe(true);
  expect(harness.server.turnRequests()).toHaveLength(1);

  // Team A's MCP session id, sent with team B's token, is not found either.
  const transport = a.client.transport as StreamableHTTPClientTransport;
  const hijack = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${OTHER_TOKEN}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': transport.sessionId ?? '',
      'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
  });
  expect(hijack.status).toBe(404);
});
