/**
 * `npm run bench` from the root: runs every runtime's workloads in a fresh child process (node
 * --expose-gc), repeats the whole run three times, prints one markdown table and writes it to
 * bench/RESULTS.md with the machine, the Node version and the package versions. Progress goes to stderr.
 *
 * Options: --quick (fewer runs, one repeat: a smoke test, not a measurement), --repeats N,
 * --only name[,name] (runtimes by file name in bench/runtimes).
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  HISTORY_MESSAGES,
  PARALLEL_CALLS,
  PARALLEL_DELAY_MS,
  STREAM_DELTAS,
  TOOL_STEPS,
} from './lib/workloads.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name) => {
  const index = args.indexOf(name);
  return index === -1 ? undefined : args[index + 1];
};
const quick = args.includes('--quick');
const repeats = Number(option('--repeats') ?? (quick ? 1 : 3));
const runtimes = [
  { file: 'baseline', package: undefined },
  { file: 'youyou', package: '../packages/agent/package.json' },
  { file: 'ai-sdk', package: 'node_modules/ai/package.json' },
  { file: 'openai-agents', package: 'node_modules/@openai/agents/package.json' },
  { file: 'pi-agent', package: 'node_modules/@mariozechner/pi-agent-core/package.json' },
].filter((runtime) => option('--only') === undefined || option('--only').split(',').includes(runtime.file));

function version(packageFile) {
  if (packageFile === undefined) return '—';
  return JSON.parse(readFileSync(join(here, packageFile), 'utf8')).version;
}

function runDriver(file) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', join(here, 'driver.mjs'), file], {
      cwd: here,
      env: { ...process.env, BENCH_QUICK: quick ? '1' : '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${file}: the driver exited with code ${code}`));
      else resolve(JSON.parse(output.trim().split('\n').at(-1)));
    });
  });
}

const startedAt = Date.now();
/** results[file] = one driver result per repeat. */
const results = Object.fromEntries(runtimes.map((runtime) => [runtime.file, []]));
for (let repeat = 1; repeat <= repeats; repeat++) {
  for (const runtime of runtimes) {
    process.stderr.write(`[run ${repeat}/${repeats}] ${runtime.file} `);
    const started = Date.now();
    results[runtime.file].push(await runDriver(runtime.file));
    process.stderr.write(` ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  }
}

// The metrics of the table, each read from one driver result.
const metrics = {
  delta: (r) => (r.stream.ms * 1000) / STREAM_DELTAS,
  first: (r) => r.stream.firstMs,
  tool: (r) => (r.toolLoop.ms * 1000) / TOOL_STEPS,
  parallel: (r) => r.parallel.ms,
  inFlight: (r) => r.parallel.maxInFlight,
  empty: (r) => r.historyEmpty.ms * 1000,
  long: (r) => r.historyLong.ms * 1000,
  growth: (r) => ((r.historyLong.ms - r.historyEmpty.ms) * 1000) / HISTORY_MESSAGES,
  durable: (r) =>
    r.durable === undefined || r.durable.unavailable ? undefined : (r.durable.ms * 1000) / TOOL_STEPS,
  rss: (r) => r.peakRssMb,
  timerFloor: (r) => r.timerFloor?.ms,
};

function median(values) {
  const sorted = values.filter((value) => value !== undefined).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const hasBaseline = results.baseline !== undefined;

function stats(file, metric) {
  const values = results[file].map(metrics[metric]).filter((value) => value !== undefined);
  if (values.length === 0) return undefined;
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

function format(value) {
  if (value >= 100) return value.toFixed(0);
  if (value >= 10) return value.toFixed(1);
  if (value >= 1) return value.toFixed(2);
  return value.toFixed(3);
}

/**
 * `median (×ratio) [min–max]`. The ratio is to `reference` when given, else to the baseline's median of
 * the same metric when `ratio` is set (and the row is not the baseline's own).
 */
function cell(file, metric, { ratio = false, reference, spread = true } = {}) {
  const value = stats(file, metric);
  if (value === undefined) return results[file][0].durable?.unavailable ? 'not available' : '—';
  let text = format(value.median);
  let base = reference;
  if (base === undefined && ratio && hasBaseline && file !== 'baseline')
    base = stats('baseline', metric)?.median;
  if (base !== undefined && base > 0) {
    // Two decimals near 1, where a goal such as W3's 1.1× would otherwise hide in the rounding.
    const ratioValue = value.median / base;
    text += ` (${ratioValue < 2 ? ratioValue.toFixed(2) : ratioValue.toFixed(1)}×)`;
  }
  if (spread && repeats > 1) text += ` [${format(value.min)}–${format(value.max)}]`;
  return text;
}

const header = [
  'runtime',
  'version',
  'W1 µs/delta',
  'W1 first delta ms',
  'W2 µs/tool round-trip',
  `W3 wall ms (ideal ${PARALLEL_DELAY_MS})`,
  'W3 max in flight',
  'W4 turn µs, empty',
  `W4 turn µs, ${HISTORY_MESSAGES.toLocaleString('en')} msgs`,
  'W4 µs/msg',
  'W5 µs/tool round-trip, SQLite',
  'peak RSS MB',
];
const rows = runtimes.map((runtime) => {
  const file = runtime.file;
  const name = results[file][0].runtime;
  return [
    file === 'baseline' ? name : `\`${name}\``,
    version(runtime.package),
    cell(file, 'delta', { ratio: true }),
    cell(file, 'first'),
    cell(file, 'tool', { ratio: true }),
    cell(file, 'parallel', { reference: PARALLEL_DELAY_MS }),
    cell(file, 'inFlight', { spread: false }),
    cell(file, 'empty', { ratio: true }),
    cell(file, 'long', { ratio: true }),
    cell(file, 'growth'),
    cell(file, 'durable', { reference: hasBaseline ? stats('baseline', 'tool')?.median : undefined }),
    cell(file, 'rss'),
  ];
});
const table = [
  `| ${header.join(' | ')} |`,
  `|${header.map((_, index) => (index < 2 ? '---' : '---:')).join('|')}|`,
  ...rows.map((row) => `| ${row.join(' | ')} |`),
].join('\n');

