/**
 * Runs the workloads of one runtime in this process and prints one JSON line of results on stdout.
 * Started by run.mjs as `node --expose-gc driver.mjs <runtime> <phase>`, a fresh process per runtime and
 * phase: `main` runs W1–W4, `durable` runs W5 alone, so that the peak RSS of W1–W4 is every runtime's own
 * (W5 loads SQLite) and W5's is measured apart.
 */
import { check, FINAL_TEXT, PARALLEL_CALLS, SHORT_TEXT, streamDeltas, TOOL_STEPS } from './lib/workloads.mjs';

const runtimeName = process.argv[2];
const phase = process.argv[3] ?? 'main';
if (phase !== 'main' && phase !== 'durable') throw new Error(`unknown phase ${phase}: main or durable`);
const quick = process.env.BENCH_QUICK === '1';
if (typeof globalThis.gc !== 'function') throw new Error('run with --expose-gc');
const runtime = await import(`./runtimes/${runtimeName}.mjs`);

const expected = {
  stream: { text: streamDeltas().join(''), toolCalls: 0 },
  toolLoop: { text: FINAL_TEXT, toolCalls: TOOL_STEPS },
  parallel: { text: FINAL_TEXT, toolCalls: PARALLEL_CALLS },
  history: { text: SHORT_TEXT, toolCalls: 0 },
  durable: { text: FINAL_TEXT, toolCalls: TOOL_STEPS },
  timerFloor: { text: '', toolCalls: 0 },
};

/**
 * Warm-up: at least this many runs and this long, so that every runtime is measured with its code compiled by
 * the optimizing JIT (a few runs left the tool loop of some runtimes half-compiled: the measured runs then
 * timed V8's tiers, not the runtime), and at most WARMUP_MAX_RUNS runs.
 */
const WARMUP_MIN_RUNS = 5;
const WARMUP_MS = 1_000;
// BENCH_WARMUP_MAX_RUNS raises the cap for a diagnostic run: a workload of a few µs reaches the cap long before
// WARMUP_MS, so it is measured before the optimizing JIT has compiled all of a large runtime's turn.
const WARMUP_MAX_RUNS = Number(process.env.BENCH_WARMUP_MAX_RUNS ?? 1_000);

/**
 * One workload: a full gc, warm-up runs, then `runs` measured runs back to back with no forced gc (steady
 * state: the headline), then `runs` measured runs with a full gc before each (the cold case: each run
 * starts from a collected heap, as after an idle host's gc). Every run is checked.
 */
async function measure(run, runs, check) {
  const once = async (collect) => {
    if (collect) globalThis.gc();
    const cpu = process.cpuUsage();
    const result = await run();
    const used = process.cpuUsage(cpu);
    // CPU time of the whole run (setup included): steadier than wall time for comparing two builds.
    result.cpuMs = (used.user + used.system) / 1000;
    check(result);
    return result;
  };
  globalThis.gc();
  const warmupStarted = performance.now();
  for (let index = 0; index < (quick ? 1 : WARMUP_MAX_RUNS); index++) {
    await once(false);
    if (quick || (index + 1 >= WARMUP_MIN_RUNS && performance.now() - warmupStarted >= WARMUP_MS)) break;
  }
  const steady = [];
  for (let index = 0; index < runs; index++) steady.push(await once(false));
  const cold = [];
  for (let index = 0; index < runs; index++) cold.push(await once(true));
  process.stderr.write('.');
  return { steady, cold };
}

function median(values) {
  const sorted = values.filter((value) => value !== undefined).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** The median of each field, and its minimum as `<field>Min` (steadier when the machine is busy). */
function summary(samples, fields) {
  const result = {};
  for (const field of fields) {
    const values = samples.map((sample) => sample[field]);
    result[field] = median(values);
    result[`${field}Min`] = Math.min(...values.filter((value) => value !== undefined));
  }
  return result;
}

/** The steady and the cold summary of one measured workload. */
function summaries(samples, fields) {
  return { steady: summary(samples.steady, fields), cold: summary(samples.cold, fields) };
}

const results = { runtime: runtime.name, phase };
const runs = (count) => (quick ? Math.max(3, Math.ceil(count / 5)) : count);
const w = runtime.workloads;
const checked = (key) => (result) => check(`${runtime.name} ${key}`, result, expected[key]);

if (phase === 'main') {
  results.stream = summaries(await measure(() => w.stream(), runs(20), checked('stream')), [
    'ms',
    'firstMs',
    'cpuMs',
  ]);
  results.toolLoop = summaries(await measure(() => w.toolLoop(), runs(20), checked('toolLoop')), [
    'ms',
    'cpuMs',
  ]);
  results.parallel = summaries(await measure(() => w.parallel(), runs(15), checked('parallel')), [
    'ms',
    'maxInFlight',
    'cpuMs',
  ]);
  results.historyEmpty = summaries(await measure(() => w.history(false), runs(60), checked('history')), [
    'ms',
  ]);
  results.historyLong = summaries(await measure(() => w.history(true), runs(60), checked('history')), [
    'ms',
    'cpuMs',
  ]);
  if (typeof w.timerFloor === 'function') {
    results.timerFloor = summaries(await measure(() => w.timerFloor(), runs(15), checked('timerFloor')), [
      'ms',
    ]);
  }
} else if (typeof w.durable === 'function') {
  const available = await w.durableAvailable?.();
  results.durable =
    available === false
      ? { unavailable: true }
      : summaries(await measure(() => w.durable(), runs(8), checked('durable')), ['ms', 'cpuMs']);
}
await runtime.close?.();
globalThis.gc();
results.peakRssMb = process.resourceUsage().maxRSS / 1024;
process.stdout.write(`${JSON.stringify(results)}\n`);
