/**
 * Profiles one workload of one runtime: `node bench/profile.mjs <runtime> <workload> [runs]` runs it
 * under `node --cpu-prof` and prints the top functions by self time (the workload: stream, toolLoop,
 * parallel, historyEmpty, historyLong, durable).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { workloadByName } from './lib/workloads.mjs';

const [runtime = 'youyou', workload = 'stream', runs = '50', top = '25'] = process.argv.slice(2);

if (process.env.BENCH_PROFILE_CHILD === '1') {
  const module = await import(`./runtimes/${runtime}.mjs`);
  const run = workloadByName(module, workload);
  for (let index = 0; index < Number(runs); index++) await run();
  await module.close?.();
} else {
  const directory = mkdtempSync(join(tmpdir(), 'bench-prof-'));
  const child = spawnSync(
    process.execPath,
    ['--cpu-prof', `--cpu-prof-dir=${directory}`, fileURLToPath(import.meta.url), runtime, workload, runs],
    { env: { ...process.env, BENCH_PROFILE_CHILD: '1' }, stdio: 'inherit' },
  );
  if (child.status !== 0) process.exit(child.status ?? 1);
  const file = join(
    directory,
    readdirSync(directory).find((name) => name.endsWith('.cpuprofile')),
  );
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const self = new Map();
  const deltas = profile.timeDeltas;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  let total = 0;
  profile.samples.forEach((id, index) => {
    const node = byId.get(id);
    const frame = node.callFrame;
    const where = frame.url === '' ? '' : `${basename(frame.url)}:${frame.lineNumber + 1}`;
    const key = `${frame.functionName || '(anonymous)'} ${where}`.trim();
    const time = deltas[index] ?? 0;
    total += time;
    self.set(key, (self.get(key) ?? 0) + time);
  });
  const rows = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(top));
  console.log(`${runtime} ${workload} ×${runs}: ${(total / 1000).toFixed(0)} ms sampled (${file})`);
  console.log('self time:');
  for (const [key, time] of rows) console.log(`${((time / total) * 100).toFixed(1).padStart(5)}%  ${key}`);
  if (process.env.BENCH_PROFILE_INCLUSIVE === '1') {
    // Time including callees, per function (a recursive function counts once per stack).
    const hits = new Map(profile.nodes.map((node) => [node.id, 0]));
    profile.samples.forEach((id, index) => {
      hits.set(id, hits.get(id) + (deltas[index] ?? 0));
    });
    const parent = new Map();
    for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
    const inclusive = new Map();
    for (const [id, time] of hits) {
      if (time === 0) continue;
      const keys = new Set();
      for (let at = id; at !== undefined; at = parent.get(at)) {
        const frame = byId.get(at).callFrame;
        if (frame.url === '') continue;
        keys.add(`${frame.functionName || '(anonymous)'} ${basename(frame.url)}:${frame.lineNumber + 1}`);
      }
      for (const key of keys) inclusive.set(key, (inclusive.get(key) ?? 0) + time);
    }
    console.log('inclusive time:');
    for (const [key, time] of [...inclusive.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(top)))
      console.log(`${((time / total) * 100).toFixed(1).padStart(5)}%  ${key}`);
  }
}
