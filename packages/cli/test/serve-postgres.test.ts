import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Pool } from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import {
  type ChatServer,
  contentText,
  hangingReply,
  messagesOf,
  startChatServer,
  textReply,
  toolCallReply,
} from '../../../test-support/cli-wire.js';
import { dropSchema, randomSchema, testDatabase, testPool } from '../../postgres/test/support/database.js';
import { readSse, type SseMessage } from '../../server/test/support/harness.js';
import { ensureBuilt } from './support/build.js';
import { createSandbox, type RunningCli, runCli, type Sandbox, startCli } from './support/cli.js';
import { SERVE_AUTH, SERVE_TOKEN, stopServe, waitForServeUrl } from './support/serve.js';
import { until } from './support/until.js';

// `youyou serve --database-url` as real child processes of the built CLI on a real PostgreSQL (DATABASE_URL,
// as for @youyou/postgres: `eval "$(scripts/start-postgres.sh)"`), each test file on a schema of its own
// (config.json server.databaseSchema); only the model's answers are scripted (an OpenAI-compatible server).

let admin: Pool;
let wire: ChatServer;
let sandbox: Sandbox;
const schema = randomSchema();
const running: RunningCli[] = [];

/** The test database as a URL; the password is written %-encoded, so its raw form is text no output has. */
function databaseUrl(overrides: { password?: string; port?: number } = {}): string {
  const database = testDatabase();
  const password = overrides.password ?? database.password ?? '';
  const encoded = [...password].map((character) => `%${character.charCodeAt(0).toString(16)}`).join('');
  const user = encodeURIComponent(database.user ?? 'postgres');
  const host = database.host.includes(':') ? `[${database.host}]` : database.host;
  return `postgres://${user}${password === '' ? '' : `:${encoded}`}@${host}:${overrides.port ?? database.port}/${encodeURIComponent(database.database ?? '')}`;
}

/** Where the banner says the sessions are. */
function where(): string {
  const database = testDatabase();
  return `${database.host}:${database.port}/${database.database ?? ''}`;
}

beforeAll(async () => {
  admin = testPool();
  await ensureBuilt();
}, 240_000);

afterAll(async () => {
  if (admin === undefined) return;
  await dropSchema(admin, schema);
  await admin.end();
});

beforeEach(async () => {
  wire = await startChatServer();
  sandbox = await createSandbox();
  await mkdir(sandbox.home, { recursive: true });
  await writeFile(
    path.join(sandbox.home, 'config.json'),
    JSON.stringify({ server: { tokens: { [SERVE_TOKEN]: 'team-a' }, databaseSchema: schema } }),
  );
});

afterEach(async () => {
  for (const cli of running.splice(0)) await stopServe(cli);
  await wire.close();
  await sandbox.remove();
});

function serve(args: string[], env: Record<string, string> = {}): RunningCli {
  const cli = startCli({
    args: ['serve', '--port', '0', '--base-url', wire.baseURL, ...args],
    sandbox,
    env: { YOUYOU_DATABASE_URL: '', ...env },
  });
  running.push(cli);
  return cli;
}

async function createSession(url: string): Promise<string> {
  const created = await fetch(`${url}/sessions`, { method: 'POST', headers: SERVE_AUTH, body: '{}' });
  expect(created.status).toBe(201);
  return ((await created.json()) as { sessionId: string }).sessionId;
}

function sendMessage(url: string, sessionId: string, content: string): Promise<Response> {
  return fetch(`${url}/sessions/${sessionId}/messages`, {
    method: 'POST',
    headers: SERVE_AUTH,
    body: JSON.stringify({ content }),
  });
}

