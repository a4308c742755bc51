/**
 * Compares two builds of @youyou/agent on one workload: `node bench/compare.mjs <workload> <distA> <distB>
 * [rounds]` (a dist is the absolute path of a build's `packages/agent/dist/index.js`; the workloads are
 * profile.mjs's: stream, toolLoop, parallel, historyEmpty, historyLong, durable). Each round runs A then B in
 * fresh processes, so that a change of the machine's load falls on both; it prints the median time of a run
 * and its CPU time for each build, and B's ratio to A. For finding out whether a change helps, not for the
 * table: that is run.mjs, side by side with the peers.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { workloadByName } from './lib/workloads.mjs';

const RUNS_PER_PROCESS = 200;
const WARMUP_MS = 1_000;

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
  process.stdout.write(`${JSON.stringify({ ms: median(times), cpuMs })}\n`);
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
        env: { ...process.env, BENCH_COMPARE_CHILD: '1', BENCH_YOUYOU_DIST: dist },
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
    cpuMs: median(results[label].map((result) => result.cpuMs)),
  });
  const a = summary('A');
  const b = summary('B');
  const micros = (ms) => `${(ms * 1000).toFixed(1)} µs`;
  console.log(
    `${workload}: A ${micros(a.ms)} (CPU ${micros(a.cpuMs)} per run) · B ${micros(b.ms)} (CPU ${micros(b.cpuMs)})`,
  );
  console.log(`B / A: time ${(b.ms / a.ms).toFixed(3)}×, CPU ${(b.cpuMs / a.cpuMs).toFixed(3)}×`);
}
