import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Pool } from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { buildUnderLock } from '../../../test-support/build-lock.js';
import { openPostgresStorage } from '../src/index.js';
import { agentOn, runTurn } from './support/agent.js';
import { dropSchema, poolConfig, randomSchema, testPool } from './support/database.js';

const fixture = fileURLToPath(new URL('./fixtures/lease-process.mjs', import.meta.url));
const schema = randomSchema();
const TTL_MS = 1_500;
let admin: Pool;
let sessionId: string;
const children: ChildProcess[] = [];

/** A reply from a child process. */
interface Reply {
  type: string;
  message?: string;
  owner?: string;
  acquiredAt?: number;
  expiresAt?: number;
  events?: string[];
}

beforeAll(async () => {
  admin = testPool();
  // The children run the built packages, as a deployed app server would.
  await buildUnderLock(['agent', 'postgres']);
  const storage = await openPostgresStorage({ pool: admin, schema });
  const { agent } = await agentOn(storage, { responses: [[{ type: 'text', text: 'created' }]] });
  const session = await agent.newSession();
  await runTurn(session, 'create the session');
  await session.close();
  await agent.shutdown();
  await storage.close();
  sessionId = session.id;
}, 180_000);

afterAll(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (admin === undefined) return;
  await dropSchema(admin, schema);
  await admin.end();
});

/** An app server process driven over IPC. */
class AppServer {
  readonly child: ChildProcess;
  readonly #replies: Reply[] = [];
  readonly #waiting: { resolve: (reply: Reply) => void; reject: (error: Error) => void }[] = [];
  readonly exited: Promise<void>;

  constructor() {
    this.child = fork(fixture, [], {
      execArgv: [],
      env: {
        ...process.env,
        YOUYOU_LEASE_TEST: JSON.stringify({ pool: poolConfig({ max: 2 }), schema, sessionId, ttlMs: TTL_MS }),
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    children.push(this.child);
    this.child.on('message', (reply: Reply) => {
      const waiter = this.#waiting.shift();
      if (waiter === undefined) this.#replies.push(reply);
      else waiter.resolve(reply);
    });
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code) => {
        for (const waiter of this.#waiting.splice(0)) {
          waiter.reject(new Error(`the app server process exited (${code}) before replying`));
        }
        resolve();
      }),
    );
  }

  /** The next reply (the first one is `ready`). */
  next(): Promise<Reply> {
    const reply = this.#replies.shift();
    if (reply !== undefined) return Promise.resolve(reply);
    if (this.child.exitCode !== null || this.child.signalCode !== null) {
      return Promise.reject(new Error('the app server process has exited'));
    }
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }

  /** Sends a command and returns its reply; a failed command fails the test. */
  async ask(command: Record<string, unknown>): Promise<Reply> {
    this.child.send(command);
    const reply = await this.next();
    if (reply.type === 'failed') throw new Error(`app server failed: ${reply.message}`);
    return reply;
  }
}

test('two processes race for one session: exactly one holds it', async () => {
  const servers = [new AppServer(), new AppServer()];
  await Promise.all(servers.map((server) => server.next()));
  const replies = await Promise.all(servers.map((server) => server.ask({ type: 'acquire' })));
  expect(replies.map((reply) => reply.type).sort()).toStrictEqual(['acquired', 'busy']);
  const holder = servers[replies.findIndex((reply) => reply.type === 'acquired')] as AppServer;
  expect(await holder.ask({ type: 'release' })).toMatchObject({ type: 'released' });
  await Promise.all(
    servers.map(async (server) => {
      server.child.send({ type: 'exit' });
      await server.exited;
    }),
  );
});

test('a killed process loses its session to another after the ttl; release frees it at once', async () => {
  const first = new AppServer();
  const second = new AppServer();
  const [{ owner: firstOwner }] = await Promise.all([first.next(), second.next()]);
  const held = await first.ask({ type: 'acquire' });
  expect(held.type).toBe('acquired');
  expect(
    await first.ask({ type: 'turn', text: 'from the first server', answer: 'first answer' }),
  ).toMatchObject({
    events: ['text_delta', 'turn_complete'],
  });
  const refused = await second.ask({ type: 'acquire' });
  expect(refused).toMatchObject({ type: 'busy', message: expect.stringContaining(String(firstOwner)) });

  // The first app server dies without releasing anything.
  first.child.kill('SIGKILL');
  await first.exited;
  expect(await second.ask({ type: 'acquire' })).toMatchObject({ type: 'busy' });
  const takenOver = await second.ask({ type: 'acquire', waitMs: 20_000 });
  expect(takenOver.type).toBe('acquired');
  expect(takenOver.acquiredAt).toBeGreaterThanOrEqual(held.expiresAt ?? Number.POSITIVE_INFINITY);
  expect(
    await second.ask({ type: 'turn', text: 'from the second server', answer: 'second answer' }),
  ).toMatchObject({
    events: ['text_delta', 'turn_complete'],
  });

  // A third server waits on the second, which releases: the third gets it without waiting for a ttl.
  const third = new AppServer();
  await third.next();
  expect(await third.ask({ type: 'acquire' })).toMatchObject({ type: 'busy' });
  await second.ask({ type: 'release' });
  expect(await third.ask({ type: 'acquire' })).toMatchObject({ type: 'acquired' });
  await third.ask({ type: 'release' });
  for (const server of [second, third]) {
    server.child.send({ type: 'exit' });
    await server.exited;
  }

  const storage = await openPostgresStorage({ pool: admin, schema });
  const texts = ((await storage.sessions.loadSession(sessionId)) ?? []).flatMap((event) =>
    event.payload.type === 'user_message' || event.payload.type === 'assistant_message'
      ? event.payload.content.map((block) => (block.type === 'text' ? block.text : ''))
      : [],
  );
  await storage.close();
  expect(texts).toStrictEqual([
    'create the session',
    'created',
    'from the first server',
    'first answer',
    'from the second server',
    'second answer',
  ]);
}, 60_000);
