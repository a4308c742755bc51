/**
 * Issue 26 in `youyou serve`: a serve process SIGKILLed while a turn streams leaves the turn cut; the next serve
 * process, with "server": { "continueInterrupted": "auto" }, continues it as soon as it takes the session, and a
 * client that follows the session's events sees the continuation on that stream.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import {
  type ChatServer,
  contentText,
  hangingReply,
  messagesOf,
  startChatServer,
  textReply,
} from '../../../test-support/cli-wire.js';
import { ensureBuilt } from './support/build.js';
import { createSandbox, type RunningCli, type Sandbox, startCli } from './support/cli.js';
import { SERVE_AUTH, SERVE_TOKEN, stopServe, until, waitForServeUrl } from './support/serve.js';

let wire: ChatServer;
let sandbox: Sandbox;
const running: RunningCli[] = [];

beforeAll(ensureBuilt, 180_000);

beforeEach(async () => {
  wire = await startChatServer();
  sandbox = await createSandbox();
  await mkdir(sandbox.home, { recursive: true, mode: 0o700 });
  await writeFile(
    path.join(sandbox.home, 'config.json'),
    JSON.stringify({ server: { tokens: { [SERVE_TOKEN]: 'team-a' }, continueInterrupted: 'auto' } }),
  );
});

afterEach(async () => {
  for (const cli of running.splice(0)) {
    if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill('SIGKILL');
    await cli.result;
  }
  await wire.close();
  await sandbox.remove();
});

function serve(): RunningCli {
  const cli = startCli({
    args: ['serve', '--port', '0', '--host', '127.0.0.1', '--base-url', wire.baseURL],
    sandbox,
  });
  running.push(cli);
  return cli;
}

/** The SSE events of a response until the turn's end, as their `event:` names. */
async function eventsUntilTurnEnd(response: Response): Promise<string[]> {
  const names: string[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const name = /^event: ?(.*)$/m.exec(buffer.slice(0, end))?.[1];
      buffer = buffer.slice(end + 2);
      if (name === undefined) continue;
      names.push(name);
      if (['turn_complete', 'turn_cancelled', 'turn_suspended'].includes(name)) return names;
    }
  }
  return names;
}

test('a turn cut by killing serve mid-stream is continued by the next serve for the client following it', async () => {
  const first = serve();
  const firstUrl = await waitForServeUrl(first);
  const created = await fetch(`${firstUrl}/sessions`, { method: 'POST', headers: SERVE_AUTH, body: '{}' });
  const { sessionId } = (await created.json()) as { sessionId: string };
  wire.reply(hangingReply('Half an '), textReply('A whole answer.'));
  const streaming = await fetch(`${firstUrl}/sessions/${sessionId}/messages`, {
    method: 'POST',
    headers: SERVE_AUTH,
    body: JSON.stringify({ content: 'answer me' }),
  });
  expect(streaming.status).toBe(200);
  await until(
    () => wire.turnRequests().length === 1,
    () => 'the first model request',
  );
  first.child.kill('SIGKILL');
  await first.result;
  await streaming.body?.cancel().catch(() => undefined);

  const second = serve();
  const secondUrl = await waitForServeUrl(second);
  const followed = await fetch(`${secondUrl}/sessions/${sessionId}/events`, { headers: SERVE_AUTH });
  expect(followed.status).toBe(200);
  expect(await eventsUntilTurnEnd(followed)).toEqual(['turn_continued', 'text_delta', 'turn_complete']);
  const asked = wire.turnRequests()[1];
  const texts = messagesOf(asked!).map(contentText);
  expect(texts.filter((text) => text === 'answer me')).toHaveLength(1);
  expect(texts.join('\n')).not.toContain('Half an');
  const history = (await (
    await fetch(`${secondUrl}/sessions/${sessionId}/messages`, { headers: SERVE_AUTH })
  ).json()) as { messages: { type: string }[] };
  expect(history.messages.map((message) => message.type)).toEqual(['user', 'assistant']);
  expect(await stopServe(second)).toBe(0);
}, 90_000);

test('a continueInterrupted that is neither "auto" nor "on-request" stops serve with a config error', async () => {
  await writeFile(
    path.join(sandbox.home, 'config.json'),
    JSON.stringify({ server: { tokens: { [SERVE_TOKEN]: 'team-a' }, continueInterrupted: 'sometimes' } }),
  );
  const cli = serve();
  const result = await cli.result;
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('"server.continueInterrupted" must be "auto" or "on-request"');
});
