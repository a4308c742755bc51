/**
 * What W4's turn after 2,000 messages is made of: `node bench/cold-turn.mjs [runs]` times the same one-turn answer
 * of @youyou/agent after different setups, in one process, and prints the median of each (runs with a gc in their
 * setup or turn are left out of the median and counted). A diagnostic, not a table: it shows how much of W4-long
 * is the turn's own work and how much is the turn running with cold CPU caches after the setup. The setups:
 * - small: a 1-event session resumed, nothing else (the turn's own work);
 * - write sweep N MB / read sweep N MB: small, then N MB of a typed array written / read between resume and turn
 *   (no allocation, no gc, no code of ours: the CPU caches alone);
 * - save only: 2,001 events saved to another session, then a 1-event session resumed;
 * - resume only: a 2,001-event session saved before the measurement, resumed;
 * - long: W4-long as the bench runs it (2,001 events saved, that session resumed);
 * - long, warm: long, with a turn on a fresh small session between the resume and the timed turn;
 * - long, 3rd turn: the third turn on the resumed long session.
 * BENCH_YOUYOU_DIST points at another build's dist/index.js; BENCH_COLD_ONLY='long|small' runs only those setups.
 */
import { spawnSync } from 'node:child_process';
import { PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { neutralHistory, SHORT_TEXT, USAGE, USER_TEXT } from './lib/workloads.mjs';

const { AgentBuilder, InMemorySessionStorage } = await import(
  process.env.BENCH_YOUYOU_DIST ?? '../packages/agent/dist/index.js'
);

const RUNS = Number(process.argv[2] ?? 300);
const WARMUP_MS = 1_000;
const MODEL = {
  id: 'fake-model',
  displayName: 'Fake model',
  contextWindow: 10_000_000,
  capabilities: { toolUse: true, vision: false, streaming: true },
};
const ANSWER = [
  { type: 'text_delta', text: SHORT_TEXT },
  { type: 'usage', usage: USAGE },
  { type: 'done', stopReason: 'end_turn' },
];

async function* replay(events) {
  for (const event of events) yield event;
}

const asyncNoop = async () => undefined;
const storage = new InMemorySessionStorage();
const agent = await new AgentBuilder({ defaultModel: MODEL.id, maxActiveSessions: 4 })
  .registerModelProvider({ id: 'replay', models: [MODEL], chat: () => replay(ANSWER) })
  .registerPlugin({
    id: 'cold-hooks',
    displayName: 'Cold hooks',
    description: 'Taps the turn hooks with async handlers that do nothing, as the bench does.',
    initialize: asyncNoop,
    apply(context) {
      for (const event of ['TurnStart', 'TurnEnd', 'BeforeToolUse', 'AfterToolUse'])
        context.tap(event, asyncNoop);
    },
    shutdown: asyncNoop,
  })
  .registerSessionStorage(storage)
  .build();

/** W4's history as session events, as bench/runtimes/youyou.mjs saves it. */
function historyEvents() {
  const timestamp = new Date();
  const events = [
    { timestamp, payload: { type: 'metadata', key: 'session_config', value: { modelId: MODEL.id } } },
  ];
  for (const item of neutralHistory()) {
    if (item.kind === 'user' || item.kind === 'assistant') {
      const type = item.kind === 'user' ? 'user_message' : 'assistant_message';
      const payload = { type, content: [{ type: 'text', text: item.text }] };
      if (item.kind === 'assistant') payload.status = 'complete';
      events.push({ timestamp, payload });
    } else if (item.kind === 'tool_call') {
      const payload = {
        type: 'tool_call',
        callId: item.callId,
        toolName: item.toolName,
        arguments: { n: item.n },
      };
      events.push({ timestamp, payload });
    } else {
      const payload = { type: 'tool_result', callId: item.callId, content: item.text, isError: false };
      events.push({ timestamp, payload });
    }
  }
  return events;
}
const history = historyEvents();

const gcs = [];
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) gcs.push([entry.startTime, entry.startTime + entry.duration]);
}).observe({ entryTypes: ['gc'] });

const sweepBuffer = new Float64Array(16 * 131_072);
let sink = 0;
/** Writes or reads one double per 64-byte line of the first `megabytes` MB of the buffer. */
function sweep(megabytes, write) {
  const end = megabytes * 131_072;
  let sum = 0;
  for (let index = 0; index < end; index += 8) {
    if (write) sweepBuffer[index] = index;
    else sum += sweepBuffer[index] ?? 0;
  }
  sink += sum;
}

