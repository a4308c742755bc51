/**
 * Compares two builds of @youyou/agent on one workload: `node bench/compare.mjs <workload> <distA> <distB>
 * [rounds]` (a dist is the absolute path of a build's `packages/agent/dist/index.js`; the workloads are
 * profile.mjs's: stream, toolLoop, parallel, historyEmpty, historyLong, durable). Each round runs A then B in
 * fresh processes, so that a change of the machine's load falls on both; it prints the median time of a run
 * and its CPU time for each build, and B's ratio to A. For finding out whether a change helps, not for the
 * table: that is run.mjs, side by side with the peers. When a dist sits in a checkout
 * (`…/packages/agent/dist/index.js`), that checkout's `packages/sqlite/dist/index.js` is the durable workload's
 * storage, so that A/B of W5 compares the two builds of both packages. It prints the mean time of a run too: a
 * run that holds a WAL checkpoint (W5) is far slower than one that does not, and the median leaves them out.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { workloadByName } from './lib/workloads.mjs';

const RUNS_PER_PROCESS = 200;
const WARMUP_MS = 1_000;

/** The @youyou/sqlite build beside an @youyou/agent build in the same checkout, if there is one. */
function sqliteDistBeside(agentDist) {
  const suffix = '/packages/agent/dist/index.js';
  if (!agentDist.endsWith(suffix)) return undefined;
  const sqliteDist = `${agentDist.slice(0, -suffix.length)}/packages/sqlite/dist/index.js`;
  return existsSync(sqliteDist) ? sqliteDist : undefined;
}

function mean(values) {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

if (process.env.BENCH_COMPARE_CHILD === '1') {
  const [workload] = process.argv.slice(2);
  const module = await import('./runtimes/youyou.mjs');
  const run = workloadByName(module, workload);
  const started = performance.now();
  while (performance.now() - started < WARMUP_MS) await run();
  const times = [];
  const cpu = process.cpuUsage();
  for (let index = 0; index < RUNS_PER_PROCESS; index++) times.push((await run()).ms);
  const used = process.cpuUsage(cpu);
  await module.close?.();
  const cpuMs = (used.user + used.system) / 1000 / RUNS_PER_PROCESS;
  process.stdout.write(`${JSON.stringify({ ms: median(times), msMean: mean(times), cpuMs })}\n`);
} else {
  const [workload, distA, distB, rounds = '5'] = process.argv.slice(2);
  if (workload === undefined || distA === undefined || distB === undefined) {
    console.error('usage: node bench/compare.mjs <workload> <distA> <distB> [rounds]');
    process.exit(2);
  }
  workloadByName({ workloads: {} }, workload);
  const results = { A: [], B: [] };
  for (let round = 0; round < Number(rounds); round++) {
    for (const [label, dist] of [
      ['A', distA],
      ['B', distB],
    ]) {
      const child = spawnSync(process.execPath, [fileURLToPath(import.meta.url), workload], {
        env: {
          ...process.env,
          BENCH_COMPARE_CHILD: '1',
          BENCH_YOUYOU_DIST: dist,
          ...(sqliteDistBeside(dist) === undefined
            ? {}
            : { BENCH_YOUYOU_SQLITE_DIST: sqliteDistBeside(dist) }),
        },
        encoding: 'utf8',
      });
      if (child.status !== 0) {
        console.error(child.stderr);
        process.exit(1);
      }
      results[label].push(JSON.parse(child.stdout.trim().split('\n').at(-1)));
    }
    process.stderr.write('.');
  }
  process.stderr.write('\n');
  const summary = (label) => ({
    ms: median(results[label].map((result) => result.ms)),
    msMean: median(results[label].map((result) => result.msMean)),
    cpuMs: median(results[label].map((result) => result.cpuMs)),
  });
  const a = summary('A');
  const b = summary('B');
  const micros = (ms) => `${(ms * 1000).toFixed(1)} µs`;
  console.log(
    `${workload}: A ${micros(a.ms)} (mean ${micros(a.msMean)}, CPU ${micros(a.cpuMs)} per run) · B ${micros(b.ms)} (mean ${micros(b.msMean)}, CPU ${micros(b.cpuMs)})`,
  );
  console.log(
    `B / A: time ${(b.ms / a.ms).toFixed(3)}× (mean ${(b.msMean / a.msMean).toFixed(3)}×), CPU ${(b.cpuMs / a.cpuMs).toFixed(3)}×`,
  );
}