/** W3's floor on this machine: its timers alone, measured by the baseline's driver under the same conditions. */
function timerFloorLine() {
  if (!hasBaseline) return '';
  const floor = stats('baseline', 'timerFloor');
  if (floor === undefined) return '';
  const spread = repeats > 1 ? ` [${format(floor.min)}–${format(floor.max)}]` : '';
  return `\nW3's floor here: its ${PARALLEL_CALLS} timers alone (\`Promise.all\` of ${PARALLEL_CALLS} \`setTimeout\` of ${PARALLEL_DELAY_MS} ms, no loop, no model), measured the same way, take ${format(floor.median)} ms (${(floor.median / PARALLEL_DELAY_MS).toFixed(2)}× the ideal)${spread}.`;
}

const cpus = os.cpus();
const machine = `${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.type()} ${os.release()} ${os.arch()}`;
const legend = `Each cell: the median over ${repeats} full run${repeats > 1 ? 's' : ''} of each workload's median (${quick ? 'quick mode: few runs, not a measurement' : 'W1 and W2 20 runs, W3 15, W4 60 per variant, W5 8, after at least 5 warm-up runs and 1 s of them, with a full gc before each run'}), \`(×n)\` its ratio to the baseline (W3: to the ideal ${PARALLEL_DELAY_MS} ms; W5: to the baseline's W2), \`[min–max]\` the spread of the ${repeats} runs.
W1: one turn of ${STREAM_DELTAS.toLocaleString('en')} text deltas of 4 characters. W2: one turn of ${TOOL_STEPS} steps with one call each to a synchronous tool, then a final answer (the turn's time / ${TOOL_STEPS}). W3: one step of ${PARALLEL_CALLS} calls to a read-only tool awaiting a ${PARALLEL_DELAY_MS} ms timer. W4: one turn with one delta after ${HISTORY_MESSAGES.toLocaleString('en')} earlier messages and on an empty history; µs/msg = the difference / ${HISTORY_MESSAGES.toLocaleString('en')}. W5: W2 with \`@youyou/sqlite\` as the session storage. Peak RSS: the runtime's child process, all workloads.${timerFloorLine()}`;

const report = `# Benchmark results

${new Date(startedAt).toISOString().slice(0, 10)} · ${machine} · Node ${process.version} · ${((Date.now() - startedAt) / 1000).toFixed(0)} s

${table}

${legend}

Setup: every runtime replays the same pre-built answers from an in-process fake model and its consumer reads every event; each run is checked (final text, tool-call count). \`@youyou/agent\`: a plugin tapping TurnStart, TurnEnd, BeforeToolUse and AfterToolUse with no-op handlers, \`InMemorySessionStorage\` (W5: \`@youyou/sqlite\` in a file), tools with a JSON schema, a usage event in every answer; one agent per process, a new session per run. \`ai\`: \`streamText\` with \`MockLanguageModelV3\` (its stream filled up front), zod tools, \`fullStream\` read. \`@openai/agents\`: \`run(..., { stream: true })\` with a fake \`Model\`, zod tools, tracing off (it would export over the network). \`@mariozechner/pi-agent-core\`: its \`Agent\` with a custom stream function, TypeBox tools, a subscribed listener. The machine is shared: the spread is the part to trust least.

Packages: ${runtimes
  .filter((runtime) => runtime.package !== undefined)
  .map((runtime) => `${results[runtime.file][0].runtime} ${version(runtime.package)}`)
  .join(
    ', ',
  )}, @mariozechner/pi-ai ${version('node_modules/@mariozechner/pi-ai/package.json')}, zod ${version('node_modules/zod/package.json')}.
`;
process.stdout.write(`\n${table}\n\n${legend}\n`);
if (!quick && option('--only') === undefined) {
  writeFileSync(join(here, 'RESULTS.md'), report);
  process.stderr.write('written to bench/RESULTS.md\n');
}
