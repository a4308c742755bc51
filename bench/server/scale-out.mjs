// Load and faults on two server processes sharing one PostgreSQL (issue 17), over several runs. Each run:
// a fresh schema, two server processes A and B (server-process.mjs), `--sessions` sessions half on each,
// and one client per session that tails its log (GET /sessions/:id/log) and sends one message whose turn is
// five tool steps from a scripted model (50 ms per answer, 100 ms per tool call) and a final answer. Once
// A's sessions have run `--kill-at` of their tool steps, A is SIGKILLed: its clients reconnect their tail to
// B with their last id and send the next message there once A's lease (ttl 3 s) expires. At the end each
// client's received ids are checked against the log in PostgreSQL (every committed event exactly once, in
// order) and every session must have reached its final answer. Then a few single turns on the quiet B.
// Exit code 1 when any session lost, reordered or doubled an event, or did not end.
//
// Run: npm run build && eval "$(scripts/start-postgres.sh)" && node bench/server/scale-out.mjs
//      [--runs 3] [--sessions 200] [--kill-at 0.5] [--warm-turns 3] [--pool-max 10] [--cold]
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openPostgresStorage } from '@youyou/postgres';
import { HEADERS, isFinalAnswer, runClient, timedTurn } from './clients.mjs';
import { askStats, median, percentile, samplePostgresCpu, statsDelta } from './measure.mjs';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    sessions: { type: 'string', default: '200' },
    'kill-at': { type: 'string', default: '0.5' },
    'warm-turns': { type: 'string', default: '3' },
    'pool-max': { type: 'string', default: '10' },
    cold: { type: 'boolean', default: false },
  },
});
const RUNS = Number(args.runs);
const SESSIONS = Number(args.sessions);
const KILL_AT = Number(args['kill-at']);
const WARM_TURNS = Number(args['warm-turns']);
const POOL_MAX = Number(args['pool-max']);
const COLD = args.cold;
const STEPS = 5;
const MODEL_DELAY_MS = 50;
const TOOL_DELAY_MS = 100;
/** What the scripted model and the tools wait in one turn: six answers, five tool calls. */
const SCRIPTED_WAIT_MS = (STEPS + 1) * MODEL_DELAY_MS + STEPS * TOOL_DELAY_MS;
const TTL_MS = 3_000;
const connectionString = process.env.DATABASE_URL;
if (connectionString === undefined) throw new Error('set DATABASE_URL (eval "$(scripts/start-postgres.sh)")');
const child = fileURLToPath(new URL('./server-process.mjs', import.meta.url));

