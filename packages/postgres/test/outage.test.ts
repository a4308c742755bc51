import { randomBytes } from 'node:crypto';
import type { AgentError, AgentEvent, Message } from '@youyou/agent';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { isRetryableDatabaseError, openPostgresStorage, type PostgresStorage } from '../src/index.js';
import { agentOn, drain, eventTypes, runTurn } from './support/agent.js';
import { dropSchema, randomSchema, testDatabase, testPool } from './support/database.js';
import { closedPort, TcpProxy } from './support/tcp-proxy.js';
import { until } from './support/until.js';

const schema = randomSchema();
let admin: Pool;

beforeAll(async () => {
  admin = testPool();
  const setup = await openPostgresStorage({ pool: admin, schema });
  await setup.close();
});

afterAll(async () => {
  if (admin === undefined) return;
  await dropSchema(admin, schema);
  await admin.end();
});

const retryableStorageError = expect.objectContaining({ code: 'STORAGE_ERROR', retryable: true });

function errorsOf(events: readonly AgentEvent[]): AgentError[] {
  return events.flatMap((event) => (event.payload.type === 'error' ? [event.payload.error] : []));
}

/** The session's log as the text of each message, for "nothing lost, nothing doubled". */
async function logTexts(storage: PostgresStorage, sessionId: string): Promise<string[]> {
  return ((await storage.sessions.loadSession(sessionId)) ?? []).flatMap((event) =>
    event.payload.type === 'user_message' || event.payload.type === 'assistant_message'
      ? [event.payload.content.map((block) => (block.type === 'text' ? block.text : '')).join('')]
      : [],
  );
}