/** Reads `/sessions/:id/log` in the background into `received`, from the start of the log. */
function tailLog(url: string, sessionId: string, received: SseMessage[]): { stop: () => Promise<void> } {
  const controller = new AbortController();
  const done = (async () => {
    const response = await fetch(`${url}/sessions/${sessionId}/log`, {
      headers: SERVE_AUTH,
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    for await (const message of readSse(response)) received.push(message);
  })().catch(() => undefined);
  return {
    stop: async () => {
      controller.abort();
      await done;
    },
  };
}

const logTypes = (messages: SseMessage[]): string[] =>
  messages.map((message) => (message.data.payload as { type: string }).type);

test('serve --database-url keeps sessions in PostgreSQL, not in ~/.youyou, and never shows the password', async () => {
  const url = databaseUrl();
  const cli = serve(['--database-url', url]);
  const base = await waitForServeUrl(cli);
  expect(cli.stdout()).toContain(`sessions in PostgreSQL at ${where()}`);
  const sessionId = await createSession(base);

  wire.reply(textReply('Stored in ', 'PostgreSQL.'));
  const turn = await sendMessage(base, sessionId, 'Hello database');
  expect(turn.status).toBe(200);
  expect(await turn.text()).toContain('event: turn_complete');

  const rows = await admin.query<{ payload_type: string; payload: string }>(
    `SELECT payload_type, payload FROM "${schema}".youyou_session_events WHERE session_id = $1 ORDER BY seq`,
    [sessionId],
  );
  const types = rows.rows.map((row) => row.payload_type);
  expect(types).toContain('user_message');
  expect(types).toContain('assistant_message');
  expect(rows.rows.map((row) => row.payload).join('\n')).toContain('Hello database');

  expect(await stopServe(cli)).toBe(0);
  const result = await cli.result;
  // Nothing of the sessions went to the home folder: no youyou.db (nor its WAL) was written.
  expect((await readdir(sandbox.home)).filter((name) => name.startsWith('youyou.db'))).toEqual([]);
  for (const output of [result.stdout, result.stderr]) {
    expect(output).not.toContain(url);
    expect(output).not.toContain(new URL(url).password);
  }
}, 90_000);

test('two serve processes on one database: a session made on A is listed on B, B tails A’s turn, and B resumes it once A closes it idle', async () => {
  await writeFile(path.join(sandbox.workspace, 'notes.txt'), 'the notes');
  await writeFile(
    path.join(sandbox.home, 'config.json'),
    JSON.stringify({
      server: { tokens: { [SERVE_TOKEN]: 'team-a' }, databaseSchema: schema, idleSessionMs: 1_000 },
    }),
  );
  const a = serve(['--database-url', databaseUrl()]);
  // B takes the URL from the environment, as a deployment that keeps it out of `ps` does.
  const b = serve([], { YOUYOU_DATABASE_URL: databaseUrl() });
  const [onA, onB] = [await waitForServeUrl(a), await waitForServeUrl(b)];
  const sessionId = await createSession(onA);

  // B lists the session A created (the tenant is read from the shared log).
  const listed = (await (await fetch(`${onB}/sessions`, { headers: SERVE_AUTH })).json()) as {
    sessions: { sessionId: string }[];
  };
  expect(listed.sessions.map((session) => session.sessionId)).toContain(sessionId);

  // B tails the committed log while A runs a turn with a tool call.
  const tailed: SseMessage[] = [];
  const tail = tailLog(onB, sessionId, tailed);
  wire.reply(
    toolCallReply({ id: 'call_read', name: 'read_file', arguments: { path: 'notes.txt' } }),
    textReply('The notes say hello.'),
  );
  const first = await sendMessage(onA, sessionId, 'first question');
  expect(await first.text()).toContain('event: turn_complete');
  await until(
    () => logTypes(tailed).includes('assistant_message') && logTypes(tailed).includes('tool_result'),
    () => `the turn on B's tail: ${logTypes(tailed)}`,
  );
  const toolCall = logTypes(tailed).indexOf('tool_call');
  expect(logTypes(tailed).indexOf('user_message')).toBeLessThan(toolCall);
  expect(toolCall).toBeLessThan(logTypes(tailed).indexOf('tool_result'));
  const ids = tailed.map((message) => Number(message.id));
  expect(ids).toEqual(ids.map((_id, index) => index + 1));

  // A second turn on A that is still running: its message is on B's tail before it ends.
  wire.reply(hangingReply('Thinking'));
  const second = sendMessage(onA, sessionId, 'second question');
  await until(
    () => JSON.stringify(tailed).includes('second question'),
    () => `the running turn's message on B's tail: ${logTypes(tailed)}`,
  );
  const status = (await (await fetch(`${onA}/sessions/${sessionId}`, { headers: SERVE_AUTH })).json()) as {
    turnRunning: boolean;
  };
  expect(status.turnRunning).toBe(true);

  // A holds the session's lease: B may read it but not run it.
  const busy = await sendMessage(onB, sessionId, 'from B too early');
  expect(busy.status).toBe(409);
  expect(((await busy.json()) as { error: { code: string } }).error.code).toBe('SESSION_BUSY');

  await fetch(`${onA}/sessions/${sessionId}/cancel`, { method: 'POST', headers: SERVE_AUTH });
  await (await second).text();
  // A, still running, closes the idle session after server.idleSessionMs and lets its lease go; B then
  // resumes the session with its whole history.
  wire.reply(textReply('Answered on B.'));
  let third = await sendMessage(onB, sessionId, 'third question');
  const deadline = Date.now() + 15_000;
  while (third.status === 409 && Date.now() < deadline) {
    await third.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, 200));
    third = await sendMessage(onB, sessionId, 'third question');
  }
  expect(third.status).toBe(200);
  expect(await third.text()).toContain('Answered on B.');
  expect(a.child.exitCode).toBeNull();
  const sent = messagesOf(wire.turnRequests().at(-1)!).map(contentText).join('\n');
  expect(sent).toContain('first question');
  expect(sent).toContain('The notes say hello.');
  await until(
    () => JSON.stringify(tailed).includes('Answered on B.'),
    () => `B's own turn on its tail: ${logTypes(tailed)}`,
  );
  await tail.stop();
}, 120_000);