let sessions = 0;
async function saveHistory(sessionId, events) {
  for (const event of events) await storage.saveEvent(sessionId, event);
}

/** One timed turn in `session`: µs from sendMessage to its last event. */
async function timedTurn(session) {
  const started = performance.now();
  const turn = await session.sendMessage(USER_TEXT);
  for await (const event of turn) if (event.payload.type === 'error') throw event.payload.error;
  return [started, performance.now()];
}

const pool = [];
const setups = {
  small: async () => ({ resumed: await resumeNew([history[0]]) }),
  ...Object.fromEntries(
    [1, 2, 4, 16].flatMap((megabytes) => [
      [
        `write sweep ${megabytes} MB`,
        async () => ({ resumed: await resumeNew([history[0]]), beforeTurn: () => sweep(megabytes, true) }),
      ],
      [
        `read sweep ${megabytes} MB`,
        async () => ({ resumed: await resumeNew([history[0]]), beforeTurn: () => sweep(megabytes, false) }),
      ],
    ]),
  ),
  'save only': async () => {
    const other = `other-${sessions++}`;
    await saveHistory(other, history);
    return { resumed: await resumeNew([history[0]]), extra: other };
  },
  'resume only': async () => {
    const sessionId = pool.pop();
    return { resumed: { session: await agent.resumeSession(sessionId), sessionId } };
  },
  long: async () => ({ resumed: await resumeNew(history) }),
  'long, warm': async () => {
    const resumed = await resumeNew(history);
    const other = await resumeNew([history[0]]);
    await timedTurn(other.session);
    await other.session.close();
    await storage.deleteSession(other.sessionId);
    return { resumed };
  },
  'long, 3rd turn': async () => {
    const resumed = await resumeNew(history);
    await timedTurn(resumed.session);
    await timedTurn(resumed.session);
    return { resumed };
  },
};

async function resumeNew(events) {
  const sessionId = `cold-${sessions++}`;
  await saveHistory(sessionId, events);
  return { session: await agent.resumeSession(sessionId), sessionId };
}

async function run(setup) {
  const setupStarted = performance.now();
  const { resumed, beforeTurn, extra } = await setup();
  beforeTurn?.();
  const [started, ended] = await timedTurn(resumed.session);
  await resumed.session.close();
  await storage.deleteSession(resumed.sessionId);
  if (extra !== undefined) await storage.deleteSession(extra);
  return { setupStarted, started, ended };
}

const median = (values) => values.slice().sort((a, b) => a - b)[values.length >> 1];
/** Warm-up then RUNS runs of one setup; prints its line. */
async function measure(name) {
  const setup = setups[name];
  if (name === 'resume only') {
    // A session of the pool per run, warm-up runs included (at most 1,000 of those).
    for (let index = 0; index < RUNS + 1_000; index++) {
      pool.push(`pool-${index}`);
      await saveHistory(`pool-${index}`, history);
    }
  }
  const warmStarted = performance.now();
  // The pool's variant keeps RUNS sessions for the measured runs.
  while (performance.now() - warmStarted < WARMUP_MS && (name !== 'resume only' || pool.length > RUNS)) {
    await run(setup);
  }
  const runs = [];
  for (let index = 0; index < RUNS; index++) runs.push(await run(setup));
  await new Promise((resolve) => setTimeout(resolve, 20));
  const clean = runs.filter((r) => !gcs.some(([start, end]) => end > r.setupStarted && start < r.ended));
  const micros = (values) => (values.length === 0 ? '-' : (median(values) * 1000).toFixed(1));
  console.log(
    `${name.padEnd(18)} turn ${micros(clean.map((r) => r.ended - r.started)).padStart(6)} µs` +
      ` (all runs ${micros(runs.map((r) => r.ended - r.started))} µs; ${runs.length - clean.length} with a gc left out)`,
  );
}

if (process.env.BENCH_COLD_CHILD !== undefined) {
  await measure(process.env.BENCH_COLD_CHILD);
  if (sink === 0.5) console.log(sink);
  await agent.shutdown();
} else {
  await agent.shutdown();
  const only = process.env.BENCH_COLD_ONLY?.split('|');
  for (const name of Object.keys(setups).filter((setup) => only === undefined || only.includes(setup))) {
    const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), String(RUNS)], {
      env: { ...process.env, BENCH_COLD_CHILD: name },
      encoding: 'utf8',
    });
    process.stdout.write(child.status === 0 ? child.stdout : `${name}: failed\n${child.stderr}`);
  }
}
