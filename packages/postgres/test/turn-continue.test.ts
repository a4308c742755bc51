/**
 * Issue 26 on PostgreSQL: a child process holding the session's lease runs a turn and is SIGKILLed at one point of
 * it; once its lease has passed, this process resumes the session and continues the turn. The finished context
 * is that of the turn run whole, and the mutating tool's effects on disk show no second run without approval.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { type Agent, InMemorySessionStorage, isAgentError, type Message, type Session } from '@youyou/agent';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  CONTINUES_AT,
  CUT_POINTS,
  CUT_TURN_INPUT,
  type CutPoint,
  cutAgent,
  cutTools,
  SUMMARY,
  TURN_SCRIPT,
} from '../../../test-support/cut-turn.js';
import { openPostgresStorage, type PostgresStorage } from '../src/index.js';
import { dropSchema, poolConfig, randomSchema, testPool } from './support/database.js';
import { until } from './support/until.js';

const schema = randomSchema();
const TTL_MS = 1_000;
const fixture = fileURLToPath(new URL('./fixtures/cut-process.mjs', import.meta.url));
const sourceHooks = fileURLToPath(new URL('../../sqlite/test/fixtures/run-sources.mjs', import.meta.url));
let admin: Pool;
let storage: PostgresStorage;
let folder: string;
const children: ChildProcessWithoutNullStreams[] = [];

beforeAll(async () => {
  admin = testPool();
  storage = await openPostgresStorage({ pool: admin, schema, lease: { ttlMs: TTL_MS } });
  folder = mkdtempSync(join(tmpdir(), 'youyou-cut-'));
});

afterAll(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await storage?.close();
  if (admin !== undefined) {
    await dropSchema(admin, schema);
    await admin.end();
  }
  rmSync(folder, { recursive: true, force: true });
});

function effects(path: string): string[] {
  return existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
    : [];
}

/** Starts the child at `point` and waits until it is there; kills it; answers the session id. */
async function killAt(point: CutPoint, effectsPath: string): Promise<string> {
  const child = spawn(process.execPath, ['--import', sourceHooks, fixture, point, effectsPath], {
    env: {
      ...process.env,
      YOUYOU_CUT_TEST: JSON.stringify({ pool: poolConfig({ max: 2 }), schema, ttlMs: TTL_MS }),
    },
  });
  children.push(child);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  );
  let sessionId = '';
  const reached = new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('SESSION ')) sessionId = line.slice('SESSION '.length);
      if (line === CUT_POINTS[point]) resolve();
    });
    void exited.then(() => reject(new Error(`the child exited before ${point}: ${stderr}`)));
  });
  await reached;
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  return sessionId;
}

/** Resumes the session once the killed process's lease has passed (SESSION_BUSY until then). */
async function resumeAfterLease(agent: Agent, sessionId: string): Promise<Session> {
  let session: Session | undefined;
  await until(
    async () => {
      try {
        session = await agent.resumeSession(sessionId);
        return true;
      } catch (error) {
        if (isAgentError(error) && error.code === 'SESSION_BUSY') return false;
        throw error;
      }
    },
    "the killed process's lease to pass",
    20_000,
  );
  if (session === undefined) throw new Error('unreachable: resumed without a session');
  return session;
}

async function uninterruptedContext(): Promise<Message[]> {
  const { agent } = await cutAgent({
    storage: new InMemorySessionStorage(),
    responses: TURN_SCRIPT,
    compaction: [SUMMARY],
    tools: cutTools({ effectsPath: join(folder, 'whole-effects.txt') }),
  });
  const session = await agent.newSession();
  for await (const _ of await session.sendMessage(CUT_TURN_INPUT)) {
  }
  const messages = session.messages();
  await session.close();
  await agent.shutdown();
  return messages;
}

describe('a turn cut by SIGKILL is continued by another process after the lease passes', () => {
  test.each(['stream', 'mutating-call', 'after-results', 'compaction'] as const)(
    'killed at %s',
    async (point) => {
      const whole = await uninterruptedContext();
      const effectsPath = join(folder, `${point}-effects.txt`);
      const sessionId = await killAt(point, effectsPath);
      const ranAtKill = effects(effectsPath).length;
      const { agent } = await cutAgent({
        storage: storage.sessions,
        responses: TURN_SCRIPT.slice(CONTINUES_AT[point]),
        compaction: [SUMMARY],
        tools: cutTools({ effectsPath }),
      });
      const session = await resumeAfterLease(agent, sessionId);
      let turn = await session.continue();
      let last: string | undefined;
      for await (const event of turn) last = event.payload.type;
      if (point === 'mutating-call') {
        expect(last).toBe('turn_suspended');
        expect(session.pendingApprovals()).toEqual([
          { callId: 'c2', toolName: 'append_line', arguments: { line: 'one' }, mayHaveRun: true },
        ]);
        // Nothing ran again before the decision.
        expect(effects(effectsPath)).toHaveLength(ranAtKill);
        await session.approve('c2');
        turn = await session.continue();
        for await (const event of turn) last = event.payload.type;
        expect(effects(effectsPath)).toHaveLength(ranAtKill + 1);
      } else {
        expect(effects(effectsPath)).toEqual(['one']);
      }
      expect(last).toBe('turn_complete');
      expect(session.messages()).toEqual(whole);
      await session.close();
      await agent.shutdown();
      const reader = await cutAgent({ storage: storage.sessions, responses: [], compaction: [], tools: [] });
      const replayed = await reader.agent.resumeSession(sessionId);
      expect(replayed.messages()).toEqual(whole);
      expect(replayed.interruptedTurn()).toBeUndefined();
      await replayed.close();
      await reader.agent.shutdown();
    },
    60_000,
  );
});
