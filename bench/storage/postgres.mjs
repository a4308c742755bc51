// Benchmark of @youyou/postgres (not a test): saveEvent throughput for one session, and loadSession +
// resumeSession of a 10,000-event session, each beside a baseline measured in the same run against the
// same server:
// - writes: saveEvent, one event per call and awaited, as the runtime writes them (unleased, and in a
//   leased session as an Agent with the lease hook writes), against a bare prepared INSERT per event
//   (JSON.stringify included) into a bare table, in alternating chunks so that a busy machine slows both
//   alike; `--runs` rounds, each on fresh sessions; the ratio is the median of the rounds'. Also saveEvents
//   with two events per call (leased), against leased saveEvent one by one in the same chunks. Then, apart,
//   the search indexing that saveEvent leaves for a background pass (flushSearchIndex);
// - loads: loadSession and Agent.resumeSession, each paired with a bare SELECT + JSON.parse taken just
//   before it; the ratio is the median of the pairs'.
//
//   npm run build -w @youyou/agent -w @youyou/postgres
//   eval "$(scripts/start-postgres.sh)"   # or any DATABASE_URL / PG* variables
//   node --expose-gc bench/storage/postgres.mjs [--events 2000] [--session 10000] [--runs 5]
//
// Prints a markdown table. Everything lives in a schema of its own, dropped at the end.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { AgentBuilder } from '@youyou/agent';
import { ScriptedModelProvider } from '@youyou/agent/testing';
import { openPostgresStorage } from '@youyou/postgres';
import pg from 'pg';

const { values: options } = parseArgs({
  options: {
    events: { type: 'string', default: '2000' },
    session: { type: 'string', default: '10000' },
    runs: { type: 'string', default: '5' },
  },
});
const SAVE_EVENTS = Number(options.events);
const SESSION_EVENTS = Number(options.session);
const RUNS = Number(options.runs);

if (!process.env.DATABASE_URL && !process.env.PGHOST && !process.env.PGDATABASE) {
  console.error('Set DATABASE_URL (or PG* variables): eval "$(scripts/start-postgres.sh)"');
  process.exit(1);
}

const schema = `yy_bench_${randomBytes(4).toString('hex')}`;
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 });
pool.on('error', () => undefined);
const bare = `"${schema}".bare_events`;

/** The i-th event of a realistic conversation: user, assistant with a tool call, its result, the answer. */
function conversationEvent(index) {
  const timestamp = new Date(Date.UTC(2024, 0, 1) + index * 1000);
  const turn = Math.floor(index / 4);
  switch (index % 4) {
    case 0:
      return {
        timestamp,
        payload: {
          type: 'user_message',
          content: [
            {
              type: 'text',
              text: `Question ${turn}: how do I read the file config/${turn}.json and check its schema?`,
            },
          ],
        },
      };
    case 1:
      return {
        timestamp,
        payload: {
          type: 'tool_call',
          callId: `call_${turn}`,
          toolName: 'read_file',
          arguments: { path: `config/${turn}.json` },
        },
      };
    case 2:
      return {
        timestamp,
        payload: {
          type: 'tool_result',
          callId: `call_${turn}`,
          content: `{"name": "service-${turn}", "port": ${8000 + (turn % 1000)}, "replicas": 3, "tags": ["a", "b", "c"]}`,
          isError: false,
        },
      };
    default:
      return {
        timestamp,
        payload: {
          type: 'assistant_message',
          status: 'complete',
          content: [
            {
              type: 'text',
              text: `The file config/${turn}.json defines service-${turn} on its own port with three replicas; the schema check passes.`,
            },
          ],
        },
      };
  }
}

const WRITE_CHUNK = 100;

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function time(body) {
  const start = performance.now();
  await body();
  return performance.now() - start;
}

/** A full GC before a timed section (with --expose-gc), so that one section does not pay for another's garbage. */
function collectGarbage() {
  globalThis.gc?.();
}

async function bareInsert(sessionId, index, event) {
  await pool.query({
    name: 'bare_insert',
    text: `INSERT INTO ${bare} VALUES ($1, $2, $3, $4)`,
    values: [sessionId, index, event.timestamp.getTime(), JSON.stringify(event.payload)],
  });
}

async function bareLoad(sessionId) {
  const result = await pool.query(
    `SELECT timestamp_ms, payload FROM ${bare} WHERE session_id = $1 ORDER BY seq`,
    [sessionId],
  );
  return result.rows.map((row) => ({
    timestamp: new Date(Number(row.timestamp_ms)),
    payload: JSON.parse(row.payload),
  }));
}

