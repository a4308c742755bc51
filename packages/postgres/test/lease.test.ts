import { randomBytes } from 'node:crypto';
import type { AgentError } from '@youyou/agent';
import type { Pool, PoolConfig } from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  openPostgresStorage,
  type PostgresStorage,
  type PostgresStorageOptions,
  type SessionLease,
} from '../src/index.js';
import { dropSchema, randomSchema, testPool } from './support/database.js';
import { until } from './support/until.js';

const schema = randomSchema();
let admin: Pool;
/** Every storage a test opened (each with its own pool, like a process of its own), closed at the end. */
const opened: { storage: PostgresStorage; pool: Pool }[] = [];

beforeAll(async () => {
  admin = testPool();
  const setup = await openPostgresStorage({ pool: admin, schema });
  await setup.close();
});

afterAll(async () => {
  for (const { storage, pool } of opened) {
    await storage.close().catch(() => undefined);
    if (!pool.ended) await pool.end();
  }
  if (admin !== undefined) {
    await dropSchema(admin, schema);
    await admin.end();
  }
});

/** A storage on a pool of its own: what one app server process would have. */
async function processStorage(
  options: Omit<PostgresStorageOptions, 'pool' | 'schema'> = {},
  poolConfig: PoolConfig = {},
) {
  const pool = testPool({ max: 2, ...poolConfig });
  const backgroundErrors: AgentError[] = [];
  const storage = await openPostgresStorage({
    pool,
    schema,
    onBackgroundError: (error) => backgroundErrors.push(error),
    ...options,
  });
  opened.push({ storage, pool });
  return { storage, pool, backgroundErrors };
}

const busy = expect.objectContaining({ code: 'SESSION_BUSY' });

function aborted(signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) =>
    signal.addEventListener('abort', () => resolve(signal.reason), { once: true }),
  );
}

