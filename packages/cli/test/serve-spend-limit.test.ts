/**
 * `server.tenantDailyCostUsd`: what one tenant's model calls may cost per day, counted from the shared
 * PostgreSQL storage at each turn's start, so two `youyou serve` processes see one total. Real child processes of
 * the built CLI on real PostgreSQL; only the model's answers are scripted (an OpenAI Chat Completions server).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Pool } from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, expect, test } from 'vitest';
import { type ChatServer, startChatServer, usageReply } from '../../../test-support/cli-wire.js';
import { dropSchema, randomSchema, testDatabase, testPool } from '../../postgres/test/support/database.js';
import { ensureBuilt } from './support/build.js';
import { createSandbox, type RunningCli, type Sandbox, startCli } from './support/cli.js';
import { SERVE_TOKEN, stopServe, waitForServeUrl } from './support/serve.js';

const OTHER_TOKEN = 'serve-test-token-for-team-b-9876';

let admin: Pool;
let wire: ChatServer;
let sandbox: Sandbox;
const schema = randomSchema();
const running: RunningCli[] = [];

function databaseUrl(): string {
  const database = testDatabase();
  const password = database.password ?? '';
  const user = encodeURIComponent(database.user ?? 'postgres');
  const credentials = password === '' ? user : `${user}:${encodeURIComponent(password)}`;
  return `postgres://${credentials}@${database.host}:${database.port}/${encodeURIComponent(database.database ?? '')}`;
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
    JSON.stringify({
      openaiApi: 'chat',
      server: {
        tokens: { [SERVE_TOKEN]: 'team-a', [OTHER_TOKEN]: 'team-b' },
        databaseSchema: schema,
        // gpt-4o-mini: $0.15 in, $0.60 out per million tokens; one call's worst case is about $0.005.
        tenantDailyCostUsd: 0.0065,
      },
    }),
  );
});

afterEach(async () => {
  for (const cli of running.splice(0)) await stopServe(cli);
  await wire.close();
  await sandbox.remove();
});

function serve(): RunningCli {
  const cli = startCli({
    args: [
      'serve',
      '--port',
      '0',
      '--provider',
      'openai',
      '--model',
      'gpt-4o-mini',
      '--base-url',
      wire.baseURL,
    ],
    sandbox,
    env: { YOUYOU_DATABASE_URL: databaseUrl(), OPENAI_API_KEY: 'sk-test-spend-limit' },
  });
  running.push(cli);
  return cli;
}

function auth(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
}

/** Creates a session on `url` as the token's tenant and sends one message; answers the turn's SSE text. */
async function oneTurn(url: string, token: string, content: string): Promise<string> {
  const created = await fetch(`${url}/sessions`, { method: 'POST', headers: auth(token), body: '{}' });
  expect(created.status).toBe(201);
  const { sessionId } = (await created.json()) as { sessionId: string };
  const turn = await fetch(`${url}/sessions/${sessionId}/messages`, {
    method: 'POST',
    headers: auth(token),
    body: JSON.stringify({ content }),
  });
  expect(turn.status).toBe(200);
  return turn.text();
}

test('a tenant’s day total is counted from PostgreSQL: what it spent on A stops its next call on B; another tenant still runs', async () => {
  const a = serve();
  const b = serve();
  const [onA, onB] = [await waitForServeUrl(a), await waitForServeUrl(b)];

  // 20,000 prompt tokens: team-a spends about $0.003 on A.
  wire.reply(usageReply({ prompt: 20_000, completion: 10 }, 'Spent on A.'));
  const first = await oneTurn(onA, SERVE_TOKEN, 'first');
  expect(first).toContain('event: turn_complete');
  expect(first).not.toContain('BUDGET_EXCEEDED');
  expect(wire.turnRequests()).toHaveLength(1);

  // On B, in a new session of team-a: $0.003 spent plus a worst case of about $0.005 passes $0.0065.
  const refused = await oneTurn(onB, SERVE_TOKEN, 'second');
  expect(refused).toContain('BUDGET_EXCEEDED');
  expect(refused).toContain('event: turn_complete');
  expect(wire.turnRequests()).toHaveLength(1);

  // team-b has spent nothing today: its call is made.
  wire.reply(usageReply({ prompt: 100, completion: 5 }, 'Team b answered.'));
  const other = await oneTurn(onB, OTHER_TOKEN, 'third');
  expect(other).not.toContain('BUDGET_EXCEEDED');
  expect(wire.turnRequests()).toHaveLength(2);
}, 120_000);
