// Measuring helpers of the scale-out bench: percentiles and medians, a server process's counters over IPC,
// and the CPU time of the PostgreSQL backends that serve the bench's server processes.
import { readFile } from 'node:fs/promises';

/** The p-th percentile (nearest rank) of `values`; NaN when empty. */
export function percentile(values, p) {
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/** The median of `values` (the mean of the two middle ones for an even count); NaN when empty. */
export function median(values) {
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Asks a server process for its counters (CPU time, queries, pool waits); undefined if it does not answer. */
export function askStats(child, timeoutMs = 2_000) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.off('message', onMessage);
      resolve(undefined);
    }, timeoutMs);
    const onMessage = (message) => {
      if (message?.type !== 'stats') return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(message);
    };
    child.on('message', onMessage);
    child.send({ type: 'stats' });
  });
}

/** The difference of two stats answers of one process (the run's share), numbers only. */
export function statsDelta(end, start) {
  if (end === undefined || start === undefined) return undefined;
  const byKind = {};
  for (const [kind, count] of Object.entries(end.byKind)) byKind[kind] = count - (start.byKind[kind] ?? 0);
  return {
    cpuMs: end.cpuMs - start.cpuMs,
    queries: end.queries - start.queries,
    queryMs: end.queryMs - start.queryMs,
    poolWaits: end.poolWaits - start.poolWaits,
    poolWaitMs: end.poolWaitMs - start.poolWaitMs,
    poolWaitMaxMs: end.poolWaitMaxMs,
    byKind,
  };
}

const CLOCK_TICKS_PER_SECOND = 100;

/** user + system CPU time of a process in ms from /proc (Linux); undefined when it cannot be read. */
async function processCpuMs(pid) {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the command name: state is field 3 of stat(5), utime 14 and stime 15.
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/**
 * Samples, every `intervalMs`, the CPU time of the PostgreSQL backends whose application_name starts with
 * `prefix` (the bench's server processes set it), read from /proc: only for a PostgreSQL on this machine.
 * Resolves after the first sample. A backend that exits between two samples loses at most one interval of
 * its time. `stop()` resolves with the ms these backends used since the first sample, or undefined when
 * /proc could not be read.
 */
export async function samplePostgresCpu({ pool, prefix, intervalMs = 250 }) {
  const first = new Map();
  const last = new Map();
  let readable = false;
  let stopped = false;
  // `baseline`: backends seen by the first sample count from now; later ones started during the run.
  const sample = async (baseline) => {
    const result = await pool.query(
      'SELECT pid FROM pg_stat_activity WHERE starts_with(application_name, $1)',
      [prefix],
    );
    for (const { pid } of result.rows) {
      const ms = await processCpuMs(pid);
      if (ms === undefined) continue;
      readable = true;
      if (!first.has(pid)) first.set(pid, baseline ? ms : 0);
      last.set(pid, ms);
    }
  };
  await sample(true).catch(() => undefined);
  const loop = (async () => {
    while (!stopped) {
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
      await sample(false).catch(() => undefined);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      await sample(false).catch(() => undefined);
      if (!readable) return undefined;
      let total = 0;
      for (const [pid, ms] of last) total += ms - (first.get(pid) ?? 0);
      return total;
    },
  };
}
