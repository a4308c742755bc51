/**
 * Where one workload of one runtime allocates: `node bench/allocations.mjs <runtime> <workload> [runs]` runs it
 * (after 30 warm-up runs) under V8's sampling heap profiler, counting what the minor and major gcs collected
 * too, and prints the functions by bytes allocated per run (their own allocations, not their callees'). Less is
 * less work for the gc; the profile is the same on a busy machine, which a timing is not.
 */
import { Session } from 'node:inspector/promises';
import { basename } from 'node:path';
import { workloadByName } from './lib/workloads.mjs';

const [runtime = 'youyou', workload = 'toolLoop', runs = '200', top = '40'] = process.argv.slice(2);
const module = await import(`./runtimes/${runtime}.mjs`);
const run = workloadByName(module, workload);
for (let index = 0; index < 30; index++) await run();

const session = new Session();
session.connect();
await session.post('HeapProfiler.enable');
await session.post('HeapProfiler.startSampling', {
  samplingInterval: 256,
  includeObjectsCollectedByMajorGC: true,
  includeObjectsCollectedByMinorGC: true,
});
for (let index = 0; index < Number(runs); index++) await run();
const { profile } = await session.post('HeapProfiler.stopSampling');
await module.close?.();

const bytesByFunction = new Map();
let total = 0;
const visit = (node) => {
  const frame = node.callFrame;
  const where = frame.url === '' ? '' : `${basename(frame.url)}:${frame.lineNumber + 1}`;
  const key = `${frame.functionName || '(anonymous)'} ${where}`.trim();
  total += node.selfSize;
  bytesByFunction.set(key, (bytesByFunction.get(key) ?? 0) + node.selfSize);
  for (const child of node.children) visit(child);
};
visit(profile.head);
const kilobytes = (bytes) => (bytes / Number(runs) / 1024).toFixed(2);
console.log(`${runtime} ${workload}: ${kilobytes(total)} KB allocated per run`);
const rows = [...bytesByFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(top));
for (const [key, bytes] of rows) console.log(`${kilobytes(bytes).padStart(9)} KB  ${key}`);