test('a bad or unreachable database is one line and a non-zero exit, with no stack and no password', async () => {
  const secret = 'Sup3r-Secret-Pass';
  const cases: { args: string[]; env?: Record<string, string>; code: number }[] = [
    { args: ['--database-url', 'not a url'], code: 2 },
    { args: ['--database-url', `mysql://user:${secret}@127.0.0.1/db`], code: 2 },
    { args: [], env: { YOUYOU_DATABASE_URL: `postgres://user:${secret}@127.0.0.1:5432/db%zz` }, code: 2 },
    // Nothing listens on port 1; a wrong password is refused by the server.
    { args: ['--database-url', databaseUrl({ password: secret, port: 1 })], code: 1 },
    { args: ['--database-url', databaseUrl({ password: secret })], code: 1 },
  ];
  for (const { args, env, code } of cases) {
    const result = await runCli({
      args: ['serve', '--port', '0', '--base-url', wire.baseURL, ...args],
      sandbox,
      env: { YOUYOU_DATABASE_URL: '', ...env },
    });
    expect(result.code, result.stderr).toBe(code);
    expect(result.stdout).not.toContain('serving on');
    const lines = result.stderr.trim().split('\n');
    expect(lines.filter((line) => line.startsWith('youyou:') && !line.includes('warning'))).toHaveLength(1);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    const hex = [...secret].map((character) => `%${character.charCodeAt(0).toString(16)}`).join('');
    for (const output of [result.stdout, result.stderr]) {
      expect(output).not.toContain(secret);
      expect(output).not.toContain(hex);
    }
  }
  // --database-url belongs to serve.
  const misplaced = await runCli({ args: ['-p', 'hi', '--database-url', databaseUrl()], sandbox });
  expect(misplaced.code).toBe(2);
}, 90_000);
