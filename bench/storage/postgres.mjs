// Benchmark of @youyou/postgres (not a test): saveEvent throughput for one session, and loadSession +
// resumeSession of a 10,000-event session, each beside a baseline measured in the same run against the
// same server (a bare INSERT per event; a bare SELECT + JSON.parse).
//
//   npm run build -w @youyou/agent -w @youyou/postgres
//   eval "$(scripts/start-postgres.sh)"   # or any DATABASE_URL / PG* variables
//   node bench/storage/postgres.mjs [--events 2000] [--session 10000] [--runs 5]
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

/** Median of the durations of `runs` calls, in ms. */
async function median(runs, body) {
  const durations = [];
  for (let run = 0; run < runs; run += 1) {
    const start = performance.now();
    await body();
    durations.push(performance.now() - start);
  }
  durations.sort((a, b) => a - b);
  return durations[Math.floor(durations.length / 2)];
}

async function time(body) {
  const start = performance.now();
  await body();
  return performance.now() - start;
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

const storage = await openPostgresStorage({ pool, schema, onBackgroundError: () => undefined });
try {
  await pool.query(
    `CREATE TABLE ${bare} (session_id text NOT NULL, seq integer NOT NULL, timestamp_ms bigint NOT NULL, payload text NOT NULL, PRIMARY KEY (session_id, seq))`,
  );
  const version = (await pool.query('SHOW server_version')).rows[0].server_version;

  // Warm both paths up (connections, prepared statements, JIT of the JavaScript).
  for (let index = 0; index < 200; index += 1) {
    await storage.sessions.saveEvent('warm-up', conversationEvent(index));
    await pool.query(`INSERT INTO ${bare} VALUES ($1, $2, $3, $4)`, [
      'warm-up',
      index,
      index,
      JSON.stringify(conversationEvent(index).payload),
    ]);
  }

  // 1. saveEvent, one event per call, one session.
  const saveMs = await time(async () => {
    for (let index = 0; index < SAVE_EVENTS; index += 1)
      await storage.sessions.saveEvent('save-throughput', conversationEvent(index));
  });
  const bareSaveMs = await time(async () => {
    for (let index = 0; index < SAVE_EVENTS; index += 1) {
      const event = conversationEvent(index);
      await pool.query(`INSERT INTO ${bare} VALUES ($1, $2, $3, $4)`, [
        'save-throughput',
        index,
        event.timestamp.getTime(),
        JSON.stringify(event.payload),
      ]);
    }
  });

  // 2. A 10,000-event session in both shapes.
  const fillMs = await time(async () => {
    for (let index = 0; index < SESSION_EVENTS; index += 1)
      await storage.sessions.saveEvent('big', conversationEvent(index));
  });
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

  const loadMs = await median(RUNS, () => storage.sessions.loadSession('big'));
  const bareLoadMs = await median(RUNS, () => bareLoad('big'));

  const agent = await new AgentBuilder({ defaultModel: 'scripted-model', onBackgroundError: () => undefined })
    .registerModelProvider(new ScriptedModelProvider())
    .registerSessionStorage(storage.sessions)
    .build();
  let resumedMessages = 0;
  const resumeMs = await median(RUNS, async () => {
    const session = await agent.resumeSession('big');
    resumedMessages = session.messages().length;
    await session.close();
  });
  await agent.shutdown();

  const rate = (count, ms) => `${Math.round((count / ms) * 1000).toLocaleString('en-US')} events/s`;
  const ms = (value) => `${value.toFixed(1)} ms`;
  const ratio = (value, baseline) => `${(value / baseline).toFixed(2)}×`;
  console.log(
    `PostgreSQL ${version}, Node ${process.version}; median of ${RUNS} runs for loads; ${SAVE_EVENTS} saves; ${SESSION_EVENTS}-event session (${resumedMessages} messages after resume).\n`,
  );
  console.log('| operation | @youyou/postgres | baseline | baseline is | cost |');
  console.log('|---|---|---|---|---|');
  console.log(
    `| saveEvent, 1 event per call, 1 session | ${rate(SAVE_EVENTS, saveMs)} (${(saveMs / SAVE_EVENTS).toFixed(3)} ms/event) | ${rate(SAVE_EVENTS, bareSaveMs)} (${(bareSaveMs / SAVE_EVENTS).toFixed(3)} ms/event) | bare INSERT per event | ${ratio(saveMs, bareSaveMs)} |`,
  );
  console.log(
    `| loadSession, ${SESSION_EVENTS.toLocaleString('en-US')} events | ${ms(loadMs)} | ${ms(bareLoadMs)} | bare SELECT + JSON.parse | ${ratio(loadMs, bareLoadMs)} |`,
  );
  console.log(
    `| resumeSession (Agent), ${SESSION_EVENTS.toLocaleString('en-US')} events | ${ms(resumeMs)} | ${ms(bareLoadMs)} | bare SELECT + JSON.parse | ${ratio(resumeMs, bareLoadMs)} |`,
  );
  console.log(
    `\n(filling the ${SESSION_EVENTS.toLocaleString('en-US')}-event session through saveEvent took ${ms(fillMs)}: ${rate(SESSION_EVENTS, fillMs)}.)`,
  );
} finally {
  await storage.close();
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
}
