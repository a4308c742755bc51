/**
 * Counts V8 deoptimizations while one workload of one runtime runs with a full gc before every run, as the
 * benchmark's cold table does: `node bench/deopts.mjs <runtime> <workload> [runs]` (workloads as in
 * profile.mjs). A function listed under "weak objects" lost its optimized code because something the code
 * relied on (most often the hidden class of a short-lived object) was collected; run after run, that means
 * running unoptimized again.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { workloadByName } from './lib/workloads.mjs';

const [runtime = 'youyou', workload = 'toolLoop', runs = '100'] = process.argv.slice(2);
const WARMUP = 20;

if (process.env.BENCH_DEOPTS_CHILD === '1') {
  const module = await import(`./runtimes/${runtime}.mjs`);
  const run = workloadByName(module, workload);
  for (let index = 0; index < WARMUP + Number(runs); index++) {
    globalThis.gc();
    if (index === WARMUP) console.log('--- measured runs from here');
    await run();
  }
  await module.close?.();
} else {
  const child = spawnSync(
    process.execPath,
    ['--expose-gc', '--trace-deopt', fileURLToPath(import.meta.url), runtime, workload, runs],
    { env: { ...process.env, BENCH_DEOPTS_CHILD: '1' }, encoding: 'utf8', maxBuffer: 1 << 28 },
  );
  if (child.status !== 0) {
    process.stderr.write(child.stderr);
    process.exit(child.status ?? 1);
  }
  const measured = child.stdout.split('--- measured runs from here')[1] ?? '';
  const byReason = new Map();
  for (const line of measured.split('\n')) {
    const marked =
      /<SharedFunctionInfo ([^>]*)>\) \(opt id \d+\) for deoptimization, reason: ([^\]]+)\]/.exec(line);
    const bailout = /\(kind: [^,]+, reason: ([^)]+)\): begin\. deoptimizing [^<]*<JSFunction ([^ >]*)/.exec(
      line,
    );
    const found = marked
      ? { fn: marked[1], reason: marked[2] }
      : bailout
        ? { fn: bailout[2], reason: bailout[1] }
        : undefined;
    if (found === undefined) continue;
    const counts = byReason.get(found.reason) ?? new Map();
    counts.set(found.fn || '(anonymous)', (counts.get(found.fn || '(anonymous)') ?? 0) + 1);
    byReason.set(found.reason, counts);
  }
  console.log(`${runtime} ${workload}: deoptimizations in ${runs} runs after ${WARMUP} warm-up runs`);
  if (byReason.size === 0) console.log('none');
  for (const [reason, counts] of byReason) {
    const total = [...counts.values()].reduce((sum, count) => sum + count, 0);
    console.log(`${reason}: ${total}`);
    for (const [fn, count] of [...counts.entries()].sort((a, b) => b[1] - a[1])) {
      console.log(`  ${String(count).padStart(5)}  ${fn}`);
    }
  }
}
