import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Memory } from '@youyou/agent';
import { openSqliteStorage } from '@youyou/sqlite';
import { afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { type ChatServer, startChatServer, textReply } from '../../../test-support/cli-wire.js';
import type { WireRequest } from '../../../test-support/wire-server.js';
import { ensureBuilt } from './support/build.js';
import { createSandbox, jsonLines, type RunningCli, runCli, type Sandbox, startCli } from './support/cli.js';
import { stopServe, until, waitForServeUrl } from './support/serve.js';

// `youyou serve` keeps each tenant's long-term memories apart from every other tenant's and from the local
// chat's: the scripted model extracts a fact from alice's session, and the bytes the model server receives
// for bob (and for a local `youyou -p` in the same home) never hold it.

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef-0';
const ALICE_FACT = 'Alice keeps the vault code 4711-ORCHID.';

let wire: ChatServer;
let sandbox: Sandbox;
let serving: RunningCli | undefined;

beforeAll(ensureBuilt, 180_000);

beforeEach(async () => {
  // The memory extraction of a transcript that mentions the vault answers alice's fact; any other, nothing.
  wire = await startChatServer({
    memoryReply: (request) =>
      textReply(
        JSON.stringify({
          memories: request.rawBody.includes('vault code') ? [{ content: ALICE_FACT, category: 'fact' }] : [],
        }),
      ),
  });
  sandbox = await createSandbox();
  await mkdir(sandbox.home, { recursive: true, mode: 0o700 });
  await writeFile(
    path.join(sandbox.home, 'config.json'),
    JSON.stringify({ server: { tokens: { [ALICE]: 'alice', [BOB]: 'bob' }, idleSessionMs: 100 } }),
  );
});

afterEach(async () => {
  if (serving !== undefined && serving.child.exitCode === null) serving.child.kill('SIGKILL');
  await serving?.result;
  serving = undefined;
  await wire.close();
  await sandbox.remove();
});

function headers(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
}

async function serve(): Promise<string> {
  serving = startCli({
    args: ['serve', '--port', '0', '--host', '127.0.0.1', '--base-url', wire.baseURL],
    sandbox,
  });
  return waitForServeUrl(serving);
}

/** Creates a session as `token`'s tenant and runs one turn; answers the turn request the model server got. */
async function turnAs(
  url: string,
  token: string,
  content: string,
): Promise<{ sessionId: string; sent: string }> {
  const created = await fetch(`${url}/sessions`, { method: 'POST', headers: headers(token), body: '{}' });
  expect(created.status).toBe(201);
  const { sessionId } = (await created.json()) as { sessionId: string };
  return turnIn(url, token, sessionId, content);
}

/** Runs one turn in a session; answers the turn request the model server got. */
async function turnIn(
  url: string,
  token: string,
  sessionId: string,
  content: string,
): Promise<{ sessionId: string; sent: string }> {
  const before = wire.turnRequests().length;
  wire.reply(textReply('Noted.'));
  const turn = await fetch(`${url}/sessions/${sessionId}/messages`, {
    method: 'POST',
    headers: headers(token),
    body: JSON.stringify({ content }),
  });
  expect(await turn.text()).toContain('event: turn_complete');
  const request: WireRequest | undefined = wire.turnRequests()[before];
  return { sessionId, sent: request?.rawBody ?? '' };
}

/** Runs `youyou -p` in the same home; answers its session id and the turn request the model server got. */
async function localTurn(): Promise<{ sessionId: string; sent: string }> {
  const before = wire.turnRequests().length;
  wire.reply(textReply('Local answer.'));
  const result = await runCli({ args: ['-p', 'hello', '--json', '--base-url', wire.baseURL], sandbox });
  expect(result.code).toBe(0);
  const [first] = jsonLines(result.stdout) as { sessionId: string }[];
  return { sessionId: first?.sessionId ?? '', sent: wire.turnRequests()[before]?.rawBody ?? '' };
}

/** Every memory of these namespaces in the home's youyou.db. */
async function storedMemories(namespaces: string[]): Promise<Memory[]> {
  const storage = await openSqliteStorage(path.join(sandbox.home, 'youyou.db'));
  try {
    const found = await Promise.all(
      namespaces.map((namespace) => storage.memories.search(namespace, '', Number.POSITIVE_INFINITY)),
    );
    return found.flat();
  } finally {
    await storage.close();
  }
}

test("a memory extracted from alice's session reaches her later sessions, never bob's nor the local chat's", async () => {
  const url = await serve();
  await turnAs(url, ALICE, 'Please remember: my vault code is 4711-ORCHID.');
  // The session closes after idleSessionMs; its memory extraction saves the fact.
  await until(
    async () =>
      (await storedMemories(['default', 'tenant:alice'])).some((memory) => memory.content === ALICE_FACT),
    () => "alice's memory in youyou.db",
  );
  const bob = await turnAs(url, BOB, 'Hello, what do you know?');
  expect(bob.sent).not.toContain('4711');
  expect((await storedMemories(['tenant:alice'])).map((memory) => memory.content)).toEqual([ALICE_FACT]);
  expect(await storedMemories(['default', 'tenant:bob'])).toEqual([]);
  const aliceAgain = await turnAs(url, ALICE, 'What is my code?');
  expect(aliceAgain.sent).toContain('4711-ORCHID');
  expect(await stopServe(serving!)).toBe(0);

  const local = await localTurn();
  expect(local.sent).not.toContain('4711');
}, 90_000);

test("memories saved before tenants had namespaces: a tenant's move to that tenant, the local chat's stay", async () => {
  // Sessions of both kinds, then memories in the old shared namespace as an older youyou saved them.
  let url = await serve();
  const alice = await turnAs(url, ALICE, 'Hello.');
  expect(await stopServe(serving!)).toBe(0);
  const local = await localTurn();
  const storage = await openSqliteStorage(path.join(sandbox.home, 'youyou.db'));
  const at = new Date();
  const old = (id: string, content: string, sourceSessionId: string): Memory => ({
    id,
    namespace: 'default',
    content,
    category: 'fact',
    createdAt: at,
    updatedAt: at,
    sourceSessionId,
  });
  await storage.memories.save(old('m-alice', 'Alice old secret 1234-TULIP.', alice.sessionId));
  await storage.memories.save(old('m-local', 'The local user drinks green tea.', local.sessionId));
  await storage.close();

  url = await serve();
  const bob = await turnAs(url, BOB, 'Hello, what do you know?');
  expect(bob.sent).not.toContain('1234-TULIP');
  expect(bob.sent).not.toContain('green tea');
  const aliceAgain = await turnAs(url, ALICE, 'What do you know?');
  expect(aliceAgain.sent).toContain('1234-TULIP');
  expect(aliceAgain.sent).not.toContain('green tea');
  // Her first session, reopened from the log, reads her namespace too.
  const resumed = await turnIn(url, ALICE, alice.sessionId, 'And now?');
  expect(resumed.sent).toContain('1234-TULIP');
  expect(resumed.sent).not.toContain('green tea');
  expect(await stopServe(serving!)).toBe(0);

  const localAgain = await localTurn();
  expect(localAgain.sent).toContain('green tea');
  expect(localAgain.sent).not.toContain('1234-TULIP');
}, 90_000);