describe('PostgreSQL unreachable', () => {
  test('a storage pointed at a closed port fails with a retryable STORAGE_ERROR', async () => {
    const port = await closedPort();
    await expect(
      openPostgresStorage({
        connectionString: `postgres://nobody:secret-password@127.0.0.1:${port}/none`,
        schema,
      }),
    ).rejects.toEqual(retryableStorageError);
    const error = await openPostgresStorage({
      connectionString: `postgres://nobody:secret-password@127.0.0.1:${port}/none`,
    }).then(
      () => expect.fail('opening a storage on a closed port succeeded'),
      (caught: unknown) => caught as AgentError,
    );
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.message).not.toContain('secret-password');
    expect(isRetryableDatabaseError(error.cause)).toBe(true);
  });

  test('PostgreSQL going away mid-session: error event STORAGE_ERROR, then the session goes on with a complete log', async () => {
    const database = testDatabase();
    const proxy = await TcpProxy.open({ host: database.host, port: database.port });
    const pool = testPool({ host: '127.0.0.1', port: proxy.port, connectionTimeoutMillis: 2_000 });
    const storage = await openPostgresStorage({ pool, schema });
    try {
      const { agent } = await agentOn(storage, {
        responses: [[{ type: 'text', text: 'answer 1' }], [{ type: 'text', text: 'answer 3' }]],
      });
      const session = await agent.newSession();
      expect(eventTypes(await runTurn(session, 'question 1'))).toStrictEqual(['text_delta', 'turn_complete']);

      await proxy.stop();
      await expect(storage.sessions.loadSession(session.id)).rejects.toEqual(retryableStorageError);
      await expect(storage.memories.search('default', '', 5)).rejects.toEqual(retryableStorageError);
      const failed = await runTurn(session, 'question 2');
      expect(eventTypes(failed)).toStrictEqual(['error', 'turn_complete']);
      expect(errorsOf(failed)).toEqual([retryableStorageError]);

      await proxy.start();
      const recovered = await runTurn(session, 'question 3');
      expect(eventTypes(recovered)).toStrictEqual(['text_delta', 'turn_complete']);
      expect(await logTexts(storage, session.id)).toStrictEqual([
        'question 1',
        'answer 1',
        'question 2',
        'question 3',
        'answer 3',
      ]);
      const messages = session.messages();
      await session.close();
      await expectResumesAs(storage, session.id, messages);
      await agent.shutdown();
    } finally {
      await storage.close();
      await pool.end();
      await proxy.stop();
    }
  });

  test('backends terminated during a save: error event STORAGE_ERROR, then the session goes on with a complete log', async () => {
    const applicationName = `yy_outage_${randomBytes(4).toString('hex')}`;
    const pool = testPool({ application_name: applicationName, max: 2 });
    const storage = await openPostgresStorage({ pool, schema });
    const locker = await admin.connect();
    try {
      const { agent } = await agentOn(storage, {
        responses: [[{ type: 'text', text: 'answer 1' }], [{ type: 'text', text: 'answer 3' }]],
      });
      const session = await agent.newSession();
      await runTurn(session, 'question 1');

      // Hold the session's activity row (every save updates it), so that the next save waits inside PostgreSQL...
      await locker.query('BEGIN');
      await locker.query(
        `SELECT 1 FROM "${schema}".youyou_session_activity WHERE session_id = $1 FOR UPDATE`,
        [session.id],
      );
      const turn = await session.sendMessage('question 2');
      const events = drain(turn);
      await until(async () => {
        const waiting = await admin.query(
          `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1
              AND wait_event_type = 'Lock'`,
          [applicationName],
        );
        return waiting.rowCount === 1;
      }, 'the save to wait on the row lock');
      // ...and kill the storage's connections while it does (only this test's: other files run in parallel).
      const killed = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = $1`,
        [applicationName],
      );
      expect(killed.rowCount).toBeGreaterThanOrEqual(1);
      await locker.query('ROLLBACK');
      const failed = await events;
      expect(eventTypes(failed)).toStrictEqual(['error', 'turn_complete']);
      expect(errorsOf(failed)).toEqual([retryableStorageError]);

      const recovered = await runTurn(session, 'question 3');
      expect(eventTypes(recovered)).toStrictEqual(['text_delta', 'turn_complete']);
      expect(await logTexts(storage, session.id)).toStrictEqual([
        'question 1',
        'answer 1',
        'question 2',
        'question 3',
        'answer 3',
      ]);
      const messages = session.messages();
      await session.close();
      await expectResumesAs(storage, session.id, messages);
      await agent.shutdown();
    } finally {
      locker.release();
      await storage.close();
      await pool.end();
    }
  });

  test('a save whose connection drops after COMMIT is not doubled when the core retries it', async () => {
    const proxy = await TcpProxy.open({ host: testDatabase().host, port: testDatabase().port });
    const pool = testPool({ host: '127.0.0.1', port: proxy.port });
    const storage = await openPostgresStorage({ pool, schema });
    try {
      const event = {
        timestamp: new Date(1_000),
        payload: { type: 'user_message' as const, content: [{ type: 'text' as const, text: 'once' }] },
      };
      // The statement reaches PostgreSQL and commits, but its answer never comes back...
      proxy.mute(true);
      const saved = storage.sessions.saveEvent('exactly-once', event);
      await until(async () => (await committedEvents('exactly-once')) > 0, 'the event to be committed');
      // ...because the connection drops.
      await proxy.stop();
      await expect(saved).rejects.toEqual(retryableStorageError);
      proxy.mute(false);
      await proxy.start();
      // The core retries the same event object until the storage takes it (SessionLog keeps it queued).
      await saveUntilAccepted(() => storage.sessions.saveEvent('exactly-once', event));
      expect(await storage.sessions.loadSession('exactly-once')).toStrictEqual([event]);
      expect(
        (await storage.sessions.listSessions(undefined, 10)).sessions.find(
          (item) => item.sessionId === 'exactly-once',
        )?.messageCount,
      ).toBe(1);
      // A new save of the same object after a success is a new event.
      await storage.sessions.saveEvent('exactly-once', event);
      expect(await storage.sessions.loadSession('exactly-once')).toStrictEqual([event, event]);

      // The same on the short path a save of a session this storage has written takes.
      const later = {
        timestamp: new Date(2_000),
        payload: { type: 'user_message' as const, content: [{ type: 'text' as const, text: 'later' }] },
      };
      proxy.mute(true);
      const appended = storage.sessions.saveEvent('exactly-once', later);
      await until(
        async () => (await committedEvents('exactly-once')) === 3,
        'the later event to be committed',
      );
      await proxy.stop();
      await expect(appended).rejects.toEqual(retryableStorageError);
      proxy.mute(false);
      await proxy.start();
      await saveUntilAccepted(() => storage.sessions.saveEvent('exactly-once', later));
      expect(await storage.sessions.loadSession('exactly-once')).toStrictEqual([event, event, later]);
      expect(
        (await storage.sessions.listSessions(undefined, 10)).sessions.find(
          (item) => item.sessionId === 'exactly-once',
        )?.messageCount,
      ).toBe(3);
    } finally {
      await storage.close();
      await pool.end();
      await proxy.stop();
    }
  });
});

/** Calls `save` again while it fails with a retryable STORAGE_ERROR, as the core's write-ahead log does. */
/** How many events of the session PostgreSQL holds, read past the storage under test. */
async function committedEvents(sessionId: string): Promise<number> {
  const result = await admin.query(`SELECT 1 FROM "${schema}".youyou_session_events WHERE session_id = $1`, [
    sessionId,
  ]);
  return result.rowCount ?? 0;
}

async function saveUntilAccepted(save: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await save();
      return;
    } catch (error) {
      expect(error).toEqual(retryableStorageError);
      if (attempt === 5) throw error;
    }
  }
}

/** A fresh Agent on a fresh pool resumes the session with the same context. */
async function expectResumesAs(
  storage: PostgresStorage,
  sessionId: string,
  messages: Message[],
): Promise<void> {
  const pool = testPool();
  const fresh = await openPostgresStorage({ pool, schema: storage.schema });
  try {
    const { agent } = await agentOn(fresh);
    const resumed = await agent.resumeSession(sessionId);
    expect(resumed.messages()).toStrictEqual(messages);
    await agent.shutdown();
  } finally {
    await fresh.close();
    await pool.end();
  }
}