/**
 * One round of writes: `count` events through saveEvent (unleased), through saveEvent in a leased
 * session, and as bare INSERTs, in chunks whose order rotates, so that neither side always runs after the
 * other. Then the deferred search indexing, timed on its own.
 */
async function writeRound(round, count) {
  const unleased = `save-${round}`;
  const leasedId = `save-leased-${round}`;
  const lease = await storage.sessions.acquireLease(leasedId);
  const pairsId = `save-pairs-${round}`;
  const pairsLease = await storage.sessions.acquireLease(pairsId);
  const oneByOne = (write) => async (offset, end) => {
    for (let index = offset; index < end; index += 1) await write(index, conversationEvent(index));
  };
  const sides = [
    { key: 'unleased', write: oneByOne((_index, event) => storage.sessions.saveEvent(unleased, event)) },
    { key: 'leased', write: oneByOne((_index, event) => storage.sessions.saveEvent(leasedId, event)) },
    {
      // Two events per call, as the runtime hands a model call's usage record with the answer after it.
      key: 'pairs',
      write: async (offset, end) => {
        for (let index = offset; index < end; index += 2) {
          const events = [conversationEvent(index)];
          if (index + 1 < end) events.push(conversationEvent(index + 1));
          await storage.sessions.saveEvents(pairsId, events);
        }
      },
    },
    { key: 'bare', write: oneByOne((index, event) => bareInsert(`bare-${round}`, index, event)) },
  ];
  const ms = { unleased: 0, leased: 0, pairs: 0, bare: 0 };
  for (let offset = 0, chunk = 0; offset < count; offset += WRITE_CHUNK, chunk += 1) {
    const end = Math.min(offset + WRITE_CHUNK, count);
    for (let turn = 0; turn < sides.length; turn += 1) {
      const side = sides[(chunk + turn) % sides.length];
      const start = performance.now();
      await side.write(offset, end);
      ms[side.key] += performance.now() - start;
    }
  }
  await pairsLease.release();
  await lease.release();
  const start = performance.now();
  const indexed = await storage.sessions.flushSearchIndex();
  return { ...ms, indexMs: performance.now() - start, indexed };
}

