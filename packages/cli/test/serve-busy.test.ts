import { afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { type ChatServer, hangingReply, startChatServer, textReply } from '../../../test-support/cli-wire.js';
import { ensureBuilt } from './support/build.js';
import { createSandbox, type RunningCli, type Sandbox, startCli } from './support/cli.js';
import { SERVE_AUTH, SERVE_TOKEN, stopServe, until, waitForServeUrl } from './support/serve.js';

// `youyou serve` holds 16 sessions at once by default: while 16 turns run, the 17th request that needs a
// session slot is 429 SERVER_BUSY with Retry-After (a client can follow that), and it works once a turn ends.

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

async function createSession(url: string): Promise<Response> {
  return fetch(`${url}/sessions`, { method: 'POST', headers: SERVE_AUTH, body: '{}' });
}

function sendMessage(url: string, sessionId: string, content: string): Promise<Response> {
  return fetch(`${url}/sessions/${sessionId}/messages`, {
    method: 'POST',
    headers: SERVE_AUTH,
    body: JSON.stringify({ content }),
  });
}

test('the 17th concurrent turn is 429 SERVER_BUSY with Retry-After, and goes through once a turn ends', async () => {
  serving = startCli({
    args: ['serve', '--port', '0', '--host', '127.0.0.1', '--base-url', wire.baseURL],
    sandbox,
    env: { YOUYOU_SERVER_TOKENS: `${SERVE_TOKEN}=team-a` },
  });
  const url = await waitForServeUrl(serving);

  // Sixteen turns held open: the model's answers start and never finish.
  const sessions: string[] = [];
  const streams: Promise<string>[] = [];
  for (let index = 0; index < 16; index++) {
    const created = await createSession(url);
    expect(created.status).toBe(201);
    const { sessionId } = (await created.json()) as { sessionId: string };
    sessions.push(sessionId);
    wire.reply(hangingReply(`Working on ${index}`));
    const turn = await sendMessage(url, sessionId, `task ${index}`);
    expect(turn.status).toBe(200);
    streams.push(turn.text());
  }
  await until(
    () => wire.turnRequests().length === 16,
    () => `16 model requests (${wire.turnRequests().length})`,
  );

  const busy = await createSession(url);
  expect(busy.status).toBe(429);
  const retryAfter = Number(busy.headers.get('retry-after'));
  expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true);
  expect(((await busy.json()) as { error: { code: string } }).error.code).toBe('SERVER_BUSY');

  // One turn ends: its slot is free for the request that was refused.
  const [first] = sessions;
  await fetch(`${url}/sessions/${first}/cancel`, { method: 'POST', headers: SERVE_AUTH });
  expect(await streams[0]).toContain('event: turn_cancelled');
  const retried = await createSession(url);
  expect(retried.status).toBe(201);
  const { sessionId } = (await retried.json()) as { sessionId: string };
  wire.reply(textReply('Done at last.'));
  expect(await (await sendMessage(url, sessionId, 'the 17th task')).text()).toContain('Done at last.');

  for (const held of sessions.slice(1)) {
    await fetch(`${url}/sessions/${held}/cancel`, { method: 'POST', headers: SERVE_AUTH });
  }
  await Promise.all(streams);
  expect(await stopServe(serving)).toBe(0);
}, 90_000);
