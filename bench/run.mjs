/**
 * `npm run bench` from the root: runs every runtime's workloads in fresh child processes (node
 * --expose-gc; one for W1–W4, one for W5), repeats the whole run three times, prints two markdown tables
 * (steady state, the headline; cold, a gc before every run) and the goals, and writes them to
 * bench/RESULTS.md with the machine, the Node version and the package versions. Progress goes to stderr.
 *
 * Options: --quick (fewer runs, one repeat: a smoke test, not a measurement), --repeats N,
 * --only name[,name] (runtimes by file name in bench/runtimes), --raw FILE (the results as JSON too),
 * --from-raw FILE (no run: the report of a run saved with --raw), --out FILE (instead of bench/RESULTS.md).
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { format, makeReport } from './lib/report.mjs';
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

function runDriver(file, phase) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', join(here, 'driver.mjs'), file, phase], {
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
      if (code !== 0) reject(new Error(`${file} ${phase}: the driver exited with code ${code}`));
      else resolve(JSON.parse(output.trim().split('\n').at(-1)));
    });
  });
}

const saved =
  option('--from-raw') === undefined ? undefined : JSON.parse(readFileSync(option('--from-raw'), 'utf8'));
const startedAt = saved?.startedAt ?? Date.now();
/** results[file] = one `{ main, durable }` per repeat. */
const results = saved?.results ?? Object.fromEntries(runtimes.map((runtime) => [runtime.file, []]));
for (let repeat = 1; saved === undefined && repeat <= repeats; repeat++) {
  for (const runtime of runtimes) {
    process.stderr.write(`[run ${repeat}/${repeats}] ${runtime.file} `);
    const started = Date.now();
    const main = await runDriver(runtime.file, 'main');
    const durable = await runDriver(runtime.file, 'durable');
    results[runtime.file].push({ main, durable });
    process.stderr.write(` ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  }
}
const seconds = saved?.seconds ?? (Date.now() - startedAt) / 1000;
for (const runtime of runtimes) runtime.version = version(runtime.package);
if (saved !== undefined)
  runtimes.splice(0, runtimes.length, ...runtimes.filter((runtime) => runtime.file in results));

/** The repeats in the results (another number than --repeats for a saved run). */
const measured = results[runtimes[0].file].length;
const { table, timerFloor, goals } = makeReport({ runtimes, results, repeats: measured });

function timerFloorLine(state) {
  const floor = timerFloor(state);
  if (floor === undefined) return '';
  const spread = measured > 1 ? ` [${format(floor.min)}–${format(floor.max)}]` : '';
  return `W3's floor here: its ${PARALLEL_CALLS} timers alone (\`Promise.all\` of ${PARALLEL_CALLS} \`setTimeout\` of ${PARALLEL_DELAY_MS} ms, no loop, no model), measured the same way, take ${format(floor.median)} ms${spread}.`;
}

const cpus = os.cpus();
const machine = `${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ${os.type()} ${os.release()} ${os.arch()}`;
const counts = quick
  ? 'quick mode: few runs, not a measurement'
  : 'W1 and W2 20 runs, W3 15, W4 60 per variant, W5 8, after a full gc and at least 5 warm-up runs and 1 s of them';
const legend = `Each cell: the median over ${measured} full run${measured > 1 ? 's' : ''} of each workload's median (${counts}), \`(×n)\` the median of its ratios to the bare loop's figure of the same run, \`[min–max]\` the spread of the ${measured} runs' figures.
W1: one turn of ${STREAM_DELTAS.toLocaleString('en')} text deltas of 4 characters. W2: one turn of ${TOOL_STEPS} steps with one call each to an async tool, then a final answer (the turn's time / ${TOOL_STEPS}). W3: one step of ${PARALLEL_CALLS} calls to a read-only tool awaiting a ${PARALLEL_DELAY_MS} ms timer. W4: one turn with one delta after ${HISTORY_MESSAGES.toLocaleString('en')} earlier messages and on an empty history; µs/msg = the difference / ${HISTORY_MESSAGES.toLocaleString('en')}. W5: W2 with every message written to a SQLite file as the runtime persists it (\`@youyou/sqlite\` for \`@youyou/agent\`; for the others a one-table log through their own persistence hook, see below). Peak RSS: the child process's maximum resident set, W1–W4 in one process, W5 in another.`;

const steadyTable = table('steady');
const coldTable = table('cold');
const goalLines = goals();
const report = `# Benchmark results

${new Date(startedAt).toISOString().slice(0, 16).replace('T', ' ')} UTC · ${machine} · Node ${process.version} · ${seconds.toFixed(0)} s

## Steady state (the headline)

Measured runs back to back after the warm-up, with no forced gc between them (one before each workload).

${steadyTable}

${timerFloorLine('steady')}

### Goals (issue 13), on this table, each a median of ratios taken within one run [min–max over the runs]

${goalLines.join('\n')}

## Cold (a full gc before every run)

The same workloads in the same processes, right after the steady runs, each run after a full gc.

${coldTable}

${timerFloorLine('cold')}

${legend}

Setup: every runtime replays the same pre-built answers from an in-process fake model and its consumer reads every event; each run is checked (final text, tool-call count). Every runtime's tools are async functions, and every runtime's turn and tool hooks, where it has them, are async functions that do nothing. \`@youyou/agent\`: public API only; a plugin tapping TurnStart, TurnEnd, BeforeToolUse and AfterToolUse, an \`InMemorySessionStorage\` written through the public \`saveEvent\` port (W5: \`@youyou/sqlite\` in a file), tools with a JSON schema, a usage event in every answer; one agent per process, a new session per run. \`ai\`: \`streamText\` with \`MockLanguageModelV3\` (its stream filled up front), zod tools, \`experimental_onStart\`, \`onFinish\`, \`experimental_onToolCallStart\` and \`experimental_onToolCallFinish\` callbacks, \`fullStream\` read; W5: it has no storage, so \`onStepFinish\` writes each step's new messages (after the step's tools ran). \`@openai/agents\`: \`run(..., { stream: true })\` with a fake \`Model\`, zod tools, listeners on the agent's four lifecycle events (not awaited by the SDK), tracing off (it would export over the network); W5: a \`Session\` (its persistence port; it ships only an in-memory one and a server-side one) over the SQLite log, passed to \`run\`. \`@mariozechner/pi-agent-core\`: its \`Agent\` with a custom stream function, TypeBox tools, \`beforeToolCall\`/\`afterToolCall\`, a subscribed listener; W5: it has no storage, so a second listener writes each message at \`message_end\` (a tool call's message ends before its tool runs). The SQLite log of the bare loop and the peers (bench/lib/sqlite-log.mjs) uses the same driver and settings as \`@youyou/sqlite\` (better-sqlite3, WAL, synchronous=NORMAL) and one row per message; it keeps no search index or session list, so it does less per message than \`@youyou/sqlite\`. The machine is shared: the spread is the part to trust least.

Packages: ${runtimes
  .filter((runtime) => runtime.package !== undefined)
  .map((runtime) => `${results[runtime.file][0].main.runtime} ${runtime.version}`)
  .join(
    ', ',
  )}, @mariozechner/pi-ai ${version('node_modules/@mariozechner/pi-ai/package.json')}, zod ${version('node_modules/zod/package.json')}, better-sqlite3 ${version('../node_modules/better-sqlite3/package.json')}.
`;
process.stdout.write(
  `\nSteady state:\n${steadyTable}\n\n${goalLines.join('\n')}\n\nCold (gc before every run):\n${coldTable}\n`,
);
if (option('--raw') !== undefined)
  writeFileSync(option('--raw'), JSON.stringify({ startedAt, seconds, results }));
if (option('--out') !== undefined || (!quick && option('--only') === undefined)) {
  const out = option('--out') ?? join(here, 'RESULTS.md');
  writeFileSync(out, report);
  process.stderr.write(`written to ${out}\n`);
}
