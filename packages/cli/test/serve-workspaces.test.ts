import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import {
  type ChatServer,
  startChatServer,
  textReply,
  toolCallReply,
  toolResult,
} from '../../../test-support/cli-wire.js';
import { ensureBuilt } from './support/build.js';
import { createSandbox, type RunningCli, type Sandbox, startCli } from './support/cli.js';
import { stopServe, waitForServeUrl } from './support/serve.js';

// `youyou serve` gives each tenant (or each session) its own workspace folder: what alice's tools write, bob's
// tools (file tools and the sandboxed shell) cannot read, whatever path they try.

const TOKENS = {
  alice: 'alice-token-0123456789abcdef',
  bob: 'bob-token-0123456789abcdef-0',
  // A tenant name the token map accepts and a path would misread.
  dots: 'dots-token-0123456789abcdef',
} as const;
const NOTE = 'ALICE-PRIVATE-NOTE-7781';

let wire: ChatServer;
let sandbox: Sandbox;
let serving: RunningCli | undefined;

beforeAll(ensureBuilt, 180_000);

beforeEach(async () => {
  wire = await startChatServer();
  sandbox = await createSandbox();
  await mkdir(sandbox.home, { recursive: true, mode: 0o700 });
});

afterEach(async () => {
  if (serving !== undefined && serving.child.exitCode === null) serving.child.kill('SIGKILL');
  await serving?.result;
  serving = undefined;
  await wire.close();
  await sandbox.remove();
});

async function serve(server: Record<string, unknown>): Promise<string> {
  const tokens = { [TOKENS.alice]: 'alice', [TOKENS.bob]: 'bob', [TOKENS.dots]: '..' };
  await writeFile(path.join(sandbox.home, 'config.json'), JSON.stringify({ server: { tokens, ...server } }));
  serving = startCli({
    args: ['serve', '--port', '0', '--host', '127.0.0.1', '--base-url', wire.baseURL],
    sandbox,
  });
  return waitForServeUrl(serving);
}

function headers(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
}

async function createSession(url: string, token: string): Promise<string> {
  const created = await fetch(`${url}/sessions`, { method: 'POST', headers: headers(token), body: '{}' });
  expect(created.status).toBe(201);
  return ((await created.json()) as { sessionId: string }).sessionId;
}

/**
 * One turn in which the model calls `tool` once; a mutating call is approved over HTTP, as the server's
 * approval flow requires. Answers the tool's result as the model server received it.
 */
async function callTool(options: {
  url: string;
  token: string;
  sessionId: string;
  callId: string;
  tool: string;
  arguments: Record<string, unknown>;
  mutating: boolean;
}): Promise<string> {
  const { url, token, sessionId, callId } = options;
  let result: string | undefined;
  wire.reply(toolCallReply({ id: callId, name: options.tool, arguments: options.arguments }), (request) => {
    result = toolResult(request, callId);
    return textReply('Done.');
  });
  const turn = await fetch(`${url}/sessions/${sessionId}/messages`, {
    method: 'POST',
    headers: headers(token),
    body: JSON.stringify({ content: `please run ${options.tool}` }),
  });
  let stream = await turn.text();
  if (options.mutating) {
    expect(stream).toContain('event: turn_suspended');
    const approved = await fetch(`${url}/sessions/${sessionId}/approvals/${callId}`, {
      method: 'POST',
      headers: headers(token),
      body: JSON.stringify({ approved: true }),
    });
    stream = await approved.text();
  }
  expect(stream).toContain('event: turn_complete');
  expect(result).toBeDefined();
  return result ?? '';
}

test("each tenant has its own workspace: bob's read_file and shell get nothing of alice's notes", async () => {
  const url = await serve({});
  const root = path.join(sandbox.home, 'workspaces');
  const alice = await createSession(url, TOKENS.alice);
  await callTool({
    url,
    token: TOKENS.alice,
    sessionId: alice,
    callId: 'call_write',
    tool: 'write_file',
    arguments: { path: 'notes.txt', content: NOTE },
    mutating: true,
  });
  expect(await readFile(path.join(root, 'alice', 'notes.txt'), 'utf8')).toBe(NOTE);
  expect(existsSync(path.join(sandbox.workspace, 'notes.txt'))).toBe(false);

  const bob = await createSession(url, TOKENS.bob);
  const results: string[] = [];
  for (const [index, target] of [
    'notes.txt',
    '../alice/notes.txt',
    path.join(root, 'alice', 'notes.txt'),
  ].entries()) {
    results.push(
      await callTool({
        url,
        token: TOKENS.bob,
        sessionId: bob,
        callId: `call_read_${index}`,
        tool: 'read_file',
        arguments: { path: target },
        mutating: false,
      }),
    );
  }
  // The shell runs in bob's own folder; the folder of every workspace is hidden around it.
  const listing = await callTool({
    url,
    token: TOKENS.bob,
    sessionId: bob,
    callId: 'call_shell',
    tool: 'shell',
    arguments: {
      command: `cat ../alice/notes.txt ${root}/alice/notes.txt; ls -a .. | tr 'a-z' 'A-Z'; echo mine > mine.txt`,
    },
    mutating: true,
  });
  results.push(listing);
  for (const result of results) expect(result).not.toContain(NOTE);
  expect(listing).toContain('BOB');
  expect(listing).not.toContain('ALICE');
  // Bob's own folder stays writable for his shell.
  expect(await readFile(path.join(root, 'bob', 'mine.txt'), 'utf8')).toBe('mine\n');
  expect(await readdir(path.join(root, 'bob'))).toEqual(['mine.txt']);

  // A tenant named `..` writes inside its own escaped folder, not in the folder above the root.
  const dots = await createSession(url, TOKENS.dots);
  await callTool({
    url,
    token: TOKENS.dots,
    sessionId: dots,
    callId: 'call_dots',
    tool: 'write_file',
    arguments: { path: 'notes.txt', content: 'dots' },
    mutating: true,
  });
  expect(await readFile(path.join(root, '_2e_2e', 'notes.txt'), 'utf8')).toBe('dots');
  expect(existsSync(path.join(sandbox.home, 'notes.txt'))).toBe(false);
  expect((await readdir(root)).sort()).toEqual(['_2e_2e', 'alice', 'bob']);
  expect(await stopServe(serving!)).toBe(0);
}, 90_000);

test('server.workspaces "session": each session its own folder inside its tenant\'s, under server.workspaceRoot', async () => {
  const url = await serve({ workspaces: 'session', workspaceRoot: 'tenant-files' });
  // A relative root is taken from the folder serve runs in.
  const root = path.join(sandbox.workspace, 'tenant-files');
  const first = await createSession(url, TOKENS.alice);
  await callTool({
    url,
    token: TOKENS.alice,
    sessionId: first,
    callId: 'call_write',
    tool: 'write_file',
    arguments: { path: 'draft.txt', content: NOTE },
    mutating: true,
  });
  expect(await readFile(path.join(root, 'alice', first, 'draft.txt'), 'utf8')).toBe(NOTE);

  const second = await createSession(url, TOKENS.alice);
  const read = await callTool({
    url,
    token: TOKENS.alice,
    sessionId: second,
    callId: 'call_read',
    tool: 'read_file',
    arguments: { path: `../${first}/draft.txt` },
    mutating: false,
  });
  expect(read).not.toContain(NOTE);
  expect(await stopServe(serving!)).toBe(0);
}, 90_000);
