import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import {
  type ChatServer,
  startChatServer,
  textReply,
  toolCallReply,
} from '../../../test-support/cli-wire.js';
import { ensureBuilt } from './support/build.js';
import { createSandbox, jsonLines, type RunningCli, runCli, type Sandbox, startCli } from './support/cli.js';
import { SERVE_TOKEN, waitForServeUrl } from './support/serve.js';

let wire: ChatServer;
let sandbox: Sandbox;
let serving: RunningCli | undefined;

beforeAll(ensureBuilt, 180_000);

beforeEach(async () => {
  wire = await startChatServer();
  sandbox = await createSandbox();
});

afterEach(async () => {
  if (serving !== undefined && serving.child.exitCode === null) serving.child.kill('SIGKILL');
  await serving?.result;
  serving = undefined;
  await wire.close();
  await sandbox.remove();
});

const TOKEN = SERVE_TOKEN;
const waitForUrl = waitForServeUrl;

test('youyou serve refuses to start without a token', async () => {
  const result = await runCli({ args: ['serve', '--port', '0', '--base-url', wire.baseURL], sandbox });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('token');
  expect(result.stdout).not.toContain('serving on');
});

test('youyou serve answers the sessions API as a real child process, and the session is in its SQLite file', async () => {
  serving = startCli({
    args: ['serve', '--port', '0', '--host', '127.0.0.1', '--base-url', wire.baseURL],
    sandbox,
    env: { YOUYOU_SERVER_TOKENS: `${TOKEN}=team-a` },
  });
  const url = await waitForUrl(serving);
  const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

  expect((await fetch(`${url}/sessions`)).status).toBe(401);
  const created = await fetch(`${url}/sessions`, { method: 'POST', headers: auth, body: '{}' });
  expect(created.status).toBe(201);
  const { sessionId } = (await created.json()) as { sessionId: string };

  wire.reply(textReply('Served ', 'answer.'));
  const turn = await fetch(`${url}/sessions/${sessionId}/messages`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ content: 'Hello server' }),
  });
  expect(turn.status).toBe(200);
  const stream = await turn.text();
  expect(stream).toContain('event: turn_complete');
  // Every event has an id (its sequence) and the ids only grow.
  const ids = [...stream.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
  expect(ids.length).toBeGreaterThan(1);
  expect(ids).toEqual([...ids].sort((a, b) => a - b));
  expect(stream).toContain('Served ');

  serving.child.kill('SIGTERM');
  const result = await serving.result;
  expect(result.code).toBe(0);

  const listed = await runCli({ args: ['sessions', '--json'], sandbox });
  expect(listed.code).toBe(0);
  expect(JSON.stringify(jsonLines(listed.stdout))).toContain(sessionId);
}, 60_000);

test('youyou serve takes its tokens from config.json, and a mutating tool waits for approval over HTTP', async () => {
  await mkdir(sandbox.home, { recursive: true });
  await writeFile(
    path.join(sandbox.home, 'config.json'),
    JSON.stringify({ server: { tokens: { [TOKEN]: 'team-b' }, maxActiveSessions: 2 } }),
  );
  serving = startCli({ args: ['serve', '--port', '0', '--base-url', wire.baseURL], sandbox });
  const url = await waitForUrl(serving);
  const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const created = await fetch(`${url}/sessions`, { method: 'POST', headers: auth, body: '{}' });
  const { sessionId } = (await created.json()) as { sessionId: string };

  wire.reply(
    toolCallReply({ id: 'call_w', name: 'write_file', arguments: { path: 'out.txt', content: 'approved' } }),
  );
  const suspended = await (
    await fetch(`${url}/sessions/${sessionId}/messages`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ content: 'Write the file' }),
    })
  ).text();
  expect(suspended).toContain('event: turn_suspended');
  // The tenant's own workspace folder (server.workspaces defaults to "tenant").
  const written = path.join(sandbox.home, 'workspaces', 'team-b', 'out.txt');
  await expect(readFile(written, 'utf8')).rejects.toThrow();

  wire.reply(textReply('Written.'));
  const continued = await (
    await fetch(`${url}/sessions/${sessionId}/approvals/call_w`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ approved: true }),
    })
  ).text();
  expect(continued).toContain('event: turn_complete');
  expect(await readFile(written, 'utf8')).toBe('approved');
  await expect(readFile(path.join(sandbox.workspace, 'out.txt'), 'utf8')).rejects.toThrow();
  serving.child.kill('SIGTERM');
  expect((await serving.result).code).toBe(0);
}, 60_000);

test('server.journalMaxBytes in config.json bounds what youyou serve keeps: at 0 a turn still streams live, and a reconnect into it is told to resync', async () => {
  await mkdir(sandbox.home, { recursive: true });
  await writeFile(
    path.join(sandbox.home, 'config.json'),
    JSON.stringify({ server: { tokens: { [TOKEN]: 'team-c' }, journalMaxBytes: 0 } }),
  );
  serving = startCli({ args: ['serve', '--port', '0', '--base-url', wire.baseURL], sandbox });
  const url = await waitForUrl(serving);
  const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const created = await fetch(`${url}/sessions`, { method: 'POST', headers: auth, body: '{}' });
  const { sessionId } = (await created.json()) as { sessionId: string };

  wire.reply(textReply('Kept ', 'nowhere.'));
  const live = await (
    await fetch(`${url}/sessions/${sessionId}/messages`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ content: 'Hello' }),
    })
  ).text();
  expect(live).toContain('Kept ');
  expect(live).toContain('event: turn_complete');
  const firstId = /^id: (\d+)$/m.exec(live)?.[1] ?? '';

  const tail = await fetch(`${url}/sessions/${sessionId}/events`, {
    headers: { ...auth, 'last-event-id': firstId },
  });
  const decoder = new TextDecoder();
  let received = '';
  for await (const chunk of tail.body as AsyncIterable<Uint8Array>) {
    received += decoder.decode(chunk, { stream: true });
    // Leaving the loop cancels the tail, which would otherwise stay open.
    if (received.includes('\n\n')) break;
  }
  expect(received).toMatch(/^event: resync$/m);
  expect(received).not.toContain('nowhere.');
}, 60_000);