const storage = await openPostgresStorage({ pool, schema, onBackgroundError: () => undefined });
try {
  await pool.query(
    `CREATE TABLE ${bare} (session_id text NOT NULL, seq integer NOT NULL, timestamp_ms bigint NOT NULL, payload text NOT NULL, PRIMARY KEY (session_id, seq))`,
  );
  const version = (await pool.query('SHOW server_version')).rows[0].server_version;

  // Warm-up (connections, prepared statements, JIT of the JavaScript), then the measured rounds.
  await writeRound('warm-up', WRITE_CHUNK * 3);
  const rounds = [];
  for (let round = 0; round < RUNS; round += 1) rounds.push(await writeRound(round, SAVE_EVENTS));
  const ratios = (key) => rounds.map((round) => round[key] / round.bare);
  // The flush indexes the messages of the three storage sides that background passes had not reached yet.
  const withIndexing = rounds.map(
    (round) => (round.unleased + round.leased + round.pairs + round.indexMs) / (3 * round.bare),
  );

  // A 10,000-event session in both shapes.
  const fillMs = await time(async () => {
    for (let index = 0; index < SESSION_EVENTS; index += 1)
      await storage.sessions.saveEvent('big', conversationEvent(index));
  });
  await storage.sessions.flushSearchIndex();
  const rows = Array.from({ length: SESSION_EVENTS }, (_, index) => conversationEvent(index));
  for (let start = 0; start < rows.length; start += 1000) {
    const chunk = rows.slice(start, start + 1000);
    await pool.query(
      `INSERT INTO ${bare} SELECT 'big', * FROM unnest($1::integer[], $2::bigint[], $3::text[])`,
      [
        chunk.map((_, offset) => start + offset),
        chunk.map((event) => event.timestamp.getTime()),
        chunk.map((event) => JSON.stringify(event.payload)),
      ],
    );
  }
  if ((await storage.sessions.loadSession('big')).length !== SESSION_EVENTS)
    throw new Error('the big session is incomplete');

  const agent = await new AgentBuilder({ defaultModel: 'scripted-model', onBackgroundError: () => undefined })
    .registerModelProvider(new ScriptedModelProvider())
    .registerSessionStorage(storage.sessions)
    .build();
  const loads = { load: [], resume: [], baseline: [], loadRatio: [], resumeRatio: [] };
  let resumedMessages = 0;
  const timeBaseline = async () => {
    collectGarbage();
    return time(() => bareLoad('big'));
  };
  for (let run = 0; run <= RUNS; run += 1) {
    // Each adapter figure is paired with a baseline taken just before it, so a busy machine slows both.
    const loadBaselineMs = await timeBaseline();
    collectGarbage();
    const loadMs = await time(() => storage.sessions.loadSession('big'));
    const resumeBaselineMs = await timeBaseline();
    collectGarbage();
    // As in the SQLite benchmark: resumeSession itself (lease, load, replay); the check of its messages
    // (a deep copy of 10,000 of them) and the release at close are outside the timed section.
    let session;
    const resumeMs = await time(async () => {
      session = await agent.resumeSession('big');
    });
    resumedMessages = session.messages().length;
    await session.close();
    if (run === 0) continue; // warm-up
    loads.load.push(loadMs);
    loads.resume.push(resumeMs);
    loads.baseline.push(loadBaselineMs, resumeBaselineMs);
    loads.loadRatio.push(loadMs / loadBaselineMs);
    loads.resumeRatio.push(resumeMs / resumeBaselineMs);
  }
  await agent.shutdown();

  const total = (key) => rounds.reduce((sum, round) => sum + round[key], 0);
  const events = SAVE_EVENTS * RUNS;
  const rate = (count, ms) => `${Math.round((count / ms) * 1000).toLocaleString('en-US')} events/s`;
  const perEvent = (ms) => `${(ms / events).toFixed(3)} ms/event`;
  const ms = (value) => `${value.toFixed(1)} ms`;
  const spread = (values) =>
    `${median(values).toFixed(2)}× (${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)})`;
  console.log(
    `PostgreSQL ${version}, Node ${process.version}; writes: ${RUNS} rounds of ${SAVE_EVENTS} events, median ratio (range); loads: median of ${RUNS} pairs; ${SESSION_EVENTS}-event session (${resumedMessages} messages after resume).\n`,
  );
  console.log('| operation | @youyou/postgres | baseline | baseline is | cost |');
  console.log('|---|---|---|---|---|');
  const bareCell = `${rate(events, total('bare'))} (${perEvent(total('bare'))})`;
  console.log(
    `| saveEvent, 1 event per call, 1 session | ${rate(events, total('unleased'))} (${perEvent(total('unleased'))}) | ${bareCell} | bare INSERT per event | ${spread(ratios('unleased'))} |`,
  );
  console.log(
    `| saveEvent, the same in a leased session (as an Agent writes) | ${rate(events, total('leased'))} (${perEvent(total('leased'))}) | ${bareCell} | bare INSERT per event | ${spread(ratios('leased'))} |`,
  );
  const pairRatios = rounds.map((round) => round.pairs / round.leased);
  console.log(
    `| saveEvents, 2 events per call, in a leased session | ${rate(events, total('pairs'))} (${perEvent(total('pairs'))}) | ${rate(events, total('leased'))} (${perEvent(total('leased'))}) | saveEvent per event, leased | ${spread(pairRatios)} |`,
  );
  console.log(
    `| the three rows above + the search indexing they left for later (${total('indexed').toLocaleString('en-US')} of ${(3 * events).toLocaleString('en-US')} messages, ${ms(total('indexMs'))}) | ${rate(3 * events, total('unleased') + total('leased') + total('pairs') + total('indexMs'))} | ${bareCell} | bare INSERT per event | ${spread(withIndexing)} |`,
  );
  console.log(
    `| loadSession, ${SESSION_EVENTS.toLocaleString('en-US')} events | ${ms(median(loads.load))} | ${ms(median(loads.baseline))} | bare SELECT + JSON.parse | ${median(loads.loadRatio).toFixed(2)}× |`,
  );
  console.log(
    `| resumeSession (Agent), ${SESSION_EVENTS.toLocaleString('en-US')} events | ${ms(median(loads.resume))} | ${ms(median(loads.baseline))} | bare SELECT + JSON.parse | ${median(loads.resumeRatio).toFixed(2)}× |`,
  );
  console.log(
    `\n(filling the ${SESSION_EVENTS.toLocaleString('en-US')}-event session through saveEvent took ${ms(fillMs)}: ${rate(SESSION_EVENTS, fillMs)}.)`,
  );
} finally {
  await storage.close();
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
}