function start(schema, name) {
  const process_ = fork(child, [], {
    env: {
      ...process.env,
      YOUYOU_BENCH_SERVER: JSON.stringify({
        connectionString,
        schema,
        ttlMs: TTL_MS,
        modelDelayMs: MODEL_DELAY_MS,
        toolDelayMs: TOOL_DELAY_MS,
        sessions: SESSIONS,
        poolMax: POOL_MAX,
        applicationName: `yb-${schema}-${name}`,
      }),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // A CPU profile of B (A is SIGKILLed, so it writes none): YOUYOU_BENCH_CPU_PROF=<directory>.
    execArgv:
      process.env.YOUYOU_BENCH_CPU_PROF === undefined || name !== 'B'
        ? []
        : ['--cpu-prof', `--cpu-prof-dir=${process.env.YOUYOU_BENCH_CPU_PROF}`],
  });
  return new Promise((resolve, reject) => {
    process_.once('exit', (code) => reject(new Error(`server ${name} exited with ${code} before listening`)));
    process_.once('message', (message) => resolve({ name, url: message.url, child: process_ }));
  });
}

async function createSession(server) {
  const created = await fetch(`${server.url}/sessions`, { method: 'POST', headers: HEADERS, body: '{}' });
  if (created.status !== 201) throw new Error(`creating a session answered ${created.status}`);
  return (await created.json()).sessionId;
}

const round = (value, digits = 0) => (Number.isFinite(value) ? Number(value.toFixed(digits)) : null);
const load = () => loadavg().map((value) => round(value, 2));

async function countEvents(inspector, schema) {
  const result = await inspector.pool.query(
    `SELECT count(*)::integer AS n FROM "${schema}".youyou_session_events`,
  );
  return result.rows[0].n;
}

async function run(index) {
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const inspector = await openPostgresStorage({
    connectionString,
    schema,
    onBackgroundError: () => undefined,
  });
  const [a, b] = await Promise.all([start(schema, 'A'), start(schema, 'B')]);
  try {
    const owners = [];
    for (let next = 0; next < SESSIONS; next += 20) {
      const batch = Array.from({ length: Math.min(20, SESSIONS - next) }, (_, offset) => next + offset);
      const ids = await Promise.all(batch.map((at) => createSession(at % 2 === 0 ? a : b)));
      for (const [offset, sessionId] of ids.entries()) {
        const server = batch[offset] % 2 === 0 ? a : b;
        owners.push({ server, fallback: server === a ? b : a, sessionId, finished: false });
      }
    }
    // One turn on each fresh process first (unless --cold): the first turn of a process pays for loading and
    // compiling code, which a long-running server has done long before its 200th concurrent session.
    const coldTurns = [];
    if (!COLD) {
      for (const server of [a, b]) coldTurns.push(await timedTurn(server.url, await createSession(server)));
    }
    const eventsBefore = await countEvents(inspector, schema);
    const loadAtStart = load();
    const statsStart = { A: await askStats(a.child), B: await askStats(b.child) };
    const postgresCpu = await samplePostgresCpu({ pool: inspector.pool, prefix: `yb-${schema}-` });
    const sessionsOnA = owners.filter((owner) => owner.server === a).length;
    let toolResultsOnA = 0;
    let moved = 0;
    let kill;
    const killed = new Promise((resolve) => {
      kill = resolve;
    });
    const clientLoopDelays = [];
    let clientTickAt = performance.now();
    const clientLoop = setInterval(() => {
      const now = performance.now();
      clientLoopDelays.push(now - clientTickAt - 50);
      clientTickAt = now;
    }, 50);
    const clientCpuAtStart = process.cpuUsage();
    let ready = 0;
    let allReady;
    const go = new Promise((resolve) => {
      allReady = resolve;
    });
    const clients = owners.map((owner) =>
      runClient({
        server: owner.server,
        fallback: owner.fallback,
        sessionId: owner.sessionId,
        go,
        onReady: () => {
          ready += 1;
          if (ready === owners.length) allReady();
        },
        onMoved: () => {
          moved += 1;
        },
        onLogged: (payload) => {
          if (isFinalAnswer(payload)) owner.finished = true;
          if (owner.server !== a || payload.type !== 'tool_result') return;
          toolResultsOnA += 1;
          if (toolResultsOnA === Math.ceil(KILL_AT * STEPS * sessionsOnA)) kill();
        },
      }).catch((error) => ({ received: [], firstEventMs: undefined, failed: String(error) })),
    );
    // A tail that cannot start must not hang the run: the messages go after 30 s at the latest.
    const giveUp = setTimeout(() => allReady(), 30_000);
    await go;
    clearTimeout(giveUp);
    const startedAt = performance.now();
    const killing = killed.then(async () => {
      const stats = await askStats(a.child, 500);
      a.child.kill('SIGKILL');
      const inFlight = owners.filter((owner) => owner.server === a && !owner.finished);
      for (const owner of inFlight) owner.inFlightAtKill = true;
      return { atMs: performance.now() - startedAt, stats, inFlight: inFlight.length };
    });
    const results = await Promise.all(clients);
    const wallMs = performance.now() - startedAt;
    const clientCpu = process.cpuUsage(clientCpuAtStart);
    clearInterval(clientLoop);
    // When A's sessions end before the threshold (a tiny run), A is killed after them.
    kill();
    const killedA = await killing;
    const statsB = await askStats(b.child);
    const postgresCpuMs = await postgresCpu.stop();
    const loadAtEnd = load();

    let lostOrReordered = 0;
    let doubled = 0;
    let unfinished = 0;
    let endedOnB = 0;
    let logged = 0;
    for (const [at, owner] of owners.entries()) {
      const log = await inspector.sessions.readEventsAfter(owner.sessionId, 0, 10_000);
      const positions = log.map((event) => event.sequence);
      const got = results[at].received;
      logged += log.length;
      if (new Set(got).size !== got.length) doubled += 1;
      if (JSON.stringify(got) !== JSON.stringify(positions)) lostOrReordered += 1;
      if (!log.some((event) => isFinalAnswer(event.payload))) unfinished += 1;
      else if (owner.inFlightAtKill) endedOnB += 1;
    }
    const eventsInRun = (await countEvents(inspector, schema)) - eventsBefore;
    const deltaA = statsDelta(killedA.stats, statsStart.A);
    const deltaB = statsDelta(statsB, statsStart.B);
    const serverCpuMs = (deltaA?.cpuMs ?? Number.NaN) + (deltaB?.cpuMs ?? Number.NaN);
    const queries = (deltaA?.queries ?? Number.NaN) + (deltaB?.queries ?? Number.NaN);
    const poolWaits = (deltaA?.poolWaits ?? 0) + (deltaB?.poolWaits ?? 0);
    const poolWaitMs = (deltaA?.poolWaitMs ?? 0) + (deltaB?.poolWaitMs ?? 0);
    const queryMs = (deltaA?.queryMs ?? 0) + (deltaB?.queryMs ?? 0);
    const byKind = {};
    for (const delta of [deltaA, deltaB]) {
      for (const [kind, count] of Object.entries(delta?.byKind ?? {})) {
        if (count > 0) byKind[kind] = (byKind[kind] ?? 0) + count;
      }
    }

    // A few turns alone on the warm, now quiet process B: latency without contention.
    const warm = [];
    for (let turn = 0; turn < WARM_TURNS; turn += 1) {
      const sessionId = await createSession(b);
      const before = (await inspector.sessions.readEventsAfter(sessionId, 0)).length;
      const timed = await timedTurn(b.url, sessionId);
      const committed = (await inspector.sessions.readEventsAfter(sessionId, 0)).length - before;
      warm.push({ ...timed, committed });
    }
    const firstEvents = results.map((result) => result.firstEventMs);
    return {
      run: index + 1,
      cores: availableParallelism(),
      loadAtStart,
      loadAtEnd,
      sessions: SESSIONS,
      wallMs: round(wallMs),
      killedAtMs: round(killedA.atMs),
      inFlightAtKill: killedA.inFlight,
      endedOnB,
      clientsMoved: moved,
      clientErrors: results.filter((result) => result.failed !== undefined).map((result) => result.failed),
      committedEvents: eventsInRun,
      eventsChecked: logged,
      sessionsWithLostOrReordered: lostOrReordered,
      sessionsWithDoubles: doubled,
      sessionsUnfinished: unfinished,
      turnStartedP50Ms: round(
        percentile(
          results.map((result) => result.headersMs),
          50,
        ),
      ),
      serverTurnRequestP50Ms: round(
        percentile([...(killedA.stats?.turnRequestMs ?? []), ...(statsB?.turnRequestMs ?? [])], 50),
      ),
      loopDelayP99Ms: round(
        percentile([...(killedA.stats?.loopDelayMs ?? []), ...(statsB?.loopDelayMs ?? [])], 99),
      ),
      clientLoopDelayMaxMs: round(Math.max(...clientLoopDelays)),
      loopDelayMaxMs: round(Math.max(...(killedA.stats?.loopDelayMs ?? []), ...(statsB?.loopDelayMs ?? []))),
      firstEventP50Ms: round(percentile(firstEvents, 50)),
      firstEventP99Ms: round(percentile(firstEvents, 99)),
      serverCpuMsPerEvent: round(serverCpuMs / eventsInRun, 2),
      postgresCpuMsPerEvent: round((postgresCpuMs ?? Number.NaN) / eventsInRun, 2),
      // The load generator (this process: 2 × sessions streams) shares the machine's cores with the servers.
      clientCpuMsPerEvent: round((clientCpu.user + clientCpu.system) / 1000 / eventsInRun, 2),
      queriesPerEvent: round(queries / eventsInRun, 2),
      poolWaitAvgMs: round(poolWaitMs / Math.max(1, poolWaits), 2),
      // From the pool's query call to its answer, less the wait for a connection: PostgreSQL and the wire.
      queryAvgMs: round((queryMs - poolWaitMs) / queries, 2),
      poolWaitMaxMs: round(Math.max(deltaA?.poolWaitMaxMs ?? 0, deltaB?.poolWaitMaxMs ?? 0)),
      queriesByKind: byKind,
      coldFirstEventMs: coldTurns.map((turn) => round(turn.firstEventMs)),
      warmFirstEventMs: warm.map((turn) => round(turn.firstEventMs)),
      warmTurnMs: warm.map((turn) => round(turn.wallMs)),
      warmOverheadMsPerEvent: round(
        median(warm.map((turn) => (turn.wallMs - SCRIPTED_WAIT_MS) / turn.committed)),
        2,
      ),
    };
  } finally {
    a.child.kill('SIGKILL');
    b.child.kill('SIGTERM');
    await new Promise((resolve) => b.child.once('exit', resolve));
    await inspector.pool.query(`DROP SCHEMA "${schema}" CASCADE`);
    await inspector.close();
  }
}

const runs = [];
for (let index = 0; index < RUNS; index += 1) {
  const result = await run(index);
  runs.push(result);
  console.log(JSON.stringify(result));
}
const MEDIAN_KEYS = [
  'wallMs',
  'killedAtMs',
  'turnStartedP50Ms',
  'serverTurnRequestP50Ms',
  'firstEventP50Ms',
  'firstEventP99Ms',
  'serverCpuMsPerEvent',
  'postgresCpuMsPerEvent',
  'clientCpuMsPerEvent',
  'queriesPerEvent',
  'poolWaitAvgMs',
  'queryAvgMs',
  'warmOverheadMsPerEvent',
];
const summary = { runs: RUNS, sessions: SESSIONS, cores: availableParallelism(), load: load() };
for (const key of MEDIAN_KEYS) summary[`median ${key}`] = round(median(runs.map((result) => result[key])), 2);
summary['median warmFirstEventMs'] = round(median(runs.flatMap((result) => result.warmFirstEventMs)));
summary.eventsChecked = runs.reduce((sum, result) => sum + result.eventsChecked, 0);
const failures = runs.reduce(
  (sum, result) =>
    sum +
    result.sessionsWithLostOrReordered +
    result.sessionsWithDoubles +
    result.sessionsUnfinished +
    result.clientErrors.length,
  0,
);
summary.sessionsFailed = failures;
console.log(JSON.stringify(summary, null, 2));
const COLUMNS = [
  ['run', (result) => result.run],
  ['load 1 min (start → end)', (result) => `${result.loadAtStart[0]} → ${result.loadAtEnd[0]}`],
  ['events checked', (result) => result.eventsChecked],
  [
    'sessions lost or reordered / doubled / unfinished',
    (result) =>
      [result.sessionsWithLostOrReordered, result.sessionsWithDoubles, result.sessionsUnfinished].join(' / '),
  ],
  [
    'A killed at (in flight → ended on B)',
    (result) => `${(result.killedAtMs / 1000).toFixed(1)} s (${result.inFlightAtKill} → ${result.endedOnB})`,
  ],
  ['wall', (result) => `${(result.wallMs / 1000).toFixed(1)} s`],
  [
    'turn started p50 (server part)',
    (result) => `${result.turnStartedP50Ms} (${result.serverTurnRequestP50Ms}) ms`,
  ],
  ['first event p50 / p99', (result) => `${result.firstEventP50Ms} / ${result.firstEventP99Ms} ms`],
  ['server CPU / event', (result) => `${result.serverCpuMsPerEvent} ms`],
  ['PostgreSQL CPU / event', (result) => `${result.postgresCpuMsPerEvent} ms`],
  ['queries / event', (result) => result.queriesPerEvent],
  ['warm turn overhead / event', (result) => `${result.warmOverheadMsPerEvent} ms`],
];
console.log(`\n${availableParallelism()} cores, ${SESSIONS} sessions\n`);
console.log(`| ${COLUMNS.map(([name]) => name).join(' | ')} |`);
console.log(`|${COLUMNS.map(() => '---').join('|')}|`);
for (const result of runs) console.log(`| ${COLUMNS.map(([, cell]) => cell(result)).join(' | ')} |`);
process.exit(failures === 0 ? 0 : 1);