describe('session leases', () => {
  test('a second process gets SESSION_BUSY; release frees the session at once', async () => {
    const a = await processStorage();
    const b = await processStorage();
    const lease = await a.storage.sessions.acquireLease('shared');
    expect(lease.owner).toBe(a.storage.sessions.leaseOwner);
    await expect(b.storage.sessions.acquireLease('shared')).rejects.toEqual(
      expect.objectContaining({
        code: 'SESSION_BUSY',
        message: expect.stringContaining(a.storage.sessions.leaseOwner),
      }),
    );
    await expect(a.storage.sessions.acquireLease('shared')).rejects.toEqual(busy);
    expect(await b.storage.sessions.getLease('shared')).toMatchObject({
      owner: a.storage.sessions.leaseOwner,
    });
    await lease.release();
    await lease.release();
    expect(await b.storage.sessions.getLease('shared')).toBeNull();
    const taken = await b.storage.sessions.acquireLease('shared');
    await expect(lease.renew()).rejects.toEqual(busy);
    await taken.release();
  });

  test('only one of many processes racing for a session wins', async () => {
    const racers = await Promise.all(Array.from({ length: 6 }, () => processStorage()));
    const outcomes = await Promise.allSettled(
      racers.map((racer) => racer.storage.sessions.acquireLease('race')),
    );
    const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') expect(outcome.reason).toEqual(busy);
    }
    await (won[0] as PromiseFulfilledResult<SessionLease>).value.release();
  });

  test('the lease of a process that died is taken over after its ttl', async () => {
    const a = await processStorage({ lease: { ttlMs: 1_000 } });
    const b = await processStorage();
    const lease = await a.storage.sessions.acquireLease('orphan');
    // The process "dies": its connections are gone, so nothing renews or releases the lease.
    await a.pool.end();
    await expect(b.storage.sessions.acquireLease('orphan')).rejects.toEqual(busy);
    const taken = await b.storage.sessions.acquireLease('orphan', { waitMs: 15_000 });
    expect(taken.acquiredAt.getTime()).toBeGreaterThanOrEqual(lease.expiresAt.getTime());
    // The dead side, if it were still running, would see its lease lost once the ttl passed.
    expect(await aborted(lease.signal)).toEqual(busy);
    expect(lease.lost).toBe(true);
    expect(a.backgroundErrors.some((error) => error.code === 'SESSION_BUSY')).toBe(true);
    await taken.release();
  });

  test('a held lease is renewed, so it outlives its ttl', async () => {
    const a = await processStorage({ lease: { ttlMs: 1_000, heartbeatMs: 100 } });
    const b = await processStorage();
    const lease = await a.storage.sessions.acquireLease('kept');
    const firstExpiry = lease.expiresAt.getTime();
    // Waiting well past the ttl for the lease must time out: the heartbeat keeps it.
    await expect(b.storage.sessions.acquireLease('kept', { waitMs: 2_500 })).rejects.toEqual(busy);
    expect(lease.expiresAt.getTime()).toBeGreaterThan(firstExpiry);
    expect(lease.lost).toBe(false);
    await lease.release();
  });

  test('a process whose lease was taken over cannot write the session any more', async () => {
    // A heartbeat far apart, so that none renews the lease while the test expires it by hand.
    const a = await processStorage({ lease: { ttlMs: 60_000, heartbeatMs: 50_000 } });
    const b = await processStorage();
    const lease = await a.storage.sessions.acquireLease('fenced');
    const event = (text: string) => ({
      timestamp: new Date(),
      payload: { type: 'user_message' as const, content: [{ type: 'text' as const, text }] },
    });
    await a.storage.sessions.saveEvent('fenced', event('from a, while leased'));
    // A stalls past its ttl (a long GC pause, a frozen VM): the lease expires without a renewal.
    await admin.query(
      `UPDATE "${schema}".youyou_session_leases SET expires_at = clock_timestamp() - interval '1 second'`,
    );
    const taken = await b.storage.sessions.acquireLease('fenced');
    await expect(a.storage.sessions.saveEvent('fenced', event('from a, too late'))).rejects.toEqual(busy);
    expect(lease.lost).toBe(true);
    expect(lease.signal.aborted).toBe(true);
    await expect(a.storage.sessions.saveEvent('fenced', event('again'))).rejects.toEqual(busy);
    await b.storage.sessions.saveEvent('fenced', event('from b'));
    const texts = (await b.storage.sessions.loadSession('fenced'))?.map((item) =>
      item.payload.type === 'user_message' ? item.payload.content[0] : undefined,
    );
    expect(texts).toStrictEqual([
      { type: 'text', text: 'from a, while leased' },
      { type: 'text', text: 'from b' },
    ]);
    // Releasing the lost lease ends the fence; taking it back needs b to let go.
    await lease.release();
    await expect(a.storage.sessions.acquireLease('fenced')).rejects.toEqual(busy);
    await taken.release();
    const again = await a.storage.sessions.acquireLease('fenced');
    await a.storage.sessions.saveEvent('fenced', event('from a, leased again'));
    await again.release();
  });

  test('a heartbeat that finds the lease taken over aborts the signal and tells onBackgroundError', async () => {
    const a = await processStorage({ lease: { ttlMs: 60_000, heartbeatMs: 100 } });
    const b = await processStorage();
    const lease = await a.storage.sessions.acquireLease('overtaken');
    // A stalls past its ttl: the lease expires by hand, and b takes it before a's next renewal.
    await admin.query(
      `UPDATE "${schema}".youyou_session_leases SET expires_at = clock_timestamp() - interval '1 second'
        WHERE session_id = 'overtaken'`,
    );
    const taken = await b.storage.sessions.acquireLease('overtaken');
    expect(await aborted(lease.signal)).toEqual(busy);
    await until(async () => a.backgroundErrors.length > 0, 'the lost lease to be reported');
    expect(a.backgroundErrors).toEqual([busy]);
    await lease.release();
    await taken.release();
  });

  test('a takeover and a save in progress are ordered: the save lands before the new holder reads, or is refused', async () => {
    const applicationName = `yy_lease_${randomBytes(4).toString('hex')}`;
    const named = { application_name: applicationName };
    const a = await processStorage({ lease: { ttlMs: 60_000, heartbeatMs: 50_000 } }, named);
    const b = await processStorage({}, named);
    const event = (text: string) => ({
      timestamp: new Date(),
      payload: { type: 'user_message' as const, content: [{ type: 'text' as const, text }] },
    });
    const lease = await a.storage.sessions.acquireLease('ordered');
    await a.storage.sessions.saveEvent('ordered', event('first'));
    const waiting = async (count: number) => {
      const found = await admin.query(
        `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1
            AND wait_event_type = 'Lock'`,
        [applicationName],
      );
      return found.rowCount === count;
    };
    // Hold the session's activity row, so that a's next save waits inside PostgreSQL...
    const locker = await admin.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(
        `SELECT 1 FROM "${schema}".youyou_session_activity WHERE session_id = 'ordered' FOR UPDATE`,
      );
      const save = a.storage.sessions.saveEvent('ordered', event('in flight')).then(
        () => 'saved',
        (error: unknown) => error,
      );
      await until(() => waiting(1), 'the save to wait on the row lock');
      // ...while a's lease expires and b takes the session over.
      await admin.query(
        `UPDATE "${schema}".youyou_session_leases SET expires_at = clock_timestamp() - interval '1 second'`,
      );
      const takeover = b.storage.sessions.acquireLease('ordered');
      await until(() => waiting(2), 'the takeover to wait on the row lock');
      await locker.query('ROLLBACK');
      const [outcome, taken] = await Promise.all([save, takeover]);
      const texts = (await b.storage.sessions.loadSession('ordered'))?.map((item) =>
        item.payload.type === 'user_message' ? item.payload.content[0] : undefined,
      );
      if (outcome === 'saved') {
        expect(texts).toStrictEqual([
          { type: 'text', text: 'first' },
          { type: 'text', text: 'in flight' },
        ]);
      } else {
        expect(outcome).toEqual(busy);
        expect(texts).toStrictEqual([{ type: 'text', text: 'first' }]);
      }
      // Either way a is fenced off from now on.
      await expect(a.storage.sessions.saveEvent('ordered', event('too late'))).rejects.toEqual(busy);
      await b.storage.sessions.saveEvent('ordered', event('from b'));
      await taken.release();
      await lease.release();
    } finally {
      locker.release();
    }
  });

  test("a holder's saves go on in a session another process wrote without a lease", async () => {
    const a = await processStorage();
    const b = await processStorage();
    const event = (text: string) => ({
      timestamp: new Date(),
      payload: { type: 'user_message' as const, content: [{ type: 'text' as const, text }] },
    });
    const lease = await a.storage.sessions.acquireLease('mixed');
    // b holds no lease, so its saves are not fenced (as before leases): it creates the session.
    await b.storage.sessions.saveEvent('mixed', event('b1'));
    await a.storage.sessions.saveEvent('mixed', event('a1'));
    await a.storage.sessions.saveEvent('mixed', event('a2'));
    await b.storage.sessions.saveEvent('mixed', event('b2'));
    await a.storage.sessions.saveEvent('mixed', event('a3'));
    const texts = (await a.storage.sessions.loadSession('mixed'))?.map((item) =>
      item.payload.type === 'user_message' ? item.payload.content[0] : undefined,
    );
    expect(texts?.map((block) => (block?.type === 'text' ? block.text : ''))).toStrictEqual([
      'b1',
      'a1',
      'a2',
      'b2',
      'a3',
    ]);
    expect(lease.lost).toBe(false);
    await lease.release();
  });

  test('a restarted process with the same owner takes its lease back at once', async () => {
    const before = await processStorage({ lease: { owner: 'app-server-1' } });
    await before.storage.sessions.acquireLease('restart');
    await before.pool.end();
    const after = await processStorage({ lease: { owner: 'app-server-1' } });
    const other = await processStorage({ lease: { owner: 'app-server-2' } });
    const lease = await after.storage.sessions.acquireLease('restart');
    await expect(other.storage.sessions.acquireLease('restart')).rejects.toEqual(busy);
    await lease.release();
  });

  test('close() releases the leases of the process', async () => {
    const a = await processStorage();
    const b = await processStorage();
    await a.storage.sessions.acquireSession('closing');
    await a.storage.close();
    const lease = await b.storage.sessions.acquireSession('closing');
    await lease.release();
  });

  test('one heartbeat renews every held lease in one statement, and a short-lived lease among long ones is kept', async () => {
    const a = await processStorage({ lease: { ttlMs: 60_000, heartbeatMs: 100 } });
    const b = await processStorage();
    const leases = await Promise.all(
      Array.from({ length: 30 }, (_, index) => a.storage.sessions.acquireLease(`batch-${index}`)),
    );
    // Its own ttl of 600 ms: renewed every 200 ms at most, though the storage's heartbeat is slower here.
    const short = await a.storage.sessions.acquireLease('batch-short', { ttlMs: 600 });
    // Counted around the real pool: the lease renewals the storage sends.
    const query = a.pool.query.bind(a.pool) as (...args: unknown[]) => unknown;
    let renewals = 0;
    a.pool.query = ((...args: unknown[]) => {
      const text = JSON.stringify(args[0]);
      if (text.includes('UPDATE') && text.includes('youyou_session_leases')) renewals += 1;
      return query(...args);
    }) as typeof a.pool.query;
    const expiries = leases.map((lease) => lease.expiresAt.getTime());
    try {
      // Past the short lease's ttl: b cannot take it while a renews it.
      await expect(b.storage.sessions.acquireLease('batch-short', { waitMs: 1_500 })).rejects.toEqual(busy);
    } finally {
      a.pool.query = query as typeof a.pool.query;
    }
    expect(short.lost).toBe(false);
    expect(leases.every((lease, index) => lease.expiresAt.getTime() > (expiries[index] ?? 0))).toBe(true);
    // 1.5 s at a heartbeat every 100 ms is about 15 statements for 31 leases (one each: 465).
    expect(renewals).toBeGreaterThan(3);
    expect(renewals).toBeLessThan(40);
    expect(a.backgroundErrors).toEqual([]);
    await Promise.all([...leases, short].map((lease) => lease.release()));
  });

  test('bad lease arguments are INVALID_INPUT / INVALID_CONFIG', async () => {
    const a = await processStorage();
    await expect(a.storage.sessions.acquireLease('')).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(a.storage.sessions.acquireLease('x', { ttlMs: 1 })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
    });
    await expect(a.storage.sessions.acquireLease('x', { waitMs: -1 })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
    });
  });
});
